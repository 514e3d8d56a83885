"""The kinds of the report's rows: parse.py writes them, warmth.py reads them (a warm report, which
reads no transcript, imports this and not the parser)."""

KIND_CALL = "c"
KIND_COMPACT = "k"
KIND_OTHER = "o"  # another model's iteration of the call before it (its key: the call's + "#n")
KIND_DIR = "d"  # the session's working folder: the first `cwd` of a file's head, in `key` (`head_dir`)
KIND_INHERITED = "i"  # a call another session made, copied into this file by a fork (`claude --resume ID
# --fork-session`, `/branch`): the line's `requestSessionId` (else `forkedFrom.sessionId`) names another session
# than its `sessionId` (`agents.claude_code.transcript.made_by`).
# Counted where it was made, never again here (docs/report.md, "Forked sessions"); `model` holds that session.
