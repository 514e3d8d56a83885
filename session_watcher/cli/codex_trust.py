"""Trust session-watcher's Codex hooks through Codex's own route: `codex app-server` JSON-RPC.

Codex skips a hook it does not trust (`codex exec` silently; 0.171.0's TUI asks at its start, "Hooks
need review"). Trust is Codex's to record (a hash of the hook's definition in its `config.toml`, not
a public contract), so it is asked, never computed:
`initialize`, `hooks/list` (each hook's `key`, `currentHash` and `trustStatus`), then one
`config/batchWrite` that upserts `hooks.state.<key>.trusted_hash` for our hooks that are not trusted
yet (the user's own hooks are left as they are), the whole exchange bounded by DEADLINE. Where it
cannot run (no `codex` on PATH, an older Codex without the methods, an error) the caller says the
one line that does it by hand: where the TUI asks at its next start, or its `/hooks` screen.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from typing import Any

from session_watcher.cli.agents_here import codex_executable  # SESSION_WATCHER_CODEX, else the `codex` on PATH

DEADLINE = 20.0  # seconds for the whole exchange (a first start of the binary reads its 300 MB)


class _Rpc:
    """One app-server process and its line-delimited JSON-RPC, every read bounded by the deadline."""

    def __init__(self, exe: str, env: dict[str, str], cwd: str, deadline: float) -> None:
        self.deadline = deadline
        self.proc = subprocess.Popen([exe, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""
        self.n = 0

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.n += 1
        self._send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            msg = self._message()
            if msg.get("id") == self.n and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result")

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def _message(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                raise TimeoutError("codex app-server did not answer in time")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("codex app-server exited")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        return msg if isinstance(msg, dict) else {}

    def close(self) -> None:
        self.sel.close()
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=max(0.5, self.deadline - time.monotonic()))
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def ours(listed: Any, hooks_file: str, commands: set[str]) -> list[dict[str, Any]]:
    """The hooks `hooks/list` returned that are ours: from our hooks.json, with one of our commands."""
    found = []
    for entry in listed.get("data") or [] if isinstance(listed, dict) else []:
        for hook in entry.get("hooks") or [] if isinstance(entry, dict) else []:
            if (isinstance(hook, dict) and hook.get("sourcePath") == hooks_file and hook.get("command") in commands
                    and isinstance(hook.get("key"), str) and isinstance(hook.get("currentHash"), str)):
                found.append(hook)
    return found


def trust(home: str, hooks_file: str, commands: set[str]) -> tuple[dict[str, str], int] | None:
    """Have Codex trust our hooks in `hooks_file`: ({key: hash} of the entries written now, the
    number already trusted), or None when Codex could not be asked (the user then trusts them in
    `/hooks`)."""
    exe = codex_executable()
    if exe is None:
        return None
    env = {**os.environ, "CODEX_HOME": home}
    try:
        rpc = _Rpc(exe, env, home, time.monotonic() + DEADLINE)
    except OSError:
        return None
    try:
        rpc.call("initialize", {"clientInfo": {"name": "session-watcher", "version": _version()}})
        rpc.notify("initialized")
        mine = ours(rpc.call("hooks/list", {"cwds": [home]}), hooks_file, commands)
        todo = {h["key"]: {"trusted_hash": h["currentHash"]} for h in mine if h.get("trustStatus") != "trusted"}
        if todo:
            rpc.call("config/batchWrite", {"edits": [{"keyPath": "hooks.state", "mergeStrategy": "upsert",
                                                      "value": todo}]})
            mine = ours(rpc.call("hooks/list", {"cwds": [home]}), hooks_file, commands)
        trusted = sum(1 for h in mine if h.get("trustStatus") == "trusted")
        if trusted < len(commands):
            return None
        return {k: v["trusted_hash"] for k, v in todo.items()}, trusted - len(todo)
    except (OSError, ValueError, RuntimeError, TimeoutError, EOFError):
        return None
    finally:
        rpc.close()


def untrust(home: str, written: dict[str, str], created: bool = False) -> int:
    """Take out of `$home/config.toml` the trust entries the install wrote (`written`, {key: hash}):
    each `hooks.state.<key>` whose trusted_hash is still the one written (a hash since changed is
    someone else's), the table when nothing else is left in it; the user's entries and the file's
    layout kept (tomlkit), a backup first (none when nothing else is left: it would hold only ours).
    A file the install's trust made (`created`: there was none) and that holds nothing else is
    deleted instead. Says what became of the file, then of its backup; returns the number taken out
    (0: the file left as it is)."""
    import tomlkit

    from session_watcher.cli import install as claude

    path = os.path.join(home, "config.toml")
    before = claude._read_text(path)
    if before is None or not written:
        return 0
    try:
        doc = tomlkit.parse(before)
    except (tomlkit.exceptions.ParseError, ValueError, RecursionError):
        claude.say(f"codex: {path} is not TOML Codex can read; its session-watcher trust entries are left in it")
        return 0
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return 0
    gone = 0
    for key, digest in written.items():
        entry = state.get(key)
        if isinstance(entry, dict) and entry.get("trusted_hash") == digest:
            if set(entry) == {"trusted_hash"}:
                del state[key]
            else:
                del entry["trusted_hash"]
            gone += 1
    if not gone:
        return 0
    if not state:
        del hooks["state"]  # type: ignore[union-attr]  # a dict, checked above
    if not hooks:
        del doc["hooks"]
    text = tomlkit.dumps(doc)
    if created and not text.strip() and not os.path.islink(path):
        os.unlink(path)
        claude.say(f"codex: removed {path} (the install's trust created it; nothing else was in it)")
        return gone
    made = _write_toml(path, before, text)
    claude.say(f"codex: removed the {gone} trust entries the install wrote from {path}")
    if made is not None:  # said as install.tidy_backups says the backups of the other two files
        claude.say(f"backup: made {made} (the file as it was; it holds settings of yours)")
    return gone


def _write_toml(path: str, before: str, text: str) -> str | None:
    """`path` rewritten with `text` (through a link, with its own mode), `before` backed up first,
    unless `text` is empty (the file held nothing but ours: a backup would hold nothing of the
    user's). The backup written, if any."""
    from session_watcher.base.atomic import write_atomic, write_user_file
    from session_watcher.cli import install as claude

    name = None
    if text.strip():
        name = claude._backup_name(path)
        write_atomic(name, before.encode("utf-8"))
    write_user_file(path, text.encode("utf-8"))
    return name


def _version() -> str:
    from session_watcher import __version__

    return str(__version__)
