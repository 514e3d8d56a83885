"""The reports price cache reads and writes with the project's one price table (core.prices)."""

from session_watcher.core.prices import (
    READ,
    WRITE_1H,
    WRITE_5M,
    generation,
    input_price,
    read_multiplier,
    write_1h_multiplier,
    write_multiplier,
    write_usd,
)

__all__ = ["READ", "WRITE_1H", "WRITE_5M", "generation", "input_price", "read_multiplier", "write_1h_multiplier",
           "write_multiplier", "write_usd"]
