"""The two consoles hpbench prints through.

Results go to stdout, diagnostics to stderr. rich detects a pipe by itself and
then prints no colour or cursor codes; tables fall back to tab-separated lines
so that piped output stays greppable.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

out_console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A rich table on a terminal, tab-separated lines with a header otherwise."""
    if out_console.is_terminal:
        table = Table(title=title)
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        out_console.print(table)
        return
    # Written around rich, which would expand the tabs into spaces.
    out_console.file.write("\t".join(columns) + "\n")
    for row in rows:
        out_console.file.write("\t".join(row) + "\n")


def print_fields(fields: Sequence[tuple[str, str]]) -> None:
    """``name: value`` lines, aligned on a terminal."""
    width = max((len(name) for name, _ in fields), default=0)
    for name, value in fields:
        out_console.print(f"{name.ljust(width)}  {value}", markup=False, highlight=False)
