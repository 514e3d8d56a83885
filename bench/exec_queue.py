"""A warm `codex exec` prompt with an alert queued that exec cannot show (its stderr `2>log`), as CPU
per prompt, two checkouts interleaved: ``python -m bench.exec_queue OTHER_CHECKOUT [--runs 30]``.

The fixture thread (tests/fixtures/codex, 234 calls, its last call moved to 2 minutes ago: warm) is
folded by the prompt's own hook under a stand-in `codex exec` (a script named codex that stays the
hook's parent, its stderr a file opened for overwrite: nothing can be shown there, so the thread's
reminder at call 232 stays queued); then each round runs the same prompt once per checkout, each
on its own state folder, and takes the hook process's user + system CPU (wait4, through the
script). This checkout and OTHER_CHECKOUT (main's, for a before and after) run with the same
interpreter, each through the launcher install.sh writes (`python -I -S session-watcher-hook`),
written by that tree's code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THREAD = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba"


def _prompt(tree: Path, home: Path, folder: Path, rollout: Path) -> float:
    """One exec prompt's CPU seconds (its process tree: the script and the hook)."""
    ask = {"hook_event_name": "UserPromptSubmit", "model": "gpt-5.6-sol", "permission_mode": "default",
           "session_id": THREAD, "transcript_path": str(rollout), "cwd": str(folder), "turn_id": "t1",
           "prompt": "go on"}
    env = {**os.environ, "SESSION_WATCHER_HOME": str(home)}
    hook = str(folder / "launchers" / "session-watcher-hook")  # install.sh's, written by the tree's code
    argv = [str(folder / "codex"), "exec", sys.executable, "-I", "-S", hook, "UserPromptSubmit", "codex"]
    with (folder / "exec.log").open("w") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tree)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(ask).encode())
        proc.stdin.close()
        _pid, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from tests.test_codex_hooks import shifted

    root = Path(tempfile.mkdtemp(prefix="exec-queue-"))
    trees = {"this": REPO, "other": args.other.resolve()}
    rows: dict[str, tuple[Path, Path, Path]] = {}
    for name, _tree in trees.items():
        folder = root / name
        folder.mkdir()
        (folder / "home" / "config").mkdir(parents=True)
        (folder / "home" / "config" / "config.toml").write_text('[notify]\nchannels = ["message"]\nfallback = "none"\n')
        (folder / "launchers").mkdir()
        write = "import sys; from session_watcher.hooks.launchers import write; write(sys.argv[1])"
        subprocess.run([sys.executable, "-c", write, str(folder / "launchers")], check=True,
                       env={**os.environ, "PYTHONPATH": str(_tree)}, cwd=_tree)
        script = folder / "codex"
        script.write_text('#!/bin/sh\nshift\n"$@"\nexit $?\n')  # not exec'd: it stays the hook's parent
        script.chmod(0o755)
        rows[name] = (folder / "home", folder, shifted(folder, THREAD, 2))
    for name, tree in trees.items():  # the prompt's hook folds the thread, a bounded time a run
        for _ in range(80):
            _prompt(tree, *rows[name])
        state = json.loads((rows[name][0] / "state" / "sessions" / f"{THREAD}.json").read_text())
        if not state.get("outbox"):
            print(f"{name}: nothing queued; no measurement", file=sys.stderr)
            return 1
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():
            cpu[name].append(_prompt(tree, *rows[name]))
    this, other = statistics.median(cpu["this"]), statistics.median(cpu["other"])
    print(f"CPU per prompt, median of {args.runs}: this {this * 1000:.1f} ms, other {other * 1000:.1f} ms, "
          f"this / other {this / other:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
