"""``hpbench schemas``: check or regenerate every contract's generated schema and tables."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.schemagen import SCHEMA_DIR, registered, stale_files, write_generated


def register(commands: Any) -> None:
    """Add ``schemas``."""
    schemas = commands.add_parser(
        "schemas",
        help="check or regenerate contrib/schemas and the docs field tables of every contract",
        description=(
            "Every contract registered in hpbench.schemagen.REGISTRY: its JSON Schema in "
            "contrib/schemas and, where a page keeps one, its field tables."
        ),
    )
    action = schemas.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    action.add_argument("--write", action="store_true", help="regenerate the files")
    schemas.add_argument(
        "--root", type=Path, default=Path(), help="the checkout (default: the current directory)"
    )
    add_json_flag(schemas)
    schemas.set_defaults(handler=schemas_command)


def schemas_command(args: argparse.Namespace) -> int:
    """``hpbench schemas --check|--write``."""
    contracts = registered()
    schema_dir = args.root / SCHEMA_DIR
    if args.write:
        changed = write_generated(contracts, schema_dir, args.root)
        if args.json:
            print_json({"ok": True, "written": [str(p) for p in changed]})
            return EXIT_OK
        for path in changed:
            out_console.print(f"wrote {path}", markup=False, highlight=False)
        return EXIT_OK
    stale = stale_files(contracts, schema_dir, args.root)
    if args.json:
        print_json({"ok": not stale, "stale": [str(p) for p in stale]})
        return EXIT_FINDINGS if stale else EXIT_OK
    for path in stale:
        out_console.print(
            f"{path}: stale; run hpbench schemas --write", markup=False, highlight=False
        )
    return EXIT_FINDINGS if stale else EXIT_OK
