"""The reports price cache writes with the project's one price table (core.prices)."""

from session_watcher.core.prices import READ, WRITE_1H, WRITE_5M, input_price, write_usd

__all__ = ["READ", "WRITE_1H", "WRITE_5M", "input_price", "write_usd"]
