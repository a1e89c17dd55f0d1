"""Pieces every command shares: the ``--json`` flag and result printing."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from hpbench._console import out_console
from hpbench._jsonio import canonical_json

Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every query command offers machine output."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text"
    )


def print_raw(line: str) -> None:
    """One line exactly as given (tabs kept), for output that shell scripts parse."""
    sys.stdout.write(line + "\n")


def print_json(value: Any) -> None:
    """One canonical JSON document on stdout."""
    out_console.out(canonical_json(value), highlight=False)
