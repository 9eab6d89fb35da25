from tlview.cli import main

raise SystemExit(main())
