"""Register session-watcher's folding hooks in Codex's `$CODEX_HOME/hooks.json`, and take them out.

`python -m session_watcher.cli.install_codex add BIN_DIR` / `remove` (install.sh runs both where
Codex is present: `$CODEX_HOME` set or `~/.codex` there). Claude Code's merge rules
(session_watcher.cli.install): every other hook of the user's is kept, a backup is written before any
change and none when nothing changes, re-running changes nothing, and `remove` takes out exactly
what was added (recorded in `<data dir>/installed-codex.json`), the trust entries the install had
Codex write into its `config.toml` too (cli.codex_trust.untrust; the user's own kept, a backup first).

The hooks (agents.codex.hooks.EVENTS), each `hook EVENT codex`: PostToolUse, PostModelRequest
(every model call) and Stop fold, `"async": true` (Codex does not wait for them) and print nothing;
the fold is the hook process Claude Code runs (a Codex payload carries the same `session_id`,
`transcript_path` and `cwd`; the rollout is decoded by agents.codex.reader), its alerts go to the
desktop and are queued for the next prompt. UserPromptSubmit (the cold-cache guard, the queued
alert as `systemMessage`) and SessionStart (a fresh thread's pending handoff as
`additionalContext`) are synchronous and print one JSON object or nothing. Codex's handler schema
is strict (no `args`): the command is one shell string. Codex skips a hook it does not trust
(`codex exec` says nothing of it; 0.171.0's TUI asks at each start while one waits, "Hooks need
review", to review them, trust them all or go on without them): where a `codex` executable is found
the install has Codex trust them through its app-server (cli.codex_trust), else it says in one line
to trust them where the TUI asks, or in its `/hooks` screen.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any

from session_watcher.agents.codex import hooks as codex_hooks
from session_watcher.base import paths
from session_watcher.base.atomic import write_atomic
from session_watcher.cli import install as claude  # the settings merge's own rules (load, shape, backup, write)
from session_watcher.cli.agents_here import codex_home, codex_record  # `$CODEX_HOME`, else `~/.codex` when it exists
from session_watcher.cli.messages import json_text  # the one JSON writer (the install record)

EVENTS = tuple(event for event, _ in codex_hooks.EVENTS)
TIMEOUT = 10


def record_file() -> str:
    return codex_record()


def trust_file(hooks_file: str) -> str:
    """`hooks_file` as Codex names it in its hooks' trust keys (and `hooks/list`'s `sourcePath`): an
    absolute path whose folder is resolved where it is `$CODEX_HOME` (Codex canonicalizes that
    variable, links and all; `~/.codex` it takes as it is)."""
    folder = os.path.dirname(os.path.abspath(hooks_file))
    if os.environ.get("CODEX_HOME"):
        folder = os.path.realpath(folder)
    return os.path.join(os.path.normpath(folder), os.path.basename(hooks_file))


def entries(bin_dir: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) of each hook: the hook launcher with the event's name and `codex`, async
    unless Codex must wait for what it prints."""
    launch = claude._launch(bin_dir, "hook")
    return [(event, {"type": "command", "command": f"{launch} {event} {codex_hooks.AGENT}", "timeout": TIMEOUT,
                     "async": not sync})
            for event, sync in codex_hooks.EVENTS]


def add(bin_dir: str) -> int:
    home = codex_home()
    if home is None:
        from session_watcher.cli.agents_here import codex_executable

        exe = codex_executable()  # Codex installed, never run: its folder is made on its first run
        if exe is not None:
            folder = os.path.join(os.path.expanduser("~"), ".codex")
            claude.say(f"codex: {exe} is installed, but {folder} is not there yet (Codex makes it when it first "
                       "runs): run codex once, then ./install.sh again to add its hooks")
        return 0
    path = os.path.join(home, "hooks.json")
    before = claude._read_text(path)
    doc = claude._load(path)
    claude._check_shape(path, doc)
    prev = claude._load(record_file()) if os.path.exists(record_file()) else {}
    wanted = entries(bin_dir)
    keys = {claude.hook_key(h) for _, h in wanted}
    same = prev.get("hooksFile") == path
    # the file the install made (none was there): --uninstall deletes it when nothing else is in it;
    # so it does one an install recorded before records said so (no "created") where nothing but
    # that install's hooks is in it now: the file holds nothing of the user's
    created = before is None or (same and prev.get("created") is True) or (
        same and "created" not in prev
        and not claude._strip(copy.deepcopy(doc), {k for k in prev.get("hooks") or [] if isinstance(k, str)}))
    # an earlier install's hooks (another venv path) are replaced, not doubled
    claude._drop_hooks(doc, {k for k in prev.get("hooks") or [] if isinstance(k, str) and k not in keys})
    hooks = doc.setdefault("hooks", {})
    for event, entry in wanted:
        key = claude.hook_key(entry)
        groups = hooks.setdefault(event, [])
        mine = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if claude.hook_key(h) == key]
        if mine:
            mine[0].update(entry)
        else:
            groups.append({"hooks": [entry]})
    claude._write(path, doc, before)
    paths.ensure_private_dir(paths.data_dir())
    # the trust entries an earlier install wrote stay ours (a re-run finds them trusted already)
    earlier = prev.get("trusted") if same else None
    trusted: dict[str, Any] = earlier if isinstance(earlier, dict) else {}
    # Codex's config.toml, where the install made it (none was there): the same at --uninstall
    config = os.path.join(home, "config.toml")
    record: dict[str, Any] = {
        "hooksFile": path, "hooks": sorted(k for k in keys if k), "trusted": trusted,
        "created": created,
        "configCreated": not os.path.lexists(config) or (same and prev.get("configCreated") is True),
        "earlier": claude.earlier([prev], keys)}
    if trusted:
        record["trustedFor"] = _trusted_for(prev, keys, wanted)
    write_atomic(record_file(), (json_text(record, indent=2) + "\n").encode("utf-8"))
    from session_watcher.cli.codex_trust import trust

    got = trust(home, trust_file(path), {h["command"] for _, h in wanted})
    if got is None:
        # (Codex 0.171.0's TUI asks at every start while a hook waits for review; `codex exec` skips it unsaid)
        claude.say(f"codex: {path} (hooks: {', '.join(EVENTS)}); Codex runs a hook once you trust it: "
                   "Codex's TUI asks at its next start (\"Hooks need review\"), or open /hooks in Codex and "
                   f"trust session-watcher's {len(EVENTS)} hooks there (`codex exec` runs none before that, "
                   "and says nothing)")
        return 0
    # what --uninstall takes out of Codex's config.toml again, and the hooks it now trusts
    record["trusted"], record["trustedFor"] = {**trusted, **got[0]}, [h for _, h in wanted]
    write_atomic(record_file(), (json_text(record, indent=2) + "\n").encode("utf-8"))
    claude.say(f"codex: {path} (hooks: {', '.join(EVENTS)}); trusted through codex app-server "
               f"({len(got[0])} now, {got[1]} already)")
    return 0


def _trusted_for(prev: dict[str, Any], keys: set[str | None], wanted: list[tuple[str, dict[str, Any]]]) -> Any:
    """The hooks the recorded trust hashes were written for, as the earlier install of this hooks.json
    (`prev`) left them (one from before they were recorded: these, where its commands are these);
    doctor reads the hashes as trust of ours only while ours are still those hooks."""
    if "trustedFor" in prev:
        return prev["trustedFor"]
    same = sorted(k for k in prev.get("hooks") or [] if isinstance(k, str)) == sorted(k for k in keys if k)
    return [h for _, h in wanted] if same else []


def remove() -> int:
    rec = claude._load(record_file()) if os.path.exists(record_file()) else {}
    path = rec.get("hooksFile")
    if not isinstance(path, str):
        return 0  # never installed for Codex
    before = claude._read_text(path)
    keys = {k for k in rec.get("hooks") or [] if isinstance(k, str)}
    was = keys | {k for k in rec.get("earlier") or [] if isinstance(k, str)}  # a backup may hold those too

    def strip(d: dict[str, Any]) -> dict[str, Any]:
        return claude._strip(d, was)

    made = None
    if before is None:
        claude.say(f"codex: {path} absent; nothing to remove")
    else:
        doc = claude._load(path)
        claude._check_shape(path, doc)
        gone, made = claude.restore(path, before, claude._strip(doc, keys), rec.get("created") is True, strip)
        if gone:
            claude.say(f"codex: removed {path} (the install created it; nothing else was in it)")
        else:
            claude.say(f"codex: removed session-watcher from {path}")
    claude.tidy_backups(path, strip, made)  # the file gone or not, our backups of it go with the install
    written = rec.get("trusted")
    if isinstance(written, dict):
        from session_watcher.cli.codex_trust import untrust

        untrust(os.path.dirname(path), {k: v for k, v in written.items() if isinstance(k, str) and isinstance(v, str)},
                created=rec.get("configCreated") is True)  # says what became of config.toml
    try:
        os.unlink(record_file())
    except FileNotFoundError:
        pass
    return 0


def _fired(limit: int = 64) -> str | None:
    """The newest recorded session (of the last `limit`) whose state follows a Codex rollout: a Codex
    hook has run; None when none does."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import store

    for _mtime, sid in sorted(store.list_sessions(), reverse=True)[:limit]:
        try:
            state = store.load(store.session_file(sid), sid, readonly=True)
        except (StateRejected, OSError, ValueError):
            continue
        cursor = state["cursor"] if state is not None else None
        if isinstance(cursor, dict) and "codex" in cursor:
            return sid
    return None


def doctor_lines() -> list[str]:
    """What `doctor` says of Codex: not here, here without the hooks, installed but not trusted yet
    (no Codex hook has fired: Codex skips an untrusted hook; exec says nothing of it, the TUI asks
    at its start), or firing. Trust is
    read for our hooks only (`_ours_trusted`), never from the user's own entries. With the hooks
    installed on a system where exec's stderr cannot be written (no /proc: macOS), a line says what
    a `codex exec` user does not see there, and where to look instead."""
    rec = claude._load(record_file()) if os.path.exists(record_file()) else {}
    path = rec.get("hooksFile")
    lines = _hooks_lines(rec)
    if isinstance(path, str):
        from session_watcher.agents.codex.execout import stderr_reachable

        if not stderr_reachable():
            lines.append("codex      under `codex exec` (not the TUI) the guard's reasons and the alerts are not "
                         "shown on this system: exec shows no hook's output, and session-watcher writes them to "
                         "exec's stderr through /proc, which this system has not; a held prompt says only "
                         "`hook: UserPromptSubmit Blocked` (sent again within a minute, it goes); the alerts go to "
                         "the desktop's notifications too and wait, queued, for a prompt of the TUI's, which shows "
                         "the newest that still holds, priced then (none after a break past the cache's edge); "
                         "`session-watcher status` says where the thread stands")
    return lines


def _hooks_lines(rec: dict[str, Any]) -> list[str]:
    """`doctor_lines`' line of the hooks the install's record (`rec`) names: where they stand."""
    home = codex_home()
    path = rec.get("hooksFile")
    if not isinstance(path, str):
        return [] if home is None else [f"codex      {home}: hooks not installed (./install.sh adds them)"]
    keys = {k for k in rec.get("hooks") or [] if isinstance(k, str)}
    doc = _hooks_doc(path)
    if not keys <= _registered(doc):
        return [f"codex      {path}: session-watcher's hooks are gone from it (./install.sh adds them again)"]
    fired = _fired()
    if fired is not None:
        return [f"codex      {path}: hooks firing (last thread {fired})"]
    config = os.path.join(os.path.dirname(path), "config.toml")
    written = rec["trusted"] if isinstance(rec.get("trusted"), dict) else {}
    ours = _trust_keys(path, doc, keys)
    if "trustedFor" in rec and _sorted(rec["trustedFor"]) != _sorted(_ours(doc, keys)):
        written = {}  # hashes written for other hooks (another venv path's): not the trust of these
    known, other = _ours_trusted(config, ours, written)
    if known == len(ours):  # trusted (the install's app-server route), not run yet
        return [f"codex      {path}: installed and trusted in {config}; none has fired yet (start a Codex "
                "thread; if they still do not fire, trust them again in Codex's /hooks)"]
    if known + other == len(ours):
        return [f"codex      {path}: installed; {config} holds a trust entry for each of its {len(ours)} hooks, "
                f"{other} not written by the install (from /hooks, or left by another hook in that place: "
                "not checked); none has fired yet (start a Codex thread; if they do not fire, trust them "
                "again in Codex's /hooks)"]
    return [f"codex      {path}: installed, not trusted yet ({len(ours) - known - other} of its {len(ours)} hooks "
            f"without a trust entry in {config}; no Codex hook has fired: trust them where Codex's TUI asks "
            "at its start, \"Hooks need review\", or in its /hooks; `codex exec` runs them only then, and says "
            "nothing of it)"]


def _ours(doc: dict[str, Any], keys: set[str]) -> list[Any]:
    """Our hooks (`keys`) as they stand in the hooks.json `doc`."""
    hooks = doc.get("hooks")
    return [h for groups in (hooks.values() if isinstance(hooks, dict) else ()) if isinstance(groups, list)
            for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if claude.hook_key(h) in keys]


def _sorted(hooks: Any) -> list[str]:
    return sorted(json.dumps(h, sort_keys=True) for h in hooks) if isinstance(hooks, list) else []


def _trust_keys(hooks_file: str, doc: dict[str, Any], keys: set[str]) -> list[str]:
    """The keys Codex files our hooks' trust under, `<hooks file>:<event in snake case>:<group>:<hook>`
    (docs/install.md), from where our hooks (`keys`) sit in the hooks.json `doc`."""
    import re

    mine = trust_file(hooks_file)
    hooks = doc.get("hooks")
    return [f"{mine}:{re.sub(r'(?<!^)(?=[A-Z])', '_', event).lower()}:{g}:{h}"
            for event, groups in (hooks.items() if isinstance(hooks, dict) else ()) if isinstance(groups, list)
            for g, group in enumerate(groups) if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for h, hook in enumerate(group["hooks"]) if claude.hook_key(hook) in keys]


def _ours_trusted(config: str, ours: list[str], written: dict[str, Any]) -> tuple[int, int]:
    """Of our hooks' trust keys (`ours`), how many Codex's config.toml holds a trust entry for with the
    hash the install wrote (`written`, {key: hash}), and how many with another hash (trusted in
    /hooks, or an entry left by a hook once in that place: Codex's hash is not ours to compute);
    (0, 0) where it cannot be read (a FIFO there, a file over `config.MAX_FILE_BYTES`, not TOML,
    nested too deep) or `hooks.state` is no table."""
    import tomllib

    from session_watcher.base.config import MAX_FILE_BYTES

    try:
        doc = tomllib.loads(paths.read_file(config, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError, MemoryError):
        return 0, 0
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return 0, 0
    hashes = [(key, entry["trusted_hash"]) for key in ours
              if isinstance(entry := state.get(key), dict) and entry.get("trusted_hash")]
    known = sum(1 for key, digest in hashes if written.get(key) == digest)
    return known, len(hashes) - known


def _hooks_doc(path: str) -> dict[str, Any]:
    """A hooks.json's object ({} when it cannot be read: a FIFO there, which an `open` waited on for
    good, a folder or a device, as the installer reads one, `paths.read_file`; nor when it is nested
    past the stack, which stopped doctor with exit 3)."""
    try:
        doc = json.loads(paths.read_file(path, claude.SETTINGS_MAX))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _registered(doc: dict[str, Any]) -> set[str | None]:
    """The keys of the hooks in a hooks.json's object."""
    hooks = doc.get("hooks")
    return {claude.hook_key(h) for groups in (hooks or {}).values() if isinstance(groups, list)
            for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)  # a number: no hooks
            for h in g["hooks"]} if isinstance(hooks, dict) else set()


def main(argv: list[str]) -> int:
    with claude.said_whole():
        if argv[:1] == ["add"] and len(argv) == 2:
            return add(argv[1])
        if argv[:1] == ["remove"]:
            return remove()
    print("usage: python -m session_watcher.cli.install_codex add BIN_DIR | remove", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
