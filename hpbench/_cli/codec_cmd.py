"""``hpbench codec``: freeze a private corpus of Codex rollouts, and replay a codec on it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Final

from hpbench._cli.common import EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console, print_fields, print_table
from hpbench._documents import document_json
from hpbench.codecreplay import REFERENCE_CTP2, freeze, replay

MANIFEST_ENV: Final = "HPBENCH_CODEC_MANIFEST"
SKIPPED: Final = "skipped: no frozen corpus manifest"


def register(commands: Any) -> None:
    """Add ``codec`` and its sub-commands."""
    codec = commands.add_parser("codec", help="local codec replay on a frozen private corpus")
    sub = codec.add_subparsers(dest="codec_command", metavar="SUBCOMMAND", required=True)

    frozen = sub.add_parser(
        "freeze",
        help="select eligible Codex rollouts once and keep their exact bytes",
        description=(
            "Scan a Codex sessions directory, select one rollout per eligible logical session "
            "in a seeded order that never reads token counts, and copy the first SIZE into "
            "DEST with hpbench.codec-corpus.v1. DEST must not exist and must lie outside the "
            "repository."
        ),
    )
    frozen.add_argument("--sessions", required=True, type=Path, metavar="DIR")
    frozen.add_argument("--dest", required=True, type=Path, metavar="DIR")
    frozen.add_argument("--seed", required=True, type=int, metavar="N")
    frozen.add_argument("--size", required=True, type=int, metavar="K")
    frozen.set_defaults(handler=_freeze)

    measure = sub.add_parser(
        "replay",
        help="measure the reference CTP/2 codec on a frozen corpus",
        description=(
            "Check every frozen sample against the manifest, then report compact-JSON bytes "
            "of each reconstructed request input before and after the codec. Without "
            f"--manifest or {MANIFEST_ENV}, prints a skip line and exits 0."
        ),
    )
    measure.add_argument(
        "--manifest", type=Path, metavar="FILE", help=f"the corpus manifest (or {MANIFEST_ENV})"
    )
    add_json_flag(measure)
    measure.set_defaults(handler=_replay)


def _freeze(args: argparse.Namespace) -> int:
    done = freeze(args.sessions, args.dest, args.seed, args.size)
    manifest = done.manifest
    ineligible = ", ".join(f"{code} {count}" for code, count in manifest.ineligible.items())
    rollouts = f"{manifest.files_scanned} scanned, {manifest.eligible_rollouts} eligible"
    out_console.print(f"{done.path}: corpus frozen", markup=False, highlight=False)
    print_fields(
        [
            ("manifest", done.sha256),
            ("samples", f"{len(manifest.samples)} of {manifest.requested_size} requested"),
            ("population", f"{manifest.population} eligible logical sessions"),
            ("rollouts", rollouts),
            ("ineligible", ineligible or "none"),
            ("seed", str(manifest.seed)),
        ]
    )
    return EXIT_OK


def _replay(args: argparse.Namespace) -> int:
    named = args.manifest or os.environ.get(MANIFEST_ENV) or None
    if named is None:
        if args.json:
            print_json({"ok": True, "skipped": SKIPPED})
        else:
            out_console.print(SKIPPED, markup=False, highlight=False)
        return EXIT_OK
    result = replay(Path(named), REFERENCE_CTP2)
    if args.json:
        print_json({"ok": True, **document_json(result)})
        return EXIT_OK
    print_fields(
        [
            ("manifest", f"{result.manifest} ({result.manifest_sha256})"),
            ("codec", result.codec),
            ("requests", str(result.requests)),
            ("input bytes", str(result.input_bytes)),
            ("coded bytes", str(result.coded_bytes)),
            ("saved bytes", f"{result.saved_bytes:+d}"),
        ]
    )
    print_table(
        "samples",
        ("order", "session", "requests", "input bytes", "coded bytes", "saved bytes"),
        [
            (
                str(s.order),
                s.session_id,
                str(s.requests),
                str(s.input_bytes),
                str(s.coded_bytes),
                f"{s.saved_bytes:+d}",
            )
            for s in result.samples
        ],
    )
    out_console.print(result.description, markup=False, highlight=False)
    return EXIT_OK
