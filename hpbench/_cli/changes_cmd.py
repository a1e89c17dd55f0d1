"""``hpbench changes compare``: an attempt's changes against a pristine base tree.

Writes into ``--out``:

``changed-paths.z``  every changed path, sorted by its bytes, each followed by a NUL
``changes.json``     ``hpbench.changes.v1``: one object per change (see
                     :func:`hpbench.changes.change_to_json`)
``changes.fi``       a ``git fast-import`` stream of both sides of the paths in the diff

Nothing here runs git; ``benchmarks/libexec/bench-changes`` imports the stream
into a private repository of its own to write the diff.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench._jsonio import canonical_json, write_atomic, write_atomic_stream
from hpbench.changes import (
    Change,
    changed_paths_z,
    changes_document,
    compare,
    write_fast_import,
)
from hpbench.rundir import CHANGED_PATHS, CHANGES_JSON

log = structlog.get_logger()

CHANGED_PATHS_NAME = CHANGED_PATHS
CHANGES_JSON_NAME = CHANGES_JSON
FAST_IMPORT_NAME = "changes.fi"


def register(commands: Any) -> None:
    """Add ``changes`` and its sub-commands."""
    changes = commands.add_parser("changes", help="an attempt's changes against its base tree")
    sub = changes.add_subparsers(dest="changes_command", metavar="SUBCOMMAND", required=True)
    compare_parser = sub.add_parser(
        "compare",
        help="compare a work tree with a pristine base tree, without git",
        description=(
            "Walks BASE and WORK without following symlinks or opening anything but regular "
            "files; the top-level .git of each is skipped. Writes changed-paths.z, changes.json "
            "and changes.fi (a git fast-import stream) into DIR. Exit 0 also when nothing "
            "changed; 1 when a tree cannot be read."
        ),
    )
    compare_parser.add_argument("base", type=Path, metavar="BASE")
    compare_parser.add_argument("work", type=Path, metavar="WORK")
    compare_parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    add_json_flag(compare_parser)
    compare_parser.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    """``hpbench changes compare BASE WORK --out DIR``."""
    changes = compare(args.base, args.work)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / CHANGES_JSON_NAME, canonical_json(changes_document(changes)) + "\n")
    paths = changed_paths_z(changes)
    write_atomic_stream(out / CHANGED_PATHS_NAME, lambda stream: stream.write(paths))
    write_atomic_stream(
        out / FAST_IMPORT_NAME, lambda s: write_fast_import(changes, args.base, args.work, s)
    )
    in_diff = sum(1 for change in changes if change.in_diff)
    log.info("changes_compared", changes=len(changes), in_diff=in_diff)
    if args.json:
        print_json({"changes": len(changes), "in_diff": in_diff, "out": str(out)})
    else:
        out_console.print(_summary(changes, in_diff), markup=False, highlight=False)
    return EXIT_OK


def _summary(changes: list[Change], in_diff: int) -> str:
    if not changes:
        return "no changes"
    return f"{len(changes)} changed path(s), {in_diff} in the diff"
