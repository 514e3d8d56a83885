"""The config a session's state keeps, used while nothing it was read from has changed: the hooks' and
the status line's way to the config without importing `base.config` (its key table, the checks and
the TOML parser), which reads the files when the cache is stale (`config.load_cached`).

The cache holds the effective config and the stamp (path, mtime, size) of each thing it was made
from: the config files, the TTL cliffs `report` wrote, and `base/config.py` itself, whose key table
says which keys a config has (a cache another version of it kept is read again).
"""

from __future__ import annotations

import sys

from session_watcher.base import paths, sysos

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import Config, ConfigCache, ModelParams

KEY_TABLE = sysos.join(sysos.dirname(sysos.abspath(__file__)), "config.py")  # base.config's KEYS
HANDOFF_STALE_MIN = 180  # `handoff_stale_min`'s default (KEYS takes it from here): hooks.inject reads no key table


def stamp(project_dir: str | None) -> list[Any]:
    """[path, mtime in ns, size] of each file the config is made from (None, None: no such file)."""
    out: list[Any] = []
    for f in (*paths.config_places(project_dir), paths.cliff_file(), KEY_TABLE):
        try:
            st = sysos.stat(f)
            out.append([f, st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([f, None, None])
    return out


def cached(cache: ConfigCache, project_dir: str | None) -> Config | None:
    """The config `cache` (kept in the session state) holds while its stamp is the files' own, the
    user's prices handed to the core; None when it is stale."""
    values = cache.get("values")
    if cache.get("stamp") != stamp(project_dir) or not isinstance(values, dict):
        return None
    use_prices(values)
    return values


def kept_params(cache: ConfigCache, cfg: Config) -> ModelParams | None:
    """The model's parameters `cache` keeps with its config when `cfg` is that config (the one
    `cached` or `config.load_cached` gave), else None."""
    params = cache.get("params")
    return params if cfg is cache.get("values") and isinstance(params, dict) else None


def use_prices(cfg: Config) -> None:
    """Hand the core the user's prices (the config's `prices`; the core reads no config). No rows and
    no prices loaded yet: nothing to set or undo (the SessionStart hook giving a handoff prices nothing)."""
    rows = cfg.get("prices") or {}
    if not rows and "session_watcher.core.prices" not in sys.modules:
        return
    from session_watcher.core import prices

    prices.use(rows)
