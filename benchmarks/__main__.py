"""`python -m benchmarks NAME [args...]` runs benchmarks/NAME.py's main(args)."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks


def main() -> int:
    names = sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name != "__main__"
    )
    if len(sys.argv) < 2 or sys.argv[1] not in names:
        print("usage: python -m benchmarks NAME [args...]\n  NAME: " + " | ".join(names))
        return 2
    module = importlib.import_module(f"benchmarks.{sys.argv[1]}")
    return int(module.main(sys.argv[2:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
