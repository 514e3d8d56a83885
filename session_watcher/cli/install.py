"""Merge session-watcher's hooks and status line into Claude Code's settings.json, and take them out.

`python -m session_watcher.cli.install add BIN_DIR` / `remove`: idempotent; nothing written where
Codex is the one agent here (no `$CLAUDE_CONFIG_DIR` set, no Claude Code folder, no `claude` on PATH:
cli.agents_here), said in one line, and there the record of an earlier install whose settings file is
gone since (Claude Code removed) is forgotten, so nothing says its hooks are installed (one whose
folder cannot be reached now is kept: `agents_here.settings_gone`); every other
key and hook of the user's is kept; a backup is written before any change (and none when nothing
changes); an existing statusLine is never overwritten. What was added is recorded in
`<data dir>/installed.json`, so removal takes out exactly that (an install into another settings file,
another `$CLAUDE_CONFIG_DIR`, keeps the earlier file's record beside its own while that file is there:
removal takes ours out of both); a settings.json the install created
goes again when nothing else is in it, and so do our backups that hold only our entries (`restore`;
one holding anything of the user's stays). `installed`: exit 0 where Claude Code's settings hold an
install (its record, and the file it names: install.sh's closing screen names the status line then).
`link COMMAND`: the command in ~/.local/bin (install.sh --uninstall removes it). `projects`: Claude
Code's projects folders as the report reads them (a comma-separated `$CLAUDE_CONFIG_DIR` is a list),
exit 0 where one holds a session (install.sh's closing screen). `say TEXT`:
install.sh's own lines. Every line is said as the rest of the CLI says its text (`say`): wrapped at
its spaces within the terminal's columns, a path kept whole; a command to copy stays on one line.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shlex
import sys
import time
from typing import TYPE_CHECKING, Any

from session_watcher.base import paths
from session_watcher.base.atomic import user_file, write_atomic, write_user_file
from session_watcher.cli.messages import json_text  # the one JSON writer (the install records)
from session_watcher.hooks.run import EVENTS as PLANS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# What is registered comes from the hook's own table (hooks.run.EVENTS): each event, and beside
# SessionStart its `inject`. Synchronous: UserPromptSubmit (its output is shown to the user: the
# guard, queued alerts), SessionEnd (print mode kills async hooks at exit; nothing waits on it but
# the exit) and the inject. Every other hook runs async: the agent does not wait for it, and it
# prints nothing (its output goes to the model).
EVENTS = tuple(dict.fromkeys(name.split()[0] for name in PLANS))
SYNC_EVENTS = tuple(name for name, plan in PLANS.items() if plan["sync"] and " " not in name)
HOOK_TIMEOUT = 10
STATUS_REFRESH = 15  # seconds: the prompt-cache countdown moves while the session is idle


def say(*lines: str) -> None:
    """`lines` as the CLI prints its text (core.text.fit): each wrapped at its spaces within the
    terminal's columns, a path never cut (one longer than the room on a line of its own)."""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import fit

    print(fit("\n".join(lines), columns()))


def settings_file() -> str:
    return os.path.join(paths.claude_config_dirs()[0], "settings.json")


def record_file() -> str:
    from session_watcher.cli.agents_here import claude_record

    return claude_record()


SETTINGS_MAX = 16 << 20  # a settings.json larger than this is not Claude Code's


def _load(path: str) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is none). Anything else stops the install with a
    message naming the file and what is wrong, and nothing is changed (SystemExit)."""
    text = _read_text(path)
    if text is None:
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:  # `//` comments, trailing commas, a torn file
        hint = "; comments (// or /* */) and trailing commas are not JSON" if "//" in text or "/*" in text else ""
        raise SystemExit(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}){hint}: "
                         "nothing was changed; fix it, or add session-watcher's hooks by hand (README: Install)"
                         ) from None
    except RecursionError:
        raise SystemExit(f"{path}: nested too deeply to be settings; nothing was changed") from None
    if not isinstance(doc, dict):
        raise SystemExit(f"{path}: not a JSON object; nothing was changed")
    return doc


def _check_shape(path: str, doc: dict[str, Any]) -> None:
    """The parts of settings.json this merge reads, as Claude Code writes them; an odd one stops
    the install with a message naming it (a traceback before)."""
    def odd(where: str, value: object, expected: str) -> SystemExit:
        return SystemExit(f"{path}: {where} is {type(value).__name__} {json.dumps(value)[:80]}, expected "
                          f"{expected}: nothing was changed; fix it, or add session-watcher's hooks by hand")

    hooks = doc.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise odd('"hooks"', hooks, "an object of events")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise odd(f'"hooks"."{event}"', groups, "a list of hook groups")
        for n, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(group, dict) or not isinstance(inner, list | type(None)):
                raise odd(f'"hooks"."{event}"[{n}]', group, 'an object with a "hooks" list')


def _unchanged(doc: dict[str, Any], before: str | None) -> bool:
    """Whether the settings already say exactly this (Claude Code's own formatting is not a change)."""
    if before is None:
        return False
    try:
        return bool(json.loads(before) == doc)
    except ValueError:
        return False


def _backed_up(path: str, doc: dict[str, Any]) -> bool:
    """Whether one of our backups of `path` already says `doc` (JSON-equal)."""
    import glob

    for backup in glob.glob(glob.escape(path) + ".bak-session-watcher-*"):
        text = _read_text(backup)
        try:
            if text is not None and json.loads(text) == doc:
                return True
        except ValueError:
            continue
    return False


def _backup_name(path: str) -> str:
    """A new backup's name: the time, and a count when a backup of this second exists (never over one)."""
    base = f"{path}.bak-session-watcher-{time.strftime('%Y%m%d%H%M%S')}"
    name, n = base, 1
    while os.path.lexists(name):
        n += 1
        name = f"{base}-{n}"
    return name


def _write(path: str, doc: dict[str, Any], before: str | None, backup: bool = True, named: bool = True) -> str | None:
    """settings.json rewritten: through a link to its target, with its own mode; a read-only one is
    refused with a message before anything (the backup included) is written. No backup when one of
    ours holds the file as it is, or (`backup` False) the change loses nothing a backup does not hold.
    The backup written, if any (named on stdout, unless `named` is False: the caller names it)."""
    if _unchanged(doc, before):
        return None
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        target, _mode = user_file(path)
    except OSError as exc:
        raise SystemExit(f"{path}: {exc.strerror}; nothing was changed") from None
    os.makedirs(os.path.dirname(target), exist_ok=True)
    name = None
    if before is not None and backup and not _backed_up(path, json.loads(before)):  # a backup of it yet: no other
        name = _backup_name(path)
        write_atomic(name, before.encode("utf-8"))
        if named:
            say(f"backup: {name}")
    written = write_user_file(path, text.encode("utf-8"))
    if written != path and os.path.islink(path):
        say(f"settings: {path} is a link: written through to {written}")
    return name


def _read_text(path: str) -> str | None:
    """The file's text, None when there is none; a FIFO, device or folder there, or text that is
    not UTF-8, stops the install with a message (SystemExit), never a block or a traceback."""
    try:
        data = paths.read_file(path, SETTINGS_MAX)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SystemExit(f"{path}: cannot be read: {exc.strerror}; nothing was changed") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SystemExit(f"{path}: not UTF-8 text; nothing was changed") from None


def _launch(bin_dir: str, kind: str) -> str:
    # the venv's interpreter, isolated, on the launcher script: quoted for `sh -c`, and no shebang
    # involved (a shebang cannot hold a path with spaces, as on macOS's "Application Support")
    python = shlex.quote(os.path.join(bin_dir, "python"))
    return f"{python} -I -S {shlex.quote(os.path.join(bin_dir, f'session-watcher-{kind}'))}"


def hook_entry(bin_dir: str, event: str, *extra: str) -> dict[str, Any]:
    """The exec form (`args`, no shell): the venv's interpreter, isolated, on the launcher script."""
    entry: dict[str, Any] = {"type": "command", "command": os.path.join(bin_dir, "python"),
                             "args": ["-I", "-S", os.path.join(bin_dir, "session-watcher-hook"), event, *extra],
                             "timeout": HOOK_TIMEOUT}
    if not PLANS[" ".join([event, *extra])]["sync"]:
        entry["async"] = True
    return entry


def hook_entries(bin_dir: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, entry) of every hook: one per row of the hook's table, SessionStart's synchronous
    `inject` among them (a fresh session's pending handoff, as additional context)."""
    return [(name.split()[0], hook_entry(bin_dir, *name.split())) for name in PLANS]


def hook_key(hook: Any) -> str | None:
    """What identifies a registered hook: its command, and its args when in the exec form."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return None
    args = hook.get("args")
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        return json.dumps([hook["command"], *args])
    return str(hook["command"])


def statusline_command(bin_dir: str) -> str:
    return _launch(bin_dir, "statusline")


def both(status_cmd: str, current: Any) -> str:
    """The status-line command that shows the user's own line above ours (`--with CMD`)."""
    theirs = current.get("command") if isinstance(current, dict) else None
    return f"{status_cmd} --with {shlex.quote(theirs if isinstance(theirs, str) else 'YOUR COMMAND')}"


def _drop_hooks(doc: dict[str, Any], ours: set[str]) -> None:
    """Take the hooks whose keys are in `ours` out of the settings, and groups left empty by that."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if hook_key(h) not in ours]
                if not inner and group["hooks"]:
                    continue
                kept_groups.append({**group, "hooks": inner})
            else:
                kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del doc["hooks"]


def add(bin_dir: str) -> int:
    from session_watcher.cli import agents_here

    if agents_here.codex_only():  # a Codex user's machine: no Claude Code folder, no `claude` to run
        folders = " or ".join(dict.fromkeys(paths.claude_config_dirs()[:2]))
        said = f"claude code: not on this machine (no {folders}, no `claude` on PATH): its settings not written"
        left = agents_here.claude_record_settings()  # an earlier install's (a record that cannot be read: kept)
        if left is not None and os.path.lexists(left):  # its hooks, in a folder still there
            said += f"; an earlier install's hooks stay in {left} (./install.sh --uninstall takes them out)"
        elif left is not None and agents_here.settings_gone(left):  # Claude Code removed, its settings with it
            _forget_stale(left)
            said += f"; the record of an earlier install into {left} (gone since) forgotten"
        elif left is not None:  # not reachable now (a link to nowhere, a drive not mounted): its file may be back
            said += (f"; the record of an earlier install into {left} kept, its folder not reachable now "
                     "(./install.sh --uninstall forgets it)")
        say(f"{said}; installed for Codex (./install.sh again adds Claude Code's once it is here)")
        return 0
    path = settings_file()
    before = _read_text(path)
    doc = _load(path)
    _check_shape(path, doc)
    prev = _load(record_file()) if os.path.exists(record_file()) else {}
    # installs into other settings files (another CLAUDE_CONFIG_DIR) whose files are still there stay
    # recorded, so --uninstall takes their hooks out too; an earlier install into this file is `same`
    others = [r for r in _installs(prev) if r.get("settings") != path and os.path.lexists(str(r.get("settings")))]
    same = next((r for r in _installs(prev) if r.get("settings") == path), {})
    entries = hook_entries(bin_dir)
    wanted = {hook_key(entry) for _, entry in entries}
    # a file the install made (none was there) goes again at --uninstall when nothing else is in it;
    # so does one an install recorded before records said so (no "created") where nothing but its
    # entries is in it now: the file holds nothing of the user's (their `{}` at most)
    created = before is None or same.get("created") is True or (
        bool(same) and "created" not in same and not _ours(same)[2](copy.deepcopy(doc)))
    # an earlier install's hooks (another form, another venv path) are replaced, not doubled
    prevs = _installs(prev)
    _drop_hooks(doc, {k for r in prevs for k in r.get("hooks") or [] if isinstance(k, str) and k not in wanted})
    hooks = doc.setdefault("hooks", {})
    # the folder the install made for the file (a machine without Claude Code has no ~/.claude) goes
    # too when it is left empty
    folder = not os.path.lexists(os.path.dirname(path)) or same.get("createdFolder") is True
    added: dict[str, Any] = {"settings": path, "hooks": [], "statusLine": None, "created": created,
                             "createdFolder": folder, "earlier": earlier(prevs, wanted | {statusline_command(bin_dir)})}
    if others:
        added["others"] = others
    for event, entry in entries:
        key = hook_key(entry)
        groups = hooks.setdefault(event, [])
        mine = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if hook_key(h) == key]
        if not mine:
            groups.append({"hooks": [entry]})
        else:
            mine[0].update(entry)  # same command: bring async and timeout up to date
        added["hooks"].append(key)
    status_cmd = statusline_command(bin_dir)
    current = doc.get("statusLine")
    # an earlier install's status line (another venv path) is ours to replace, not the user's to keep;
    # a line of the user's without a command (no earlier line recorded: None) is theirs
    lines = {status_cmd, *(r["statusLine"] for r in prevs if isinstance(r.get("statusLine"), str))}
    if current is None or (isinstance(current, dict) and current.get("command") in lines):
        doc["statusLine"] = {"type": "command", "command": status_cmd, "padding": 0,
                             "refreshInterval": STATUS_REFRESH}
        added["statusLine"] = status_cmd
    else:
        say("statusLine: you already have one; it was left as it is. To show both (yours above), set "
            "statusLine.command to:")
        print(f"\n    {both(status_cmd, current)}\n")  # whole, to be copied
    _write(path, doc, before)
    paths.ensure_private_dir(paths.data_dir())
    write_atomic(record_file(), (json_text(added, indent=2) + "\n").encode("utf-8"))
    say(f"settings: {path} (hooks: {', '.join(EVENTS)}; statusLine: "
        f"{'session-watcher' if added['statusLine'] else 'yours, kept'})")
    for other in others:
        say(f"settings: {other['settings']} keeps an earlier install's hooks (./install.sh --uninstall "
            "takes them out of both)")
    return 0


def _installs(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The installs a record holds: its own (a record from before `settings` was written names none:
    the settings file then) and the other settings files' it kept (`others`), each without `others`
    of its own."""
    own = {k: v for k, v in rec.items() if k != "others"}
    kept = [r for r in rec.get("others") or [] if isinstance(r, dict) and isinstance(r.get("settings"), str)]
    return ([own] if own else []) + kept


def earlier(prevs: list[dict[str, Any]], now: set[str | None]) -> list[str]:
    """The hook keys and status-line commands of earlier installs (`prevs`, the records they left) that
    this one does not write again (`now`): no longer in the file, but what our backups of it may hold."""
    was = [k for prev in prevs
           for k in (*(prev.get("earlier") or []), *(prev.get("hooks") or []), prev.get("statusLine"))]
    return sorted({k for k in was if isinstance(k, str) and k not in now})


def _strip(doc: dict[str, Any], keys: set[str], status: set[str] | None = None) -> dict[str, Any]:
    """`doc` with the hooks whose keys are in `keys` and a statusLine running a command of `status`
    taken out."""
    _drop_hooks(doc, keys)
    sl = doc.get("statusLine")
    if isinstance(sl, dict) and sl.get("command") in (status or set()):
        del doc["statusLine"]
    return doc


def tidy_backups(path: str, strip: Callable[[dict[str, Any]], dict[str, Any]], made: str | None = None) -> None:
    """Our backups of `path` that hold nothing but our entries (`strip` leaves `{}`) are deleted;
    any other (settings of the user's, or text that is not a JSON object) is kept. One line per
    backup says which: removed, kept, or `made` (the one this removal wrote)."""
    import glob

    kept = []
    for backup in sorted(glob.glob(glob.escape(path) + ".bak-session-watcher-*")):
        if backup == made:
            continue
        try:
            text = _read_text(backup)
            doc = json.loads(text) if text is not None else None
        except (SystemExit, ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and not strip(doc) and not os.path.islink(backup):
            os.unlink(backup)
            say(f"backup: removed {backup} (it held only session-watcher's entries)")
        else:
            kept.append(backup)
    for backup in kept:
        say(f"backup: kept {backup} (it holds settings of yours)")
    if made is not None:
        say(f"backup: made {made} (the file as it was; it holds settings of yours)")


def restore(path: str, before: str, doc: dict[str, Any], created: bool,
            strip: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[bool, str | None]:
    """`path` brought back to what it was before the install: `doc` (its content with ours taken
    out) written, or, where the install created the file and `doc` is empty, the file deleted (a
    link there is the user's: kept). (Whether the file was deleted, the backup written of it.) A
    backup is written first unless one of ours holds `doc` already or the file holds nothing but our
    entries (`strip` leaves `{}`: the backup would hold nothing of the user's). The caller says what
    became of the file, then `tidy_backups` of the backups."""
    gone = created and not doc and not os.path.islink(path)
    if gone:
        os.unlink(path)
        return True, None
    only_ours = not strip(json.loads(before))
    return False, _write(path, doc, before, backup=not only_ours and not _backed_up(path, doc), named=False)


def _ours(rec: dict[str, Any]) -> tuple[set[str], set[str], Callable[[dict[str, Any]], dict[str, Any]]]:
    """From an install's record: its hook keys, its status-line command, and what strips a backup of
    every entry of ours (an earlier install's too: another venv path)."""
    keys = {k for k in rec.get("hooks") or [] if isinstance(k, str)}
    status = {rec["statusLine"]} if isinstance(rec.get("statusLine"), str) else set()
    was = {k for k in rec.get("earlier") or [] if isinstance(k, str)} | keys | status

    def strip(d: dict[str, Any]) -> dict[str, Any]:
        return _strip(d, was, was)

    return keys, status, strip


def _forget_stale(path: str) -> None:
    """An install's record whose settings file (`path`) is gone: the backups of ours still beside
    it tidied, as `remove` does (a folder removed whole took them with it), and the record forgotten,
    so nothing says Claude Code's hooks or status line are installed."""
    if os.path.isdir(os.path.dirname(path)):
        tidy_backups(path, _ours(_load(record_file()))[2])
    _forget_install()


def remove() -> int:
    if not os.path.exists(record_file()):
        return 0  # never installed for Claude Code (a Codex user's machine): nothing of ours in its settings
    rec = _load(record_file())
    for one in _installs(rec) or [rec]:
        _remove_from(one)
    _forget_install()
    return 0


def _remove_from(rec: dict[str, Any]) -> None:
    """What one install (`rec`) put into its settings file taken out, its backups tidied, and the
    folder it created removed when empty."""
    path = rec.get("settings") or settings_file()
    before = _read_text(path)
    keys, status, strip = _ours(rec)
    made = None
    if before is None:
        say(f"settings: {path} absent; nothing to remove")
    else:
        doc = _load(path)
        _check_shape(path, doc)
        gone, made = restore(path, before, _strip(doc, keys, status), rec.get("created") is True, strip)
        if gone:
            say(f"settings: removed {path} (the install created it; nothing else was in it)")
        else:
            say(f"settings: removed session-watcher from {path}")
    tidy_backups(path, strip, made)  # the file gone or not, our backups of it go with the install
    if rec.get("createdFolder") is True and rec.get("created") is True and _rmdir(os.path.dirname(path)):
        say(f"settings: removed {os.path.dirname(path)} (the install created it; it is empty now)")


def _rmdir(folder: str) -> bool:
    """`folder` removed when it is an empty folder (never a link, never one holding anything)."""
    try:
        os.rmdir(folder) if not os.path.islink(folder) else None
    except OSError:
        return False
    return not os.path.lexists(folder)


def _forget_install() -> None:
    """The install's record goes with what it recorded: a later install starts from nothing of it."""
    try:
        os.unlink(record_file())
    except FileNotFoundError:
        pass


def bin_home() -> str:
    """Where user commands are linked: $XDG_BIN_HOME, else ~/.local/bin (pipx's convention)."""
    return os.environ.get("XDG_BIN_HOME") or os.path.join(os.path.expanduser("~"), ".local", "bin")


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def on_path(folder: str) -> bool:
    want = os.path.realpath(folder)
    return any(os.path.realpath(os.path.expanduser(p)) == want
               for p in os.environ.get("PATH", "").split(os.pathsep) if p)


def link(target: str) -> int:
    """Link the command into bin_home(), never over a file or a link that is not ours; say if it is on PATH."""
    folder = bin_home()
    path = os.path.join(folder, "session-watcher")
    current = _readlink(path)
    ours = current is not None and current.endswith(os.path.join("session-watcher", "venv", "bin", "session-watcher"))
    if os.path.lexists(path) and current is None:
        say(f"command: {path} exists and is not a link of ours; left as it is (the command is {target})")
        return 0
    if current not in (None, target) and not ours:
        say(f"command: {path} points to {current}; left as it is (the command is {target})")
        return 0
    if current != target:
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.tmp-{os.getpid()}"
        os.symlink(target, tmp)
        os.replace(tmp, path)
    if on_path(folder):
        say(f"command: session-watcher ({path}; {folder} is on your PATH)")
    else:
        from session_watcher.base.terminal import columns
        from session_watcher.core.text import wrap

        home = os.path.expanduser("~")
        shown = "$HOME" + folder[len(home):] if folder.startswith(home + os.sep) else folder
        say(f"command: {path}")
        print("\n".join(wrap(f"  {folder} is not on your PATH: add this line to ~/.profile (or your shell's "
                             "startup file), then open a new terminal:", columns())))
        print(f"\n    export PATH=\"{shown}:$PATH\"")  # whole, to be copied
    return 0


def main(argv: list[str]) -> int:
    with said_whole():
        if argv[:1] == ["add"] and len(argv) == 2:
            return add(argv[1])
        # install.sh's questions: whether Claude Code's settings hold our install; where its sessions are
        alone: dict[str, Callable[[], int]] = {"remove": remove, "installed": _installed, "projects": projects,
                                               "twice": twice}
        if argv[:1] == ["remove"] or argv in (["installed"], ["projects"], ["twice"]):
            return alone[argv[0]]()
        if argv[:1] == ["link"] and len(argv) == 2:
            return link(argv[1])
        if argv[:1] == ["say"] and len(argv) >= 2:
            _say_for_install_sh(argv[1], argv[2:])
            return 0
    print("usage: python -m session_watcher.cli.install add BIN_DIR | remove | installed | link COMMAND | "
          "projects | twice | say TEXT [PATH...]",
          file=sys.stderr)
    return 2


def _installed() -> int:
    from session_watcher.cli.agents_here import claude_installed

    return 0 if claude_installed() else 1


def hooks_of_ours(hooks: dict[str, Any]) -> list[str]:
    """The events whose hooks in a settings file's `hooks` table are session-watcher's (install.sh's)."""
    return sorted(ev for ev, groups in hooks.items() if "session-watcher" in json.dumps(groups))


def twice_words(settings: str, ours: list[str]) -> str:
    """What doctor's `settings` line says (`doctor._settings_lines`), and install.sh at its end
    (`twice`), where `settings` holds install.sh's hooks for the events `ours` and the plugin is
    enabled too: each hook runs twice, and the command that keeps either route."""
    from session_watcher.cli.agents_here import codex_record  # install_codex's record_file

    # --uninstall takes all the install added: Codex's hooks too, which the plugin does not register
    codex = ", which takes its Codex hooks too" if os.path.exists(codex_record()) else ""
    return (f"{settings}: hooks for {', '.join(ours)}; the enabled plugin registers them too, so each runs twice "
            "(harmless, slower): keep one route, install.sh's for the status line (`claude plugin uninstall "
            f"session-watcher@session-watcher`), or the plugin's (`./install.sh --uninstall`{codex})")


def twice() -> int:
    """install.sh's last line where the Claude Code plugin of session-watcher is enabled too and the
    settings file holds install.sh's hooks: each hook runs twice, and the command that keeps either
    route, in doctor's words (`twice_words`). Nothing where only one route's hooks are set."""
    from session_watcher.base import route

    if not any(on for _, _, on in route.plugin_installs()):
        return 0
    path = settings_file()
    try:
        doc = json.loads(paths.read_file(path, SETTINGS_MAX))
    except (OSError, ValueError):  # gone or unreadable since `add`: doctor names it
        return 0
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    ours = hooks_of_ours(hooks) if isinstance(hooks, dict) else []
    if ours:
        print()
        _say_for_install_sh(f"== {twice_words(path, ours)}", [path])
    return 0


def projects() -> int:
    """install.sh's closing screen: whether the report has Claude Code sessions to show, read where
    the report reads them (every folder of a comma-separated `$CLAUDE_CONFIG_DIR`, or the defaults: a
    shell reading the variable as one path looked in a folder named `a,b`). Prints the projects
    folders to name where there is none yet, one a line: those that exist, else the first (where
    Claude Code makes it); exit 0 when one of them holds a session (`PROJECT/SESSION.jsonl`)."""
    import glob

    from session_watcher.agents.claude_code.discover import default_roots

    roots = default_roots()
    there = [r for r in roots if os.path.isdir(r)]
    print("\n".join(there or roots[:1]))
    found = any(glob.glob(os.path.join(glob.escape(r), "*", "*.jsonl")) for r in there)
    return 0 if found else 1


def _say_for_install_sh(text: str, keep: list[str]) -> None:
    """install.sh's own line, as `say` says it, each of `keep` (the paths in it) whole though it
    holds a space; within the terminal's width also where install.sh captures it (to print once the
    venv that says it is gone): then stdout is a pipe, stderr the terminal."""
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import fit

    print(fit(text, columns(None if sys.stdout.isatty() else 2), keep))


@contextlib.contextmanager
def said_whole() -> Iterator[None]:
    """A message that stops the install (SystemExit with text: what is wrong with which file) wrapped
    as `say` wraps every other line."""
    try:
        yield
    except SystemExit as exc:
        if not isinstance(exc.code, str):
            raise
        from session_watcher.base.terminal import columns
        from session_watcher.core.text import fit

        raise SystemExit(fit(exc.code, columns(2))) from None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
