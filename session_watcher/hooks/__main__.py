"""`python -m session_watcher.hooks EVENT`: the hook process (see hooks.entry)."""

from session_watcher.hooks.entry import main

raise SystemExit(main())
