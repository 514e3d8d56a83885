"""Rebuild the three sets of real sessions the project has not seen (docs/model.md, "Out of sample: real
sessions the project has not seen") from local snapshots of their repositories; nothing is fetched.

    .venv/bin/python tools/unseen_sets.py [--mirror DIR] [--out DIR]

`--mirror` (default /work/.mirror) holds one bare git dir a repository, `owner+name/repo` (as the
snapshot fetcher lays them out); `--out` (default the system's temporary directory, /tmp) receives
`unseen-cc` (the 27 Claude Code sessions of seven repositories), `unseen` (the 12 of entireio/cli) and
`unseen-codex` (the 20 Codex threads). Each file is one checkpoint's `full.jsonl` at the commit the docs
name, written as `<session id>.jsonl` (the id its first line that carries one says: Claude Code's
`sessionId`, a Codex rollout's `session_meta` id), so `bench.calibrate` names it by the docs' eight
characters. Prints, per set, the sessions and the main-chain API calls (distinct message ids of
assistant lines outside a sidechain; a Codex thread: its `token_count` events where the running total
moved), which the docs give as 27 / 4,834, 12 / 2,811 and 20 / 4,105. A file a snapshot lacks is named
on stderr and left out; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# (repository, commit) by a short name
REPOS: dict[str, tuple[str, str]] = {
    "cli": ("entireio/cli", "394f81fab87f71aa8938d91ff7a067c524ff344b"),
    "oh-my-posh": ("JanDeDobbeleer/oh-my-posh", "0d1116c02814bec7231dbe3c3b9661106418a724"),
    "entire-sem": ("entireio/entire-sem", "7789048c1f7b7d311939f8021a5572699d598676"),
    "external-agents": ("entireio/external-agents", "59a3aa16978c98d7fd13546cf6855c5458f11963"),
    "CyberVPN": ("Beep206/CyberVPN", "89efea0382702104b0524f7549735e1b5e5a91e2"),
    "cipher-box": ("FSM1/cipher-box", "e227f1183b594fa6bd5dbe58c75272434067e89b"),
    "context-evaluator": ("PackmindHub/context-evaluator", "63679d4764ce74bb41f8e5794f6183d43ea9ee88"),
    "pup-mcp": ("codyborders/pup-mcp", "195fb8ee4f30c021387dae69772af9034486781e"),
    "mise": ("jdx/mise", "08f23942f7740d472f6c42f23e5f5d8aaa29e3c4"),
    "agentv": ("EntityProcess/agentv", "47dca0eea369e545808f72dd9473c846f66dd79f"),
}

# set -> (session id's first 8 characters, repository's short name, path in its tree), as the docs' tables
SETS: dict[str, list[tuple[str, str, str]]] = {
    "unseen-cc": [
        ("030df228", "oh-my-posh", "77/ff57b06fba/0/full.jsonl"),
        ("03ce845f", "oh-my-posh", "7d/aa163ced91/0/full.jsonl"),
        ("0bb72151", "CyberVPN", "58/51a9600476/0/full.jsonl"),
        ("223b2708", "oh-my-posh", "90/40f7c63ee0/0/full.jsonl"),
        ("311dfedb", "pup-mcp", "35/dd7d024663/0/full.jsonl"),
        ("3399979a", "CyberVPN", "8e/d0e76731ba/0/full.jsonl"),
        ("4799f814", "context-evaluator", "5f/3390ed3fa8/1/full.jsonl"),
        ("5632e712", "entire-sem", "76/cd2ea187ff/0/full.jsonl"),
        ("5a4b5aa4", "oh-my-posh", "70/fe8f468dbe/0/full.jsonl"),
        ("67edd8f2", "CyberVPN", "8e/d0e76731ba/5/full.jsonl"),
        ("6c0a282a", "oh-my-posh", "d3/cfdfe7f72d/0/full.jsonl"),
        ("71b7117f", "cipher-box", "46/966f48dfa5/1/full.jsonl"),
        ("77b4cd7d", "CyberVPN", "8e/d0e76731ba/2/full.jsonl"),
        ("7c6c3177", "external-agents", "49/57b6496f2c/0/full.jsonl"),
        ("7e8b8b3f", "external-agents", "cf/0d6c96b84e/1/full.jsonl"),
        ("8209f1c2", "context-evaluator", "c8/946606a339/0/full.jsonl"),
        ("8ecab05f", "context-evaluator", "95/cc2ca9e65d/2/full.jsonl"),
        ("94fab1a1", "oh-my-posh", "d8/4718082c10/3/full.jsonl"),
        ("9e4910ab", "cipher-box", "01/485d538f55/1/full.jsonl"),
        ("c0fff321", "oh-my-posh", "18/db4675baa8/1/full.jsonl"),
        ("c94aadce", "CyberVPN", "8e/d0e76731ba/3/full.jsonl"),
        ("d1ffb512", "oh-my-posh", "59/7e5a60d968/0/full.jsonl"),
        ("db8d3dd4", "oh-my-posh", "11/6e27a41b09/0/full.jsonl"),
        ("f585e6e9", "cipher-box", "af/1dd25ebb3e/8/full.jsonl"),
        ("f7594e2b", "cipher-box", "49/85d640fadb/8/full.jsonl"),
        ("fc71f2f6", "entire-sem", "94/d9d019086f/0/full.jsonl"),
        ("fffff083", "entire-sem", "40/ffd10dfc99/1/full.jsonl"),
    ],
    "unseen": [
        ("0442a060", "cli", "b6/f735fbac66/0/full.jsonl"),
        ("1284c080", "cli", "43/2b48f6b6e6/0/full.jsonl"),
        ("375d5d79", "cli", "2a/075ef186b4/0/full.jsonl"),
        ("43b2bd6e", "cli", "a5/d8ec9bae67/0/full.jsonl"),
        ("44df7d08", "cli", "f0/c3dbdad0d8/0/full.jsonl"),
        ("6113e919", "cli", "cd/95adddad32/0/full.jsonl"),
        ("79e9becd", "cli", "72/0c20f08988/0/full.jsonl"),
        ("7f78a542", "cli", "f5/dab3d95bc1/0/full.jsonl"),
        ("a318ad73", "cli", "8e/a9e4a4e751/0/full.jsonl"),
        ("af74d9e0", "cli", "90/ed5b9b296e/1/full.jsonl"),
        ("c35cf82b", "cli", "5e/5207b424e2/0/full.jsonl"),
        ("f022dad1", "cli", "cc/90f6622c5b/1/full.jsonl"),
    ],
    "unseen-codex": [
        ("019da9bd", "external-agents", "b3/16d752f027/0/full.jsonl"),
        ("019e9ea7", "entire-sem", "d9/4ea7db13b9/0/full.jsonl"),
        ("019ed99c", "agentv", "a6/0726a7452e/0/full.jsonl"),
        ("019eecb9", "agentv", "88/8ba8f699fb/1/full.jsonl"),
        ("019efc87", "agentv", "33/5841c2d678/0/full.jsonl"),
        ("019f1111", "agentv", "0b/9f2ac6f3aa/1/full.jsonl"),
        ("019f17a5", "agentv", "0b/9f2ac6f3aa/3/full.jsonl"),
        ("019f2016", "mise", "fc/732020c716/0/full.jsonl"),
        ("019f36b8", "agentv", "f4/771ece9d37/0/full.jsonl"),
        ("019f43d1", "mise", "49/42d2638f78/0/full.jsonl"),
        ("019f5ce9", "mise", "64/56f0ffb029/0/full.jsonl"),
        ("019f5d29", "mise", "72/4a2ea2ae1f/0/full.jsonl"),
        ("019f5d46", "mise", "91/e28ef0b8b2/0/full.jsonl"),
        ("019f61f9", "mise", "6c/908b3dff05/0/full.jsonl"),
        ("019f627f", "mise", "2a/c8730af24f/0/full.jsonl"),
        ("019f6782", "mise", "8c/2b5cda2429/0/full.jsonl"),
        ("019f67a6", "mise", "24/3c3b245462/0/full.jsonl"),
        ("019f80ed", "entire-sem", "37/05cde00da0/0/full.jsonl"),
        ("019f8af9", "entire-sem", "b2/d2a005254a/0/full.jsonl"),
        ("019f8eab", "entire-sem", "4b/18f6ff334a/0/full.jsonl"),
    ],
}


def blob(git_dir: Path, commit: str, path: str) -> bytes | None:
    """The file at `path` in `commit` of the bare repository, or None when the snapshot lacks it."""
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                          capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def session_id(data: bytes) -> str | None:
    """The id the transcript's first line that carries one says (Claude Code or Codex)."""
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        sid = rec.get("sessionId")
        if isinstance(sid, str) and sid:
            return sid
        payload = rec.get("payload")
        if rec.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
            return str(payload["id"])
    return None


def calls(data: bytes) -> int:
    """Main-chain API calls: Claude Code's distinct assistant message ids outside a sidechain (a
    `<synthetic>` line is no call), or a Codex rollout's token_count events where the running total moved."""
    ids: set[str] = set()
    codex = 0
    last_total: object = None
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        payload = rec.get("payload")
        if rec.get("type") == "event_msg" and isinstance(payload, dict):
            info = payload.get("info")
            if payload.get("type") == "token_count" and isinstance(info, dict):
                total = info.get("total_token_usage")
                codex += total != last_total  # snapshots repeat: a call where the running total moved
                last_total = total
            continue
        msg = rec.get("message")
        if rec.get("type") != "assistant" or rec.get("isSidechain") is True or not isinstance(msg, dict):
            continue
        if msg.get("model") == "<synthetic>" or not isinstance(msg.get("id"), str):
            continue
        ids.add(msg["id"])
    return len(ids) + codex


def build(mirror: Path, out: Path) -> int:
    missing = 0
    for name, rows in SETS.items():
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        n = total = 0
        for short, repo_key, path in rows:
            repo, commit = REPOS[repo_key]
            git_dir = mirror / repo.replace("/", "+") / "repo"
            data = blob(git_dir, commit, path) if git_dir.is_dir() else None
            sid = session_id(data) if data is not None else None
            if data is None or sid is None:
                print(f"{name}: {short} missing ({repo}@{commit[:12]}:{path})", file=sys.stderr)
                missing += 1
                continue
            if not sid.startswith(short):
                print(f"{name}: {repo}:{path} holds session {sid}, not {short}", file=sys.stderr)
                missing += 1
                continue
            (target / f"{sid}.jsonl").write_bytes(data)
            n += 1
            total += calls(data)
        print(f"{target}: {n} sessions, {total:,} calls")
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()))
    ns = ap.parse_args(argv)
    return build(ns.mirror, ns.out)


if __name__ == "__main__":
    sys.exit(main())
