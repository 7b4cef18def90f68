from spark_tui.cli import main

raise SystemExit(main())
