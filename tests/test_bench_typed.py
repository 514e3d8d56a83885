"""mypy --strict checks the measuring tools (bench/), the doc generators (tools/) and the tests as it
checks the package: every folder of the repository's Python code is in pyproject.toml's [tool.mypy]
files, which `./run-tests.sh` and pre-commit check; a change to the package that leaves a bench's or a
test's call behind then fails there, not at the bench's next run."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def code_folders(root: Path) -> set[str]:
    """The top-level folders of `root` that hold Python code, but what .gitignore lists."""
    ignored = {line.strip().strip("/") for line in (root / ".gitignore").read_text().splitlines()
               if line.strip().endswith("/")}
    return {d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")
            and d.name not in ignored and not d.name.endswith(".egg-info") and any(d.rglob("*.py"))}


def mypy_files(root: Path) -> set[str]:
    mypy = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mypy"]
    return {f.strip("/") for f in [*mypy.get("files", []), *mypy.get("packages", [])]}


def test_mypy_checks_every_code_folder() -> None:
    assert {"session_watcher", "bench", "tools", "tests"} <= code_folders(REPO)
    assert code_folders(REPO) <= mypy_files(REPO)


def test_the_check_finds_a_folder_mypy_leaves_out(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.pyc\n")
    (tmp_path / "pyproject.toml").write_text('[tool.mypy]\nfiles = ["pkg"]\n')
    for folder in ("pkg", "scripts", "tests", "build", ".venv"):
        (tmp_path / folder / "sub").mkdir(parents=True)
        (tmp_path / folder / "sub" / "m.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("")
    assert code_folders(tmp_path) == {"pkg", "scripts", "tests"}
    assert code_folders(tmp_path) - mypy_files(tmp_path) == {"scripts", "tests"}
