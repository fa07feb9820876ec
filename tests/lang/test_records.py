"""`record` behaves as `@dataclass(slots=True)` (frozen or not) does, for what the AST and
the IR use: construction, defaults, equality, hashing, repr, immutability, slots, pickling,
`dataclasses.fields` / `replace`, and `match`."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from pooltui.lang.records import record


@record(frozen=True)
class Point:
    """A frozen record with a default and a default factory."""

    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DPoint:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@record
class Node:
    name: str
    kids: list[str] = field(default_factory=list)


@record(frozen=True)
class Empty:
    pass


def test_construction_binds_like_a_dataclass() -> None:
    # Positional, keyword, mixed; defaults filled; each factory call is a new list.
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, [])
    p = Point(1, tags=["a"])
    assert (p.x, p.y, p.tags) == (1, 0, ["a"])
    assert Point(y=2, x=1) == Point(1, 2)
    assert Point(1).tags is not Point(1).tags
    with pytest.raises(TypeError, match="missing required argument: 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Point(1, z=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 arguments but 4 were given"):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    assert Empty() == Empty()


def test_equality_hash_and_repr_are_a_dataclass_s() -> None:
    # Equal when of the same class and equal field by field (a dataclass compares the
    # tuples of fields); the hash is the hash of that tuple, as the dataclass's is.
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != DPoint(1, 2)  # another class: not equal
    assert Point(1, 2, ["a"]).__eq__(object()) is NotImplemented
    d = DPoint(1, 2)
    assert repr(Point(1, 2)) == repr(d).replace("DPoint", "Point") == "Point(x=1, y=2, tags=[])"
    assert hash(Point(3, 4, None)) == hash(DPoint(3, 4, None)) == hash((3, 4, None))  # type: ignore[arg-type]
    assert hash(Empty()) == hash(())


def test_frozen_is_immutable_and_mutable_is_unhashable() -> None:
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x  # type: ignore[misc]
    n = Node("a")
    n.name = "b"
    assert n == Node("b")
    with pytest.raises(TypeError):
        hash(n)
    with pytest.raises(AttributeError):  # slots: no other attribute
        n.other = 1  # type: ignore[attr-defined]
    assert not hasattr(n, "__dict__") and Node.__slots__ == ("name", "kids")


def test_dataclasses_tools_and_match_work() -> None:
    p = Point(1, 2, ["t"])
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags"]
    q = dataclasses.replace(p, y=5)
    assert q == Point(1, 5, ["t"]) and q.tags is p.tags
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tags": ["t"]}
    match p:
        case Point(1, y):
            assert y == 2
        case _:  # pragma: no cover
            raise AssertionError("no match")


def test_records_pickle() -> None:
    for obj in (Point(1, 2, ["a"]), Node("n", ["k"]), Empty()):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and type(back) is type(obj)
