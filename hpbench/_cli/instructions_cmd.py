"""``hpbench instructions``: keep the stock text, derive both arms, check delivery."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console, print_fields
from hpbench._documents import document_json
from hpbench.errors import HpbenchError
from hpbench.instructions import (
    default_pins_path,
    delivered_matches,
    derive,
    extract_stock,
    first_developer_text,
    load_pins,
    read_stock,
    write_instructions,
    write_stock,
)
from hpbench.instructions.delivery import prove_delivery
from hpbench.instructions.stock import StockInstructions, bundled_stock
from hpbench.rundir import STOCK_DIR

log = structlog.get_logger()


def register(commands: Any) -> None:
    """Add ``instructions`` and its sub-commands."""
    group = commands.add_parser("instructions", help="stock and derived Codex base instructions")
    sub = group.add_subparsers(dest="instructions_command", metavar="SUBCOMMAND", required=True)

    extract = sub.add_parser(
        "extract",
        help="keep the stock text from a request body the pinned CLI sent",
        description=(
            "Reads the first developer message of a recorded Responses request and keeps it as "
            "stock.md with stock.json (SHA-256, CLI version, model)."
        ),
    )
    extract.add_argument("request", type=Path, metavar="REQUEST_JSON")
    extract.add_argument("--codex-version", required=True)
    extract.add_argument("--model", required=True)
    extract.add_argument("--out", type=Path, required=True, metavar="DIR")
    add_json_flag(extract)
    extract.set_defaults(handler=extract_command)

    derive_parser = sub.add_parser(
        "derive",
        help="write control.md, treatment.md, treatment.diff and hashes.json",
    )
    derive_parser.add_argument("--stock", type=Path, required=True, metavar="DIR")
    derive_parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    derive_parser.add_argument(
        "--pins", type=Path, default=None, help="default: contrib/codex/pins.toml"
    )
    _report_issue_flag(derive_parser)
    add_json_flag(derive_parser)
    derive_parser.set_defaults(handler=derive_command)

    bundled = sub.add_parser(
        "bundled",
        help="keep the stock text the pinned CLI embeds for a model (codex debug models --bundled)",
    )
    bundled.add_argument("catalog", type=Path, metavar="MODELS_JSON")
    bundled.add_argument("--codex-version", required=True)
    bundled.add_argument("--model", required=True)
    bundled.add_argument("--out", type=Path, required=True, metavar="DIR")
    add_json_flag(bundled)
    bundled.set_defaults(handler=bundled_command)

    prepare = sub.add_parser(
        "prepare",
        help="bundled, then derive: OUT/stock from the CLI's catalog, then both arms' texts",
        description=(
            "What a run needs in one start: the pinned CLI's stock text for MODEL kept in "
            "OUT/stock (as `bundled`), then control.md, treatment.md, treatment.diff and "
            "hashes.json derived into OUT (as `derive`)."
        ),
    )
    prepare.add_argument("catalog", type=Path, metavar="MODELS_JSON")
    prepare.add_argument("--codex-version", required=True)
    prepare.add_argument("--model", required=True)
    prepare.add_argument("--out", type=Path, required=True, metavar="DIR")
    prepare.add_argument("--pins", type=Path, default=None, help="default: contrib/codex/pins.toml")
    _report_issue_flag(prepare)
    add_json_flag(prepare)
    prepare.set_defaults(handler=prepare_command)

    records = sub.add_parser(
        "check-records",
        help="prove from the scripted provider's records that an arm received exactly its file",
    )
    records.add_argument("records", type=Path, metavar="PROVIDER_JSONL")
    records.add_argument("--script", required=True, help="the arm's script name (control, hpatch)")
    records.add_argument("--expected", type=Path, required=True, metavar="FILE")
    add_json_flag(records)
    records.set_defaults(handler=check_records_command)

    check = sub.add_parser(
        "check-delivery",
        help="prove a recorded request carried exactly an instructions file",
    )
    check.add_argument("request", type=Path, metavar="REQUEST_JSON")
    check.add_argument("--expected", type=Path, required=True, metavar="FILE")
    add_json_flag(check)
    check.set_defaults(handler=check_delivery_command)


def _keep_stock(args: argparse.Namespace, stock: StockInstructions, source: str) -> int:
    """Write the stock artifact and print what was kept."""
    write_stock(stock, args.out, source=source)
    summary = {"sha256": stock.sha256, "codex_version": stock.codex_version, "model": stock.model}
    if args.json:
        print_json(summary)
    else:
        print_fields([(key, str(value)) for key, value in summary.items()])
    return EXIT_OK


def extract_command(args: argparse.Namespace) -> int:
    """``hpbench instructions extract``."""
    stock = extract_stock(args.request, args.codex_version, args.model)
    return _keep_stock(args, stock, str(args.request))


def bundled_command(args: argparse.Namespace) -> int:
    """``hpbench instructions bundled``."""
    stock = bundled_stock(args.catalog, args.codex_version, args.model)
    return _keep_stock(args, stock, f"{args.catalog} (bundled catalog)")


def check_records_command(args: argparse.Namespace) -> int:
    """``hpbench instructions check-records``: exit 1 unless every request carried the file."""
    proof = prove_delivery(args.records, args.script, args.expected)
    document = {"ok": proof.ok, **attrs.asdict(proof), "expected": str(args.expected)}
    if args.json:
        print_json(document)
    else:
        print_fields(
            [
                ("script", proof.script),
                ("requests", str(proof.requests)),
                ("carrying the file", str(proof.matching)),
                ("verdict", "delivered" if proof.ok else "NOT delivered"),
            ]
        )
    return EXIT_OK if proof.ok else EXIT_FINDINGS


def _report_issue_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--report-issue",
        action="store_true",
        help="the run has issue reporting on: the treatment also gets the issue-reporting rule",
    )


def derive_command(args: argparse.Namespace) -> int:
    """``hpbench instructions derive``."""
    return _derive(args, read_stock(args.stock))


def prepare_command(args: argparse.Namespace) -> int:
    """``hpbench instructions prepare``: ``bundled`` into OUT/stock, then ``derive``."""
    stock = bundled_stock(args.catalog, args.codex_version, args.model)
    write_stock(stock, args.out / STOCK_DIR, source=f"{args.catalog} (bundled catalog)")
    return _derive(args, stock)


def _derive(args: argparse.Namespace, stock: StockInstructions) -> int:
    pin_set = load_pins(args.pins if args.pins is not None else default_pins_path())
    derived = derive(stock, pin_set, report_issue=args.report_issue)
    hashes = write_instructions(derived, pin_set, args.out)
    log.info("instructions_derived", stock_sha256=derived.stock.sha256, model=derived.stock.model)
    if args.json:
        print_json(document_json(hashes))
    else:
        print_fields([(name, info.sha256) for name, info in sorted(hashes.files.items())])
    return EXIT_OK


def check_delivery_command(args: argparse.Namespace) -> int:
    """``hpbench instructions check-delivery``: exit 1 when Codex sent anything else."""
    try:
        request = json.loads(args.request.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        msg = f"{args.request}: not a JSON request body: {exc}"
        raise HpbenchError(msg) from None
    sent = first_developer_text(request, source=str(args.request))
    ok = delivered_matches(sent, args.expected)
    if args.json:
        print_json({"ok": ok, "request": str(args.request), "expected": str(args.expected)})
    else:
        verdict = "carried exactly" if ok else "did NOT carry"
        out_console.print(
            f"{args.request}: {verdict} {args.expected}", markup=False, highlight=False
        )
    return EXIT_OK if ok else EXIT_FINDINGS
