"""`record`: the dataclasses of the AST and the IR, made quickly at import.

`@dataclass` writes each class's methods as source text and compiles them one by one (six
compilations for a frozen class, and a signature for its docstring): over the sixty
classes of the AST and the IR, a good part of every command's start-up. `record` gives the
same methods without compiling anything: `__init__` (positional or keyword arguments,
defaults, `field(default_factory=...)`), `__repr__`, `__eq__`, `__hash__` (frozen: hashable,
immutable; else unhashable), `__match_args__`, slots and their pickling; it fills
`__dataclass_fields__` with `dataclasses.Field`s, so `dataclasses.fields`, `replace` and
`is_dataclass` work as on any dataclass, and the type checker sees a dataclass
(`typing.dataclass_transform`). Making an instance costs a little more than with a
compiled `__init__` (these are made while compiling a spec, not while simulating).

Fields are the class's own annotations, in order: no inheritance of fields, no `ClassVar`,
no keyword-only fields (none of these classes has them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")

_MISSING: Any = dataclasses.MISSING


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from an instance to its fields' values, as a tuple."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _make(cls: type, frozen: bool) -> type:
    names = tuple(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063 (own only; no import)
    fields: dict[str, dataclasses.Field[Any]] = {}
    defaults: list[Any] = []  # per field: a value, or _MISSING
    factories: list[Any] = []  # per field: a default factory, or None
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        f: dataclasses.Field[Any] = (
            value if isinstance(value, dataclasses.Field) else dataclasses.field(default=value)
        )
        f.name = name
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
        fields[name] = f
        defaults.append(f.default)
        factories.append(None if f.default_factory is _MISSING else f.default_factory)
    ns = {k: v for k, v in cls.__dict__.items() if k not in fields and k != "__dict__"}
    ns.pop("__weakref__", None)
    ns["__slots__"] = names
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    # The slots' own setters: they go past a frozen class's __setattr__, as dataclasses'
    # object.__setattr__ does.
    setters = [getattr(new, name).__set__ for name in names]
    n = len(names)
    qualname = cls.__qualname__
    values = _values(names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != n:
            args = _bind(qualname, names, defaults, factories, args, kwargs)
        for set_value, value in zip(setters, args, strict=True):
            set_value(self, value)

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(names, values(self), strict=True))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(values(self) == values(other))
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return values(self)

    def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
        for set_value, value in zip(setters, state, strict=True):
            set_value(self, value)

    methods: dict[str, Any] = {
        "__init__": __init__,
        "__repr__": __repr__,
        "__eq__": __eq__,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
        "__hash__": __hash__ if frozen else None,  # mutable: unhashable, as a dataclass
    }
    if frozen:
        methods["__setattr__"] = _frozen_setattr
        methods["__delattr__"] = _frozen_delattr
    for key, fn in methods.items():
        if fn is not None and fn not in (_frozen_setattr, _frozen_delattr):
            fn.__qualname__ = f"{qualname}.{key}"
        setattr(new, key, fn)
    setattr(new, "__match_args__", names)  # noqa: B010 (mypy: a class's match args are fixed)
    new.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    return new


def _bind(
    qualname: str,
    names: tuple[str, ...],
    defaults: list[Any],
    factories: list[Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, ...]:
    """The arguments of a call to `__init__`, one per field in order, as Python binds them."""
    if len(args) > len(names):
        raise TypeError(f"{qualname}() takes {len(names)} arguments but {len(args)} were given")
    out = list(args)
    for i in range(len(args), len(names)):
        name = names[i]
        if name in kwargs:
            out.append(kwargs.pop(name))
        elif factories[i] is not None:
            out.append(factories[i]())
        elif defaults[i] is not _MISSING:
            out.append(defaults[i])
        else:
            raise TypeError(f"{qualname}() missing required argument: {name!r}")
    if kwargs:
        name = next(iter(kwargs))
        twice = name in names[: len(args)]
        what = "got multiple values for argument" if twice else "got an unexpected keyword argument"
        raise TypeError(f"{qualname}() {what} {name!r}")
    return tuple(out)


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...
@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False) -> Any:
    """A dataclass with slots (`frozen`: immutable and hashable); see the module's docstring."""
    if cls is not None:
        return _make(cls, False)

    def wrap(c: type[T]) -> type[T]:
        made: type[T] = _make(c, frozen)
        return made

    return wrap
