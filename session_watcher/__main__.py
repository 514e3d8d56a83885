"""`python -m session_watcher`: the CLI (see session_watcher.cli)."""

from session_watcher.cli import run

run()
