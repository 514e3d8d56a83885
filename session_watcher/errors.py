"""The CLI's errors: each prints as one line on stderr and exits 1."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: a missing session, a bad argument, an unreadable file."""


class NoSession(UserError):
    """No session state matches the request."""
