"""`python -m hooks EVENT`: the hook process (see hooks.run)."""

from hooks.run import main

raise SystemExit(main())
