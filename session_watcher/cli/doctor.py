"""`doctor`: what is installed where, whether hooks fire, and what would worry a careful user."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
import time

from session_watcher.base import paths, route
from session_watcher.core.errors import StateRejected
from session_watcher.core.numbers import duration
from session_watcher.core.usererrors import ConfigError


def _n(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 file`, `3 files` (`nouns`: a plural not made with an s, `entries`): `1 files` read for one."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def _folder(path: str, want: int = 0o700) -> str:
    """A folder and whether only you can read it, in words."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return f"{path}  (not created yet: made on first use)"
    if mode & 0o077:
        return f"{path}  (others can read it, {mode:o}: run `chmod {want:o} {path}`)"
    return f"{path}  (private, {mode:o})"


STALE_INSTALL_SECONDS = 600  # hooks/run.sh starts an install again once its marker is this old


def _install_pid(marker: str) -> int | None:
    """The installing shell's pid the marker holds; None for anything but a process id (0, a
    negative one: a process group; past a C int: no process, and os.kill would overflow)."""
    try:
        pid = int(paths.read_file(os.path.join(marker, "pid"), 64).strip())
    except (OSError, ValueError):
        return None
    return pid if 0 < pid < 1 << 31 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


TAIL_BYTES = 1 << 20  # what doctor reads of a log: its last MiB


def _tail_text(path: str) -> str:
    """The last TAIL_BYTES of a log, as text; a regular file only (`paths.open_file`: a FIFO
    planted there would block doctor for good)."""
    fd = paths.open_file(path)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL_BYTES)
        return os.pread(fd, size - start, start).decode("utf-8", "replace")
    finally:
        os.close(fd)


LOG_SHOWN = 140  # the characters of the log's last entry doctor shows


def _at_word(line: str) -> tuple[str, bool]:
    """A log's line as doctor shows it: (whole when short, else its first LOG_SHOWN characters cut at
    a space; whether it was cut). Cut bare, it read as the whole message ("known: include, exclude,
    cRati")."""
    line = line.strip()
    if len(line) <= LOG_SHOWN:
        return line, False
    return line[:LOG_SHOWN + 1].rsplit(" ", 1)[0][:LOG_SHOWN], True  # a word ending at the cut is kept


def _entry(line: str) -> str:
    """The log's last entry as doctor's `log` line shows it (`_at_word`), a cut one marked as cut with
    the log's path where the rest is."""
    head, cut = _at_word(line)
    return f"{head} ... (the whole entry: {paths.log_file()})" if cut else head


def _entry_age(line: str, now: float) -> str:
    """', 3 days ago' of a log entry (its local time first, `base.logs`): an entry of weeks ago, as one
    an older version wrote before an upgrade, is told from one of now; '' where none is read, or where
    the entry is dated after `now` (written under a clock or a time zone ahead of this one: "0 s ago"
    would call it news of now; its own time stands at its start)."""
    try:
        at = time.mktime(time.strptime(line.strip()[:19], "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return ""
    return f", {duration(now - at)} ago" if at <= now else ""


def _last_line(path: str) -> str:
    try:
        text = _tail_text(path)
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    head, cut = _at_word(lines[-1])  # the log is named before it ("LOG ends: ...")
    return f"{head} ..." if cut else head


def _plugin_lines(now: float) -> list[str]:
    """The plugin route: its venv in each `${CLAUDE_PLUGIN_DATA}`, an install that is stuck or failed
    (one line, however many data folders: one per marketplace the plugin came from).

    hooks/run.sh keeps `.installing/` (with the installing shell's pid) while its background install
    runs, and starts it again when that shell is gone or the marker is over 10 minutes old; a failed
    build waits `retry_wait_min` before the next (`.failed`: the stamp and the failures in a row)."""
    import glob

    folders = [os.environ["CLAUDE_PLUGIN_DATA"]] if os.environ.get("CLAUDE_PLUGIN_DATA") else []
    for plugins in route.plugin_roots():
        folders += sorted(glob.glob(os.path.join(glob.escape(plugins), "data", "session-watcher-*")))
    out = []
    for folder in dict.fromkeys(folders):
        out.append(f"{folder}: {_venv_state(folder, now)}")
    return [f"plugin     {' | '.join(out)}"] if out else []


def _built_for(folder: str) -> str | None:
    """The plugin version the folder's venv was built for (hooks/venv.sh's stamp), when it says."""
    import re

    try:  # a regular file only (paths.read_file): a FIFO there would block doctor
        stamp = paths.read_file(os.path.join(folder, "venv", ".plugin-version"), 1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    stamp = stamp.split("\n", 1)[0]
    m = re.search(r'"version"\s*:\s*"([^"]*)"', stamp)
    return m.group(1) if m else None


def _venv_state(folder: str, now: float) -> str:
    """A plugin data folder's venv in words: ready (for which version), being built, stuck, failed."""
    marker = os.path.join(folder, ".installing")
    log = os.path.join(folder, "install.log")
    ready = os.path.isfile(os.path.join(folder, "venv", "bin", "session-watcher-hook"))
    built = _built_for(folder)
    have = f"ready (built for {built})" if ready and built else "ready" if ready else ""
    try:
        age = now - os.stat(marker).st_mtime
    except OSError:
        age = None
    pid = _install_pid(marker) if age is not None else None
    gone = pid is not None and not _alive(pid)
    doing = "update" if ready else "install"
    if age is not None and (gone or age > STALE_INSTALL_SECONDS):
        why = "its process is gone" if gone else f"started {duration(age)} ago"
        return ((f"{have}; " if have else "") + f"{doing} STUCK ({why} and it never finished; the next hook run "
                f"starts it again; log: {log})")
    if age is not None:
        return (f"{have}; " if have else "") + f"{'updating' if ready else 'installing'} (started {age:.0f} s ago)"
    ends = f"{log} ends: {_last_line(log) or '(empty)'}"
    failed = _failed(folder, now)
    if failed:
        return (f"{have}, still serving; " if have else "") + f"{doing} FAILED {failed}; {ends}"
    if ready:
        return have
    if os.path.exists(log):
        return f"install FAILED (the next hook run tries again; {ends})"
    return "not installed yet (the first hook run installs it)"


MAX_RETRY_MIN = 30  # hooks/run.sh: a failed build waits 1, 2, 4 ... minutes, 30 at most, before the next


def retry_wait_min(failures: int) -> int:
    """The minutes hooks/run.sh waits after `failures` failed builds in a row before the next."""
    return min(MAX_RETRY_MIN, 1 << (max(1, failures) - 1))


def _failed(folder: str, now: float) -> str | None:
    """A failed build in words: how many times in a row, when the next hook run tries again, and how
    to retry now; None when the last build did not fail."""
    marker = os.path.join(folder, ".failed")
    try:
        lines = paths.read_file(marker, 1 << 16).decode("utf-8", "replace").splitlines()
        at = os.stat(marker).st_mtime
    except OSError:
        return None
    count = lines[1] if len(lines) > 1 else ""  # hooks/run.sh's rule: ASCII digits, else 1 (never int()'s
    failures = int(count) if count.isascii() and count.isdigit() and len(count) <= 9 else 1  # other digits)
    due = at + retry_wait_min(failures) * 60
    when = ("the next hook run tries again" if due <= now else
            f"the first hook run after {time.strftime('%H:%M', time.localtime(due))} tries again")
    times = "once" if failures == 1 else f"{failures} times in a row"
    return f"({times}; {when}; to retry at the next hook run: rm {shlex.quote(marker)})"


def _hook_events(hooks_json: str) -> list[str]:
    try:
        doc = json.loads(paths.read_file(hooks_json, SETTINGS_MAX))
    except (OSError, ValueError):
        return []
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    return sorted(hooks) if isinstance(hooks, dict) else []


def _plugin_hooks_lines(installs: list[tuple[str, str, bool]]) -> list[str]:
    """Each install of the plugin and the events its hooks.json registers (one line)."""
    out = []
    for label, root, on in installs:
        events = _hook_events(os.path.join(root, "hooks", "hooks.json"))
        state = "enabled" if on else "installed, disabled"
        out.append(f"{label} ({state}, {root}): {', '.join(events) or 'no events'}")
    return [f"hooks      the plugin {' | '.join(out)}"] if out else []


def _wrapper_lines() -> list[str]:
    """Where a `pip install` by hand put pip's console-script wrapper back over the command an install
    wrote into this venv (it imports `re` and more on every command): the one command that writes the
    fast one again (`hooks.launchers`, as install.sh and the plugin's venv.sh run it)."""
    from session_watcher.hooks.launchers import pip_wrapper_back

    bin_dir = os.path.dirname(sys.executable)
    if not pip_wrapper_back(bin_dir):
        return []
    again = shlex.join([sys.executable, "-I", "-m", "session_watcher.hooks.launchers", bin_dir])
    return [f"command    {os.path.join(bin_dir, 'session-watcher')} is pip's wrapper again (a `pip install` "
            f"into this venv wrote it; it imports more on every command): `{again}` writes the fast one back"]


def _command_line() -> str:
    from session_watcher.cli.install import bin_home, on_path

    link = os.path.join(bin_home(), "session-watcher")
    if not os.path.lexists(link):
        command = route.cli_command()
        if command != route.COMMAND:  # the plugin route: its own command, which nothing puts on PATH
            return f"command    {command} (the plugin's; not on your PATH: run it by this path)"
        return f"command    not linked in {bin_home()} (./install.sh links it)"
    where = "on your PATH" if on_path(bin_home()) else "NOT on your PATH"
    broken = "" if os.path.exists(link) else " (a broken link: run ./install.sh again)"
    return f"command    {link}{broken}; {bin_home()} is {where}"


SETTINGS_MAX = 16 << 20  # Claude Code's settings.json, read by doctor and the installer


def _codex_alone() -> bool:
    """install.sh installed for Codex and not for Claude Code (its records: it does so where Codex
    is the one agent on the machine, cli.agents_here)."""
    from session_watcher.cli.agents_here import claude_installed, codex_record

    return os.path.exists(codex_record()) and not claude_installed()


def _left_record(settings: str) -> str | None:
    """What doctor says, `settings` (Claude Code's settings file now) being absent, of install.sh's
    record of the hooks it wrote into a settings file gone since (Claude Code removed, its folder with
    it; or the file deleted): how it goes. None where there is no such record."""
    from session_watcher.cli.agents_here import claude_here, claude_record, claude_record_settings, settings_gone

    wrote = claude_record_settings()
    if wrote is None or os.path.lexists(wrote):
        return None
    into = "there" if wrote == settings else f"into {wrote} (gone since)"
    record = claude_record()
    if not settings_gone(wrote):  # a folder not reachable now: install.sh keeps the record
        return (f"settings   {settings}: absent; install.sh wrote session-watcher's hooks into {wrote}, whose folder "
                "cannot be reached now (a link to nowhere, a drive not mounted, or not readable): its record is kept "
                f"({record}); ./install.sh --uninstall forgets it")
    if claude_here():
        return (f"settings   {settings}: absent, though install.sh wrote session-watcher's hooks {into} (its "
                f"record: {record}): ./install.sh again writes them")
    return (f"settings   {settings}: absent: Claude Code is not on this machine any more, and install.sh's record "
            f"of the hooks it wrote {into} is left over: ./install.sh again forgets it, or remove it: "
            f"rm {shlex.quote(record)}")


def _settings_lines(plugin_on: bool = False) -> list[str]:
    out = []
    for cfg_dir in paths.claude_config_dirs()[:1]:
        settings = os.path.join(cfg_dir, "settings.json")
        try:
            doc = json.loads(paths.read_file(settings, SETTINGS_MAX))
        except FileNotFoundError:
            left = _left_record(settings)
            if left is not None:
                out.append(left)
            elif _codex_alone():  # install.sh writes nothing of Claude Code's where it is not
                out.append(f"settings   {settings}: absent (install.sh installed for Codex alone: Claude Code "
                           "was not on this machine; ./install.sh again once it is)")
            else:
                out.append(f"settings   {settings}: absent (install with ./install.sh, or use the plugin)")
            continue
        except (OSError, ValueError) as exc:
            out.append(f"settings   {settings}: unreadable ({exc})")
            continue
        hooks = doc.get("hooks", {}) if isinstance(doc, dict) else {}
        hooks = hooks if isinstance(hooks, dict) else {}  # an odd entry is the installer's to name
        from session_watcher.cli.install import hooks_of_ours, twice_words

        ours = hooks_of_ours(hooks)
        if ours and plugin_on:  # both routes: each event's hook runs twice (docs/install.md)
            out.append(f"settings   {twice_words(settings, ours)}")
        elif ours or not plugin_on:
            out.append(f"settings   {settings}: hooks for {', '.join(ours) or 'no events'}")
        else:
            out.append(f"settings   {settings}: no hooks of ours (the enabled plugin's run instead)")
        sl = doc.get("statusLine") if isinstance(doc, dict) else None
        mine = isinstance(sl, dict) and "session-watcher" in str(sl.get("command", ""))
        out.append(f"statusLine {'session-watcher' if mine else ('another command' if sl else 'not set')}")
    return out


def _mode(path: str) -> int:
    """A state file's mode; 0 for one gone since it was listed (a hook quarantined it, the daily
    sweep removed it: state.tidy)."""
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def _held_locks(folder: str) -> list[str]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return []
    held = []
    try:  # only a folder of ours (a link or another user's folder is reported by the sessions line)
        dfd = paths.open_private_dir(folder)
    except OSError:
        return []
    try:
        names = [n for n in os.listdir(dfd) if n.endswith(".lock")]
    finally:
        os.close(dfd)
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            held.append(name)
        finally:
            os.close(fd)
    return held


GUARD_LOOKS = 16  # the newest states doctor reads for one with an API call (a hook-only one is skipped)


def _cold_cache_line(session_ids: list[str]) -> str:
    """What the cold-cache guard would say of the newest session with an API call now, and from which
    source; newer ones with none (`claude plugin install` and a session left before its first prompt
    run the hooks too) are passed over, the newest named and the rest counted, as `status` says them
    (`statustext.passed_over`); with none among the newest
    GUARD_LOOKS, the newest's."""
    passed: list[str] = []
    for sid in session_ids[:GUARD_LOOKS]:
        line = _cold_cache_one(sid, passed)
        if line is not None:
            return line
        passed.append(sid)
    return _cold_cache_one(session_ids[0], [], final=True) or ""


def _cold_cache_one(session_id: str, passed: list[str], final: bool = False) -> str | None:
    """`_cold_cache_line` of one session; None where it counted no API call (unless `final`)."""
    from session_watcher.base import config
    from session_watcher.core.guard import cold_cache
    from session_watcher.core.statustext import passed_over
    from session_watcher.state import store

    try:  # read only: a file that cannot be used is quarantined under the session's lock, by a hook
        state = store.load(store.session_file(session_id), session_id, readonly=True)
    except StateRejected as exc:
        return f"guard      newest session: its state cannot be used ({exc}; the next hook run quarantines it)"
    except OSError:
        state = None
    if state is None:
        return "guard      newest session: no state to read" if final or not passed else None
    if not final and not state["engine"].get("calls", 0):  # passed over; one with calls but no cache
        return None  # write seen is the session at work all the same ("cannot tell yet"), not passed over
    cfg, _ = config.load_cached(state["config"], state["context"].get("project"))
    got = cold_cache(state, cfg, time.time())
    over = f" ({session_id[:8]}; {passed_over([p[:8] for p in passed])})" if passed else ""  # as `status` says it
    head = f"guard      {cfg.get('guard', 'warn')} (cold-cache guard); newest session{over}"
    if got is None:
        return f"{head}: cannot tell yet (no API call or no cache write seen)"
    life = got["lifetimeSeconds"]
    lasts = f", lasts {duration(life)}" if life else ""
    state_word = "cold" if got["cold"] else "warm"
    from session_watcher.core.eoq import cache_class
    from session_watcher.core.prices_openai import class_words

    # the class whose lifetime counts: a Codex thread's (codex-30m, said "Codex 30-minute"), not the
    # usage's "5m" it is stored as
    named = class_words(cache_class(got["ttl"], state["context"].get("model")) or got["ttl"])
    return (f"{head}: {state_word} by {GUARD_SOURCE.get(got['source'], got['source'])} ({named} cache{lasts}), "
            f"last call {duration(got['idleSeconds'] or 0)} ago")


# where the guard's verdict comes from (`core.guard.cold_cache`'s `source`), in words: the identifier stood
# on the line as it is, "warm by prompt_cache", "cold by ttl"
GUARD_SOURCE = {
    "prompt_cache": "Claude Code's own countdown",
    "session_start": "Claude Code's word at the resume",
    "ttl": "the documented lifetime",
    "cliff": "the lifetime your own returns show (`report`)",
}


ON_DISK_BOUND = 1000  # doctor counts the sessions on disk up to this many; past it, it says "1000+"


def _unwatched_line(start: str) -> str:
    """The sessions line where no hook has written yet: how many sessions are on disk (what `report`
    lists), so "none" is not read as none at all, and when the hooks start. Their folders listed, no
    transcript read, up to ON_DISK_BOUND: doctor costs the same after a year of sessions."""
    from session_watcher import agents

    try:
        on_disk = agents.sessions_on_disk(ON_DISK_BOUND + 1)  # one more: exactly the bound is said as it is
    except OSError:  # a folder that cannot be read: said as before, with no count
        on_disk = 0
    if not on_disk:
        return f"sessions   none yet: hooks have not fired (start {start})"
    next_one = " ".join(word for word in start.split() if word != "a")  # "Claude Code session or Codex thread"
    said = ("1 session is" if on_disk == 1 else f"{ON_DISK_BOUND}+ sessions are" if on_disk > ON_DISK_BOUND
            else f"{on_disk} sessions are")
    return (f"sessions   none watched yet: {said} on disk (`session-watcher report` reads them), but the hooks "
            f"have not fired for any: they start with the next {next_one} (one open since before the install may "
            "need its client restarted)")


def report() -> tuple[list[str], bool]:
    from session_watcher.base import config
    from session_watcher.state import store

    ok = True
    lines = [f"python     {sys.executable} ({sys.version.split()[0]})"]
    lines.append(_command_line())
    lines += _wrapper_lines()
    ignored = paths.home_ignored()
    if ignored is not None:  # it would have put state files wherever a hook runs: a project's tree
        ok = False
        lines.append(f"home       SESSION_WATCHER_HOME={ignored!r} is relative: ignored (make it absolute)")
    lines.append(f"state dir  {_folder(paths.state_dir())}")
    from session_watcher.state.shell import working_folder

    here = working_folder()  # None: the folder it runs in was removed
    try:
        cfg_files = config.config_files(here)
        config.load(here)
        used = ", ".join(f for f in cfg_files if os.path.exists(f)) or "the defaults"
        lines.append(f"config     ok, {used}; folder {_folder(paths.config_dir())}")
        for f in paths.project_config_unread(here):
            lines.append(f"config     {f} is not read: a project has one file, {cfg_files[-1]} counts")
        lines += [f"config     {said}" for said in config.old_names(here)]  # guard = "block": what it is now
    except ConfigError:  # each file left out, in the words every command that reads the config says it on stderr
        ok = False
        lines += [f"config     ERROR {config.left_out(err)}" for err in config.load_layers(here)[1]]
    installs = route.plugin_installs()
    lines += _settings_lines(any(on for _, _, on in installs))
    lines += _plugin_hooks_lines(installs)
    from session_watcher.cli.install_codex import doctor_lines as codex_lines  # agents.codex

    lines += codex_lines()
    from session_watcher.otlp.exporter import doctor_line

    lines.append(doctor_line())
    plugin = _plugin_lines(time.time())
    if any(" STUCK " in ln or " FAILED " in ln for ln in plugin):
        ok = False
    lines += plugin
    try:
        sessions, listed = store.list_sessions(), True
    except OSError as exc:  # e.g. a file where the state folder belongs: hooks cannot save
        sessions, listed, ok = [], False, False
        lines.append(f"sessions   ERROR {exc}")
    if sessions:
        age = time.time() - sessions[0][0]
        lines.append(f"sessions   {len(sessions)}; last hook wrote {duration(age)} ago ({sessions[0][1]})")
    elif listed:
        from session_watcher.cli.install_codex import record_file

        start = ("a Codex thread" if _codex_alone() else
                 "a Claude Code session or a Codex thread" if os.path.exists(record_file()) else
                 "a Claude Code session")
        lines.append(_unwatched_line(start))
    if sessions:
        lines.append(_cold_cache_line([sid for _, sid in sessions]))
    wide = [sid for _, sid in sessions if _mode(store.session_file(sid)) & 0o077]
    if wide:
        ok = False
        lines.append(f"perms      {_n(len(wide), 'state file')} readable by others")
    held = _held_locks(paths.sessions_dir())
    lines.append(f"locks      {len(held)} held now" + (f": {', '.join(held)}" if held else ""))
    try:
        quarantined = os.listdir(paths.quarantine_dir())
    except OSError:
        quarantined = []
    where = f" in {paths.quarantine_dir()}" if quarantined else ""
    lines.append(f"quarantine {_n(len(quarantined), 'file')}{where}")
    folder = f"; folder {_folder(paths.log_dir())}"
    try:
        errors = [ln for ln in _tail_text(paths.log_file()).splitlines() if " pid " in ln]
        lines.append(f"log        {_n(len(errors), 'entry', 'entries')}; last{_entry_age(errors[-1], time.time())}: "
                     f"{_entry(errors[-1])}" if errors else f"log        empty{folder}")
    except FileNotFoundError:
        lines.append(f"log        empty{folder}")
    except OSError as exc:
        ok = False
        lines.append(f"log        ERROR {paths.log_file()}: {exc.strerror or exc}")
    try:
        from session_watcher.cli.notify import doctor_lines

        lines += doctor_lines()
    except ImportError:
        pass
    return lines, ok
