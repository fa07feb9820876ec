"""An independent count of prefix-cache hits on a Mooncake trace, without the simulator.

    python -m benchmarks mooncake_hits                       # the conversation trace
    python -m benchmarks mooncake_hits --trace data/mooncake_synthetic.jsonl
    python -m benchmarks mooncake_hits --limit 500 --block 16

The model is the simplest cache there is, worked out from docs/language.md (content) and
the trace's own definition (data/README.md: equal `hash_ids` at equal positions mean an
equal prefix up to the end of that 512-token block):

- requests are served one at a time, in the trace's order, and nothing is ever evicted
  (an unbounded cache);
- request r's content is one piece per `hash_ids` element, `hash_ids[k] : 512`, then its
  own private tokens; so its block j (units [B·j, B·(j+1)), B dividing 512) is shared
  content only when it lies inside its pieces, and equals block j of an earlier request q
  exactly when q's piece list agrees with r's up to that piece;
- a request registers every block it computes: its prompt and its decode steps, so
  `input_length + output_length − 1` units (a prefill of the prompt, then max_tokens − 1
  decode steps; vLLM samples the first token in the prefill's last step), in whole blocks;
- its hit is the longest run of leading blocks that earlier requests registered, capped
  so that it never covers its last prompt unit: min(E, ⌊(input_length − 1)/B⌋·B).

The figure printed, hit units over prompt units asked, is what
`benchmarks/mooncake_unbounded.pool` (the same workload as a spec: cap inf, one seat,
everything arriving at 0) must report as its shared hit rate, to the unit.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIECE = 512


def expected_hits(rows: list[tuple[int, int, list[int]]], block: int) -> tuple[int, int, list[int]]:
    """(hit units, asked units, hit units per request) for requests served one at a time.

    `rows` are (input_length, output_length, hash_ids). A trie of registered pieces holds,
    per distinct piece prefix, how many of its leading units some request computed."""
    if PIECE % block:
        raise ValueError(f"the block ({block}) must divide the piece ({PIECE})")
    # (prefix of piece ids) -> units of the last piece that some request computed. Keyed by
    # a tuple of the ids so far: the trace's ids already stand for their whole prefix, but
    # the spec's content identity compares pieces one by one, so this does too.
    computed: dict[tuple[int, ...], int] = {}
    total_hit = 0
    total_asked = 0
    per_request: list[int] = []
    for prompt, output, ids in rows:
        # E: leading blocks registered by earlier requests.
        units_found = 0
        for k in range(len(ids)):
            done = computed.get(tuple(ids[: k + 1]), 0)
            units_found += (done // block) * block
            if done < PIECE:
                break
        cap = ((prompt - 1) // block) * block if prompt >= 1 else 0
        hit = min(units_found, cap)
        per_request.append(hit)
        total_hit += hit
        total_asked += prompt
        # Register what this request computes (its pieces' part of it).
        length = prompt + max(output, 1) - 1
        for k in range(len(ids)):
            inside = min(PIECE, length - k * PIECE)
            if inside <= 0:
                break
            key = tuple(ids[: k + 1])
            if inside > computed.get(key, 0):
                computed[key] = inside
    return total_hit, total_asked, per_request


def read_trace(path: Path, limit: int | None) -> list[tuple[int, int, list[int]]]:
    rows: list[tuple[int, int, list[int]]] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if limit is not None and len(rows) >= limit:
                break
            d = json.loads(line)
            rows.append((int(d["input_length"]), int(d["output_length"]), list(d["hash_ids"])))
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks mooncake_hits")
    ap.add_argument("--trace", default=str(ROOT / "data" / "mooncake_conversation.jsonl"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--block", type=int, default=16)
    args = ap.parse_args(argv)
    rows = read_trace(Path(args.trace), args.limit)
    hit, asked, _ = expected_hits(rows, args.block)
    print(
        f"{len(rows):,} requests, block {args.block}: {hit:,} of {asked:,} prompt units hit "
        f"({hit / asked:.2%}) with an unbounded cache, one request at a time"
    )
    return 0
