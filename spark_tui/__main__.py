from spark_tui.cli.main import main

raise SystemExit(main())
