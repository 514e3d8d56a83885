"""`python -m session_watcher.hooks EVENT`: the hook process (see hooks.run)."""

from session_watcher.hooks.run import main

raise SystemExit(main())
