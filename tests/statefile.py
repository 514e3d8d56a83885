"""Find and read a session's state as it is on disk, path-map shards merged: an independent reader for
tests, the one every test uses.

The main file `<id>.json` names its current shard files in `shards` ({shard: revision}); each
`<id>.paths/<NN>-<rev>.json` holds `segment`, `paths`, `reasons`, `readPaths`. Path entries of a
shard written in an older segment no longer count.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def sessions_dir(home: Path | None = None) -> Path:
    """The folder of the session state files under `home`, a SESSION_WATCHER_HOME (default: this
    process's). Spelled out here, independently of session_watcher.base.paths, so a layout change shows."""
    root = home if home is not None else Path(os.environ["SESSION_WATCHER_HOME"])
    return root / "state" / "sessions"


def state_file(session_id: str, home: Path | None = None) -> Path:
    """The session's main state file under `home`, a SESSION_WATCHER_HOME (default: this process's)."""
    return sessions_dir(home) / f"{session_id}.json"


def load_state(session_id: str, home: Path | None = None) -> dict[str, Any]:
    return read_state(state_file(session_id, home))


def read_state(main: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(main.read_bytes())
    folder = main.with_name(main.name[: -len(".json")] + ".paths")
    for shard, rev in state.get("shards", {}).items():
        doc = json.loads((folder / f"{int(shard):02d}-{rev}.json").read_bytes())
        for kind in ("reasons", "readPaths", "paths"):
            if kind == "paths" and doc["segment"] != state["engine"]["segment"]:
                continue
            state[kind].update(doc[kind])
    return state
