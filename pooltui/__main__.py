from pooltui.cli.main import main

raise SystemExit(main())
