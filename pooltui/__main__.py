"""`python -m pooltui`: the command line, as the `pooltui` script runs it."""

from pooltui.cli.main import main

raise SystemExit(main())
