"""The trick audit: what each speed trick buys end to end on its own command, with and without it in
the same rounds: ``python -m bench.tricks [--sections hook,statusline,cold,warm,pages,replay]
[--rounds N] [--generated] [--python VENV_PYTHON]``.

Every command runs as a whole process from the venv `install.sh` makes (built afresh from this
checkout in OUT/cache/install; `--python` takes another venv's interpreter). A round runs each
variant of a command once, in an order rotated from round to round; the table gives medians over the
rounds of the wall time and of the CPU time (user + system from wait4, the children the process
waited for included), and what the trick saves: 1 - with / without. A serial trick (one process) is
judged by its CPU time, which the machine's other load moves much less than the wall time; a
process pool by its wall time (it spends CPU to save wall). A trick stays when it saves >= 5 %
(`KEEP`) on its command.

The variants: the hook and the status line through the launcher install.sh wrote, and through copies
of it without one trick each (each on its own copy of the session: all fold the same API call
appended before each round); `report` and `replay` through a driver that patches one trick out (or
puts `concurrent.futures.ProcessPoolExecutor` in place of the project's pool: bench/stdlib_pool.py)
before it runs the CLI as its console script does, beside the driver that patches nothing. A trick
the installed code does not hold is said, not measured. Writes OUT/tricks.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench import run as bench_run
from bench import versus
from session_watcher.hooks.launchers import EXIT_MODULE, GC_THRESHOLD

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
KEEP = 0.05  # a trick stays when it saves at least this share of its command's time


def _nothing(_n: int) -> bytes:
    return b""


@dataclass
class Case:
    argv: list[str]
    stdin: Callable[[int], bytes] = _nothing  # the round's stdin
    env: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[], None] | None = None  # before each run
    trick: str | None = None  # what this variant goes without (None: a reference row)
    parallel: bool = False  # a process pool: judged by its wall time


@dataclass
class Section:
    title: str
    shipped: str  # the case with every trick, as users get it
    rounds: int
    cases: dict[str, Case] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    times: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    unmeasured: list[str] = field(default_factory=list)
    load: tuple[float, float] = (0.0, 0.0)  # the 1-minute load average when its rounds began and ended


def one(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one whole process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, cwd=cwd)
    assert p.stdin is not None
    assert p.stderr is not None
    try:
        p.stdin.write(stdin)
        p.stdin.close()
    except BrokenPipeError:
        pass
    err = p.stderr.read()
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.stderr.close()
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        sys.stderr.write(err.decode(errors="replace")[-400:])
    return wall, ru.ru_utime + ru.ru_stime, rc


def measure(section: Section, cwd: Path, say: Callable[[str], None], warmup: int = 1) -> None:
    """`warmup` rounds (not counted: page cache, a warm index's first build), then the rounds."""
    names = list(section.cases)
    section.times = {n: ([], []) for n in names}
    say(f"{section.title}: {len(names)} variants x {section.rounds} rounds")
    start = os.getloadavg()[0]
    for rnd in range(warmup + section.rounds):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            case = section.cases[name]
            if case.prepare is not None:
                case.prepare()
            wall, cpu, rc = one(case.argv, case.stdin(rnd), case.env, cwd)
            if rc:
                section.failures[name] = f"exit {rc}"
            if rnd >= warmup:
                section.times[name][0].append(wall)
                section.times[name][1].append(cpu)
    section.load = (start, os.getloadavg()[0])


# ---- the hook and the status line: install.sh's launcher, less one trick --------------------------


def launcher_variants(launcher: Path, tmp: Path, unmeasured: list[str]) -> dict[str, tuple[str, Path]]:
    """{variant: (the trick it goes without, its launcher)}: copies of install.sh's launcher without
    one trick each, and without all of them."""
    text = launcher.read_text()
    cuts = {
        "no os._exit": ("os._exit", f"from {EXIT_MODULE} import _exit\n_exit(rc)\n", "raise SystemExit(rc)\n"),
        "gc at 700": (f"the collector's first generation at {GC_THRESHOLD:,}",
                      f"gc.set_threshold({GC_THRESHOLD})\n", ""),
        "ordinary imports": ("the import finder", "from session_watcher.hooks.finder import install\ninstall()\n", ""),
    }
    out: dict[str, tuple[str, Path]] = {}
    bare = text
    for name, (trick, old, new) in cuts.items():
        if old not in text:
            unmeasured.append(f"{name}: {trick} is not in the launcher")
            continue
        bare = bare.replace(old, new)
        path = tmp / f"{launcher.name}-{name.replace(' ', '-').replace('.', '')}"
        path.write_text(text.replace(old, new))
        out[name] = (trick, path)
    if len(out) > 1:
        path = tmp / f"{launcher.name}-none"
        path.write_text(bare)
        out["none of them"] = (" and ".join(trick for trick, _ in out.values()), path)
    return out


def hook_section(kind: str, b: bench_run.Bench, sess: bench_run.Session, cwd: Path, files: list[Path],
                 rounds: int) -> Section:
    """The hook (PostToolUse, a Read of a known file) or the status line (`kind`), through
    install.sh's launcher and its variants, each on its own copy of the session's home."""
    python = str(b.python)
    launcher = b.bin / f"session-watcher-{kind}"
    event = ["PostToolUse"] if kind == "hook" else []

    def stdin(n: int) -> bytes:
        if kind == "hook":
            doc = bench_run.read_payload(sess.sid, sess.transcript, cwd, files[n % len(files)], n)
        else:
            doc = bench_run.statusline_payload(sess.sid, sess.transcript, cwd)
        return json.dumps(doc).encode()

    appended = [0]

    def append() -> None:  # one API call's lines, once a round: every variant folds it
        with sess.transcript.open("ab") as fh:
            fh.write(sess.chunks[appended[0] % len(sess.chunks)])
        appended[0] += 1

    title = "hook PostToolUse (Read, known file), 1 MB session" if kind == "hook" else "status line, 1 MB session"
    section = Section(title, "as installed", rounds)
    base = versus.env_for(b.tmp / "home-none")
    section.cases["python -I -c pass"] = Case([python, "-I", "-c", "pass"], env=base, prepare=append)
    section.cases["python -I -S -c pass"] = Case([python, "-I", "-S", "-c", "pass"], env=base)
    section.cases["as installed"] = Case([python, "-I", "-S", str(launcher), *event], stdin,
                                         versus.env_for(sess.home))
    for name, (trick, path) in launcher_variants(launcher, b.tmp, section.unmeasured).items():
        home = b.tmp / f"home-{kind}-{path.name}"
        shutil.copytree(sess.home, home, symlinks=True)
        section.cases[name] = Case([python, "-I", "-S", str(path), *event], stdin, versus.env_for(home), trick=trick)
    return section


# ---- report and replay: a driver, less one trick -------------------------------------------------

RUN = "from session_watcher.cli import run\nrun()\n"  # what the console script does
CLI_WITHOUT = "import sys\nfrom session_watcher import cli\nargs = sys.argv[1:]\n{body}\n"
NO_EXIT_BODY = """if args[:1] == ["report"]:
    import gc
    gc.disable()
sys.exit(cli.main(args))"""
GC_ON_BODY = """rc = cli.main(args)
sys.stdout.flush()
sys.stderr.flush()
import os
os._exit(rc)"""
ONE_PROCESS = "from session_watcher.state import pool\npool.cores = lambda: 1\n"  # the pool forks nothing
STDLIB = "import stdlib_pool\nstdlib_pool.patch()\n"
FOR_STDLIB = "the hand-written pool, for ProcessPoolExecutor"
POOL = ("state/pool.py", "def map_batches(")
PATCHES: dict[str, tuple[str, tuple[str, str], str]] = {
    # variant: (the trick, (a module of the package, text it holds while the trick is there), driver)
    "no os._exit": ("os._exit after a report", ("cli.py", "os._exit(rc)"), CLI_WITHOUT.format(body=NO_EXIT_BODY)),
    "gc on": ("gc off for the whole report command", ("cli.py", "gc.disable()"), CLI_WITHOUT.format(body=GC_ON_BODY)),
    "no stringzilla": ("stringzilla's marker search", ("reports/parse.py", "_simd_find"),
                       "from session_watcher.reports import parse\nparse._simd_find = None\n" + RUN),
    "one process (scan)": ("the scan's forked pool", POOL, ONE_PROCESS + RUN),
    "ProcessPoolExecutor (scan)": (FOR_STDLIB, POOL, STDLIB + RUN),
    "one process (pages)": ("the pages' forked pool", POOL, ONE_PROCESS + RUN),
    "ProcessPoolExecutor (pages)": (FOR_STDLIB, POOL, STDLIB + RUN),
    "one process (replay)": ("replay's two-core parse", ("state/ahead.py", "pool.fork("), ONE_PROCESS + RUN),
}


def package_of(python: Path) -> Path:
    """The folder of the session_watcher package `python` imports (found, not imported)."""
    code = "import importlib.util as u; print(u.find_spec('session_watcher').submodule_search_locations[0])"
    got = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True)
    return Path(got.stdout.strip())


def cli_section(title: str, python: Path, tmp: Path, variants: list[str], args: Callable[[str], list[str]],
                rounds: int, prepare: Callable[[str], None] | None = None,
                refs: dict[str, list[str]] | None = None) -> Section:
    """A command run by the drivers of `variants` ("shipped", patching nothing, first), `args(tag)`
    its arguments for each (tag: the variant's own files), `prepare(tag)` before each run; `refs`:
    reference rows, run as they are."""
    section = Section(title, "shipped", rounds)
    for ref, argv in (refs or {}).items():
        section.cases[ref] = Case(argv, env=versus.env_for(tmp / "home-ref"))
    shutil.copy(Path(__file__).with_name("stdlib_pool.py"), tmp / "stdlib_pool.py")
    package = package_of(python)
    for name in ["shipped", *variants]:
        trick, code = None, RUN
        if name != "shipped":
            trick, (module, text), code = PATCHES[name]
            there = (package / module).is_file() and text in (package / module).read_text()
            if not there:
                section.unmeasured.append(f"{name}: {trick} is not in the code (no `{text}` in {module})")
                continue
        tag = f"{title[:12]}-{name}".translate(str.maketrans(" /()", "____"))
        driver = tmp / f"driver-{tag}.py"
        driver.write_text(code)
        section.cases[name] = Case(
            [str(python), str(driver), *args(tag)], env=versus.env_for(tmp / f"home-{tag}"), trick=trick,
            parallel=name.startswith(("one process", "ProcessPoolExecutor")),
            prepare=None if prepare is None else functools.partial(prepare, tag))
    return section


def report_sections(wanted: set[str], label: str, projects: Path, python: Path, tmp: Path, rounds: int | None,
                    say: Callable[[str], None]) -> list[Section]:
    out = []
    serial = ["no os._exit", "gc on"]
    if "cold" in wanted:
        def cold(tag: str) -> list[str]:
            return ["report", "--projects", str(projects), "--json", "--index", str(tmp / f"index-{tag}.sqlite3")]

        def empty(tag: str) -> None:
            (tmp / f"index-{tag}.sqlite3").unlink(missing_ok=True)

        variants = [*serial, "no stringzilla", "one process (scan)", "ProcessPoolExecutor (scan)"]
        out.append(cli_section(f"report --json cold, {label}", python, tmp, variants, cold, rounds or 15, empty))
    if "warm" in wanted:
        def warm(tag: str) -> list[str]:  # the warm-up round builds the index
            return ["report", "--projects", str(projects), "--json", "--index", str(tmp / f"warm-{tag}.sqlite3")]

        version = [str(python.parent / "session-watcher"), "--version"]
        out.append(cli_section(f"report --json warm, {label}", python, tmp, serial, warm, rounds or 15,
                               refs={"session-watcher --version (the CLI's start-up)": version}))
    if "pages" in wanted:
        def pages(tag: str) -> list[str]:
            return ["report", "--projects", str(projects), "--html", str(tmp / f"pages-{tag}" / "r.html"), "--pages",
                    "--index", str(tmp / f"warm-pages-{tag}.sqlite3")]

        def folder(tag: str) -> None:
            shutil.rmtree(tmp / f"pages-{tag}", ignore_errors=True)
            (tmp / f"pages-{tag}").mkdir()

        variants = ["one process (pages)", "ProcessPoolExecutor (pages)", "gc on"]
        out.append(cli_section(f"report --html --pages, {label}", python, tmp, variants, pages, rounds or 5, folder))
    for section in out:
        measure(section, tmp, say)
    return out


# ---- the table ------------------------------------------------------------------------------------


def table(section: Section) -> list[str]:
    out = [f"## {section.title} (medians of {section.rounds} interleaved rounds; load average "
           f"{section.load[0]:.1f} to {section.load[1]:.1f})", "",
           "| variant | goes without | wall ms | CPU ms | the trick saves: wall | CPU | verdict |",
           "|---|---|---|---|---|---|---|"]
    med = {n: (statistics.median(w), statistics.median(c)) for n, (w, c) in section.times.items() if w}
    ref_w, ref_c = med[section.shipped]
    for name, case in section.cases.items():
        w, c = med[name]
        if case.trick is None:
            out.append(f"| {name} | | {w * 1000:.1f} | {c * 1000:.1f} | | | |")
            continue
        save_w, save_c = 1 - ref_w / w, 1 - ref_c / c
        judged = save_w if case.parallel else save_c
        out.append(f"| {name} | {case.trick} | {w * 1000:.1f} | {c * 1000:.1f} | {save_w:+.1%} | {save_c:+.1%} "
                   f"| {'keep' if judged >= KEEP else 'remove'} ({'wall' if case.parallel else 'CPU'}) |")
    out += [f"\n{name}: FAILED ({why})" for name, why in section.failures.items()]
    out += [f"\n{u}" for u in section.unmeasured]
    return [*out, ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tricks", description=__doc__)
    ap.add_argument("--sections", default="hook,statusline,cold,warm,pages,replay")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds per section (default: 80 hook and status line, 15 report and replay, 5 pages)")
    ap.add_argument("--generated", action="store_true", help="report cold and warm on the 1.2 GB generated corpus too")
    ap.add_argument("--python", type=Path, default=None, help="another venv's interpreter, not a fresh install.sh venv")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args(argv)
    out: Path = args.out.resolve()
    cache = out / "cache"
    cache.mkdir(parents=True, exist_ok=True)

    def say(msg: str) -> None:
        print(f"[tricks {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    python = args.python.absolute() if args.python else bench_run.fresh_venv(out, say)
    wanted = set(args.sections.split(","))
    sections: list[Section] = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sw-tricks-") as tmp_name:
        tmp = Path(tmp_name)
        if wanted & {"hook", "statusline"}:
            b, sess, transcript, cwd, files = bench_run.small_session(out, tmp, python, 200)
            if sess is None:
                return 1
            for kind in ("hook", "statusline"):
                if kind in wanted:
                    section = hook_section(kind, b, sess, cwd, files[:200], args.rounds or 80)
                    measure(section, cwd, say, warmup=4)
                    sections.append(section)
            os.truncate(transcript, sess.size0)  # the cached input as generated
        if wanted & {"cold", "warm", "pages"}:
            for label, root in versus.corpora(cache, say):
                if label.startswith("generated") and not args.generated:
                    continue
                here = wanted - {"pages"} if label.startswith("generated") else wanted  # 2,608 pages: minutes a run
                sections += report_sections(here, label, root / "projects", python, tmp, args.rounds, say)
        if "replay" in wanted:
            path = cache / "replay-100MB.jsonl"
            if not path.exists():
                from bench import generate

                generate.write_transcript(path, 100_000_000, 12)
            section = cli_section(f"replay --json, {path.stat().st_size / 1e6:.0f} MB session", python, tmp,
                                  ["one process (replay)"], lambda _t: ["replay", str(path), "--json"],
                                  args.rounds or 15)
            measure(section, tmp, say)
            sections.append(section)
    text = [f"# bench.tricks ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
            f"{load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {python})", ""]
    for section in sections:
        text += table(section)
    (out / "tricks.md").write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
