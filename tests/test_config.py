"""Config: `config set` keeps comments, bad files are named with their key, hooks fall back once."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest

from session_watcher.base import config, config_cache
from tests.oracle import REPO, TRANSCRIPTS, hook, one_message, oracle, payload, sw
from tests.statefile import load_state

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

EXAMPLE = REPO / "config.example.toml"


def user_file() -> Path:
    return Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"


def log_text() -> str:
    f = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    return f.read_text() if f.exists() else ""


def test_example_documents_every_key_and_is_valid() -> None:
    doc = tomllib.loads(EXAMPLE.read_text())
    assert config.validate(str(EXAMPLE), doc) == {k: v for k, v in config.DEFAULTS.items() if k in doc}
    text = EXAMPLE.read_text()
    for key in config.known_keys():
        assert key.split(".")[-1] in text, key


def test_config_set_keeps_comments(tmp_path: Path) -> None:
    f = user_file()
    f.parent.mkdir(parents=True)
    shutil.copy(EXAMPLE, f)
    f.chmod(0o640)
    comments = [line.strip() for line in EXAMPLE.read_text().splitlines() if "#" in line]
    proc = sw("config", "set", "bp_amber", "0.2")
    assert proc.returncode == 0, proc.stderr
    proc = sw("config", "set", "notify.channels", '["terminal", "message"]')
    assert proc.returncode == 0, proc.stderr
    proc = sw("config", "set", "cRatio", "15")
    assert proc.returncode == 0, proc.stderr
    text = f.read_text()
    for c in comments:
        # the comment part of each line survives (a value before it may have changed)
        assert c[c.index("#"):] in text
    doc = tomllib.loads(text)
    assert doc["bp_amber"] == 0.2
    assert doc["notify"]["channels"] == ["terminal", "message"]
    assert doc["cRatio"] == 15
    assert doc["bp_red"] == 0.25
    assert f.stat().st_mode & 0o777 == 0o640  # the user's file keeps its mode (a new one is 0600)
    shown = json.loads(sw("config", "show", "--json").stdout)
    assert shown["effective"]["bp_amber"] == 0.2
    assert shown["effective"]["notify"]["fallback"] == "message"


def test_config_set_creates_the_file() -> None:
    assert not user_file().exists()
    assert sw("config", "set", "exclude", '["*.lock"]').returncode == 0
    assert tomllib.loads(user_file().read_text()) == {"exclude": ["*.lock"]}


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("notify_dwell", "abc", "whole number"),
    ("notify_dwell", "0", "whole number"),
    ("bp_amber", '"high"', "a number from 0.001 to 10"),
    ("include", "3", "list of glob"),
    ("notify.channels", '["pigeon"]', 'a list drawn from "desktop", "terminal", "message", got'),
    # the modes as the config writes them, not the old name "block" (read as "ask") nor a Python list
    ("guard", "nope", 'expected one of "ask", "warn", "off", got'),
    ("no_such_key", "1", "unknown key 'no_such_key' (`config show` lists every key)"),
    ("remind_min", "20", "did you mean 'notify.remind_min'?"),  # `config show` prints it under [notify]
    ("notify.remind", "20", "did you mean 'notify.remind_min'?"),  # a close spelling
    ("bp_amber", "5", "bp_red (0.25) would be below bp_amber (5)"),  # the default bp_red: refused, not left out
])
def test_config_set_wrong_value_is_one_line_naming_its_source_and_key(key: str, value: str, expected: str) -> None:
    """A key or value the command line gave that cannot be set: exit 2, as every command's bad
    command line (it was 1, as a fault of the file's own still is: below)."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("# mine\nbp_amber = 0.15\n")
    proc = sw("config", "set", key, value)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    err = one_message(err)
    # a value is checked against the file's own settings (bp_red), so the file is named; a value
    # refused on its own is the command line's: `config set` named, not the file (it blamed the
    # file); an unknown key is the command line's too: named with the key it may have meant, short
    # of the width
    unknown = expected.startswith(("unknown key", "did you mean"))
    with_file = expected.startswith("bp_red")
    assert (str(f) in err) is with_file
    assert unknown or with_file or f"config set: key '{key}': expected " in err, err
    assert not unknown or len(err) < 120, err
    assert key in err
    assert expected in err
    assert f.read_text() == "# mine\nbp_amber = 0.15\n"  # untouched


@pytest.mark.parametrize(("text", "key"), [
    ("nosuch = 1\n", "nosuch"),
    ("bp_amber = 0.3\nbp_red = 0.2\n", "bp_red"),
])
def test_config_set_over_a_file_at_fault_is_the_files_error(text: str, key: str) -> None:
    """A good key and value over a file whose own keys break a rule (set by hand): the file's
    fault, named, exit 1 (not the command line's 2); the file is left as it is."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text(text)
    proc = sw("config", "set", "notify_dwell", "3")
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode()
    err = one_message(err)
    assert str(f) in err
    assert f"'{key}'" in err
    assert f.read_text() == text


@pytest.mark.parametrize(("text", "key"), [
    ('bp_amber = "high"\n', "bp_amber"),
    ("notify_dwell = 2.5\n", "notify_dwell"),
    ("[notify]\nfallback = \"pager\"\n", "notify.fallback"),
    ("notify = 3\n", "notify"),
    ("bp_amber = 0.3\nbp_red = 0.2\n", "bp_red"),
    ("bp_amber = 5\n", "bp_amber"),  # above the default bp_red: the key the file sets is named
])
def test_bad_user_file_is_reported_with_file_and_key(text: str, key: str) -> None:
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text(text)
    proc = sw("config", "show")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    err = one_message(err)
    assert str(f) in err
    assert f"'{key}'" in err


def test_bad_project_file_names_the_project_file(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    pf = proj / ".claude" / "session-watcher.toml"
    pf.write_text("exclude = \"docs/*\"\n")
    proc = sw("config", "show", "--project", str(proj))
    assert proc.returncode == 1
    assert str(pf) in proc.stderr.decode()
    assert "'exclude'" in proc.stderr.decode()
    # not TOML at all: the file is named too
    pf.write_text("exclude = [\n")
    proc = sw("config", "show", "--project", str(proj))
    assert proc.returncode == 1
    assert str(pf) in proc.stderr.decode()


def test_project_file_wins_key_by_key(tmp_path: Path) -> None:
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("bp_amber = 0.2\nnotify_dwell = 5\n")
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "session-watcher.toml").write_text("bp_amber = 0.22\nexclude = [\"docs/*\"]\n")
    eff = json.loads(sw("config", "show", "--json", "--project", str(proj)).stdout)["effective"]
    assert eff["bp_amber"] == 0.22
    assert eff["notify_dwell"] == 5
    assert eff["exclude"] == ["docs/*"]
    assert eff["notify"] == {"channels": ["desktop"], "fallback": "message", "remind_min": 10}


def test_project_set_over_a_user_file_left_out_is_checked_as_load_sees_it(tmp_path: Path) -> None:
    """A user file left out whole (its bp_amber 0.5 over the default bp_red 0.25) does not count under
    a project's `config set`, as it does not count when the files are loaded: bp_red 0.3 in the
    project is taken (before: refused as "below bp_amber (0.5)", a value no run would use)."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("bp_amber = 0.5\n")
    proj = tmp_path / "proj"
    proj_file = str(proj / ".claude" / "session-watcher.toml")
    config.set_value(proj_file, "bp_red", "0.3", project=True)
    cfg, errors = config.load_layers(str(proj))
    assert (cfg["bp_amber"], cfg["bp_red"]) == (config.DEFAULTS["bp_amber"], 0.3)
    assert len(errors) == 1
    assert errors[0].startswith(f"{f}: key 'bp_amber': ")


def test_config_show_never_cuts_a_path_with_spaces(tmp_path: Path) -> None:
    """`config show`'s file list keeps each path whole on its line, spaces and all, however narrow
    the width (before: wrapped at its spaces, the rest of the path read as another file)."""
    proj = tmp_path / "My Long Project Folder Name" / "with some spaces in it"
    files = [str(user_file()), str(proj / ".claude" / "session-watcher.toml")]
    shown = config.show_toml(files, config.merge(), 60).splitlines()
    for f in files:
        assert any(line.startswith(f"#   {f}") for line in shown), (f, shown[:6])


def test_hooks_with_a_bad_config_use_defaults_and_log_once(tmp_path: Path) -> None:
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("bp_red = \"very\"\n")
    t = tmp_path / "cfg.jsonl"
    data = (TRANSCRIPTS / "subagent.jsonl").read_bytes()
    t.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    for event in ("SessionStart", "PostToolUse", "Stop"):
        proc = hook(event, payload("cfg", t, event))
        assert proc.returncode == 0
        assert proc.stdout == b""
        assert proc.stderr == b""
    t.write_bytes(data)  # new lines: another fold, the bad file unchanged
    proc = hook("Stop", payload("cfg", t))
    assert proc.returncode == 0
    assert proc.stderr == b""
    state = load_state("cfg")
    assert state["meter"]["main"] == oracle(data)["main"]
    assert state["config"]["values"]["bp_red"] == config.DEFAULTS["bp_red"]
    log = log_text()
    assert log.count("'bp_red'") == 1, log
    assert str(f) in log
    # fixed: the next hook picks the file up
    f.write_text("bp_red = 0.5\n")
    hook("Stop", payload("cfg", t))
    assert load_state("cfg")["config"]["values"]["bp_red"] == 0.5


def test_the_settled_config_has_every_key_of_its_type() -> None:
    """merge, load and load_cached give the one typed config (core/shapes.py `Config`): its keys and
    its tables' keys, nothing else."""
    from session_watcher.core import shapes

    def keys(td: object) -> set[str]:
        return set(td.__required_keys__) | set(td.__optional_keys__)  # type: ignore[attr-defined]

    assert set(config.DEFAULTS) == keys(shapes.Config) - {"cliff"}
    assert set(config.DEFAULTS["notify"]) == keys(shapes.NotifyConfig)
    assert set(config.DEFAULTS["otlp"]) == keys(shapes.OtlpConfig)
    loaded = config.load(None)
    assert set(loaded) == keys(shapes.Config)  # the loader adds the cliff
    assert set(loaded["cliff"]) <= keys(shapes.Cliff)
    assert set(config.merge({"notify": {"remind_min": 3}})["notify"]) == keys(shapes.NotifyConfig)


def test_a_cached_config_another_key_table_kept_is_read_again() -> None:
    """A state's cached config kept by another version of the key table (`base/config.py`: an older
    one lacked a key this version has) is not used as it is: the files are read again, and the cache
    rewritten whole. A cache whose stamp is current is used as it is, without the key table."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("notify_dwell = 4\n")
    cache: dict[str, object] = {}
    cfg, error = config.load_cached(cache, None)  # type: ignore[arg-type]
    assert (cfg["notify_dwell"], error) == (4, None)
    stamp = cache["stamp"]
    assert isinstance(stamp, list)
    assert stamp[-1][0] == config_cache.KEY_TABLE
    values = cache["values"]
    assert isinstance(values, dict)
    stale = {**values}
    del stale["otlp"]
    stale["notify_dwell"] = 9  # what the older version had cached, under its own key table's stamp
    cache["values"] = stale
    cache["stamp"] = [*stamp[:-1], [config_cache.KEY_TABLE, stamp[-1][1] - 1, stamp[-1][2]]]
    again, _ = config.load_cached(cache, None)  # type: ignore[arg-type]
    assert again["notify_dwell"] == 4
    assert "otlp" in again
    assert "otlp" in cache["values"]  # type: ignore[operator]
    cache["stamp"] = stamp[:-1]  # a version before the key table was stamped
    cache["values"] = stale
    assert "otlp" in config.load_cached(cache, None)[0]  # type: ignore[arg-type]
    cache["values"] = {**again, "notify_dwell": 7}  # stamped as now: used as it is
    assert config.load_cached(cache, None)[0]["notify_dwell"] == 7  # type: ignore[arg-type]


def test_the_model_parameters_are_kept_with_the_config() -> None:
    """A fold takes the model's parameters kept with the config (no key table on a hook's path): those
    `model_params` gives of it, for that very config only."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("notify_dwell = 4\nguard = 'warn'\n")
    cache: dict[str, object] = {}
    cfg, _ = config.load_cached(cache, None)  # type: ignore[arg-type]
    kept = config_cache.kept_params(cache, cfg)  # type: ignore[arg-type]
    assert kept == config.model_params(cfg)
    assert kept is not None
    assert kept["notify_dwell"] == 4
    assert "guard" not in kept
    assert config_cache.kept_params(cache, {**cfg}) is None  # type: ignore[arg-type]  # another config
    again, _ = config.load_cached(cache, None)  # type: ignore[arg-type]  # the kept one
    assert config_cache.kept_params(cache, again) is kept  # type: ignore[arg-type]


def test_show_is_toml_and_set_echoes_what_show_says() -> None:
    """`config show` prints TOML a person can paste into the file (`--json` for programs); `config
    set` echoes the value as `show` then has it: `guard block`, the old name of `ask`, is written
    `ask` (written "block", `doctor` then said the file spells it by an old name), and said so."""
    wide = {**os.environ, "COLUMNS": "1000"}  # the echo on one line (it wraps within COLUMNS)
    proc = sw("config", "set", "guard", "block", env=wide)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.decode()
    assert said.startswith(f'guard = "ask"  (in {user_file()}; you wrote "block", its old name, written as this)')
    assert tomllib.loads(Path(user_file()).read_text())["guard"] == "ask"
    assert "old name" not in sw("doctor", env=wide).stdout.decode()
    shown = sw("config", "show")
    assert shown.returncode == 0, shown.stderr
    doc = tomllib.loads(shown.stdout.decode())
    assert doc["guard"] == "ask"
    assert doc["notify"]["remind_min"] == 10
    assert f"#   {user_file()}" in shown.stdout.decode()
    assert json.loads(sw("config", "show", "--json").stdout)["effective"]["guard"] == "ask"
    proc = sw("config", "set", "notify.remind_min", "15", env=wide)
    assert proc.stdout.decode().startswith(f"notify.remind_min = 15  (in {user_file()})")
    assert tomllib.loads(sw("config", "show").stdout.decode())["notify"]["remind_min"] == 15


def test_config_show_is_a_config_file_and_says_the_cliff_as_a_comment() -> None:
    """What `config show` prints can be saved as the config file as it is: the cache lifetimes `report`
    inferred (cliff.json, which the loader adds) are said in a comment, not as a `[cliff]` table that
    the file would refuse as an unknown key."""
    from session_watcher.base import paths

    cliff = Path(paths.cliff_file())
    cliff.parent.mkdir(parents=True, exist_ok=True)
    cliff.write_text(json.dumps({"5m": 360, "1h": None, "codex-10m": 2400, "evidence": {"5m": [25, 3, 7, 7]}}))
    try:
        shown = sw("config", "show", env={**os.environ, "COLUMNS": "1000"})
        assert shown.returncode == 0, shown.stderr
        text = shown.stdout.decode()
        assert "cliff" not in "".join(line for line in text.splitlines() if not line.startswith("#"))
        assert "the 5m cache after 6 min" in text
        # a Codex class in words, as `report` says it; its id is cliff.json's and --json's
        assert "the Codex 10-minute cache after 40 min" in text
        assert "codex-10m" not in text
        effective = json.loads(sw("config", "show", "--json").stdout)["effective"]["cliff"]
        assert (effective["5m"], effective["codex-10m"]) == (360, 2400)
        user_file().parent.mkdir(parents=True, exist_ok=True)
        user_file().write_bytes(shown.stdout)
        again = sw("config", "show")
        assert again.returncode == 0, again.stderr
        assert again.stderr == b""
    finally:
        cliff.unlink()
        user_file().unlink(missing_ok=True)


def test_config_show_without_a_report_yet_says_none_was_run() -> None:
    """Before any `report` (no cliff.json), the comment says the lifetimes are inferred by one, and
    names no file it would be kept in: it said "not inferred yet (too few returns); kept in
    .../cliff.json", a reason and a file neither of which was there."""
    from session_watcher.base import config, paths

    assert not os.path.exists(paths.cliff_file())
    text = " ".join(config.show_toml([], config.load_layers(None)[0], width=1000).split())
    assert "too few returns" not in text
    assert "cliff.json" not in text
    assert "not inferred yet: `session-watcher report` infers it from your own sessions" in text


@pytest.mark.parametrize("verb", [("set", "prices.", "1"), ("unset", "prices."), ("get", "prices."),
                                  ("get", 'prices.""'), ("set", 'prices."".input', "1")])
def test_a_price_key_without_a_model_is_the_command_lines_fault(verb: tuple[str, ...]) -> None:
    """`config unset prices.` exited 1 naming an empty file (": key 'prices.': ..."), `set` named the
    config file: a key with no model id is the command line's, exit 2, no file named, nothing written;
    the key named as typed (`prices.""` was named 'prices.')."""
    f = user_file()
    f.parent.mkdir(parents=True)
    f.write_text("# mine\n")
    proc = sw("config", *verb)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode() == f"session-watcher: key '{verb[1]}': expected a model id after 'prices.'\n"
    assert f.read_text() == "# mine\n"


@pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)
def test_an_old_name_is_said_by_doctor_and_config_show(tmp_path: Path) -> None:
    """`guard = "block"`, the old name of "ask", was read as "ask" without a word: the user who wrote
    it meant a guard that blocks, and nothing said it holds a prompt once now. `doctor` and `config
    show` (its text and `--json`) name the file, the old name, what it is read as and what that does."""
    env = {**os.environ, "SESSION_WATCHER_HOME": str(tmp_path / "sw"), "COLUMNS": "1000"}
    cfg = tmp_path / "sw" / "config" / "config.toml"
    cfg.parent.mkdir(parents=True)
    said = (f'{cfg}: guard = "block" is an old name, read as "ask": the prompt held back once, with priced '
            'choices and the handoff prepared, only once the cache has surely expired (`config set guard ask` '
            "writes it so)")
    for text, old in (('guard = "block"\n', True), ('guard = "ask"\n', False), ('guard = "warn"\n', False)):
        cfg.write_text(text)
        doctor = sw("doctor", env=env).stdout.decode()
        assert (f"config     {said}" in doctor) is old, doctor
        shown = sw("config", "show", env=env)
        assert shown.returncode == 0
        assert (said in " ".join(line.lstrip("# ") for line in shown.stdout.decode().splitlines())) is old
        doc = json.loads(sw("config", "show", "--json", env=env).stdout)
        assert doc.get("renamed") == ([said] if old else None)
        assert doc["effective"]["guard"] == ("warn" if "warn" in text else "ask")
