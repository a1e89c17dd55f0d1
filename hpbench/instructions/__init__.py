"""Base instructions: the stock text the pinned CLI sends, and the treatment derived from it."""

from hpbench.instructions.derive import (
    DerivedInstructions,
    delivered_matches,
    derive,
    write_instructions,
)
from hpbench.instructions.pins import Pins, PinSet, default_pins_path, load_pins
from hpbench.instructions.stock import (
    StockInstructions,
    extract_stock,
    first_developer_text,
    read_stock,
    write_stock,
)

__all__ = [
    "DerivedInstructions",
    "PinSet",
    "Pins",
    "StockInstructions",
    "default_pins_path",
    "delivered_matches",
    "derive",
    "extract_stock",
    "first_developer_text",
    "load_pins",
    "read_stock",
    "write_instructions",
    "write_stock",
]
