"""Entry point: builds the parser from the command modules and maps errors to exit codes.

Exit codes: 0 success, 1 a finding (invalid input, failed check), 2 usage,
130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import hpbench._cli
from hpbench import __version__
from hpbench._cli.common import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_USAGE, print_json
from hpbench._console import err_console
from hpbench._logging import configure
from hpbench.errors import ContractError, HpbenchError


def _module_names() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(hpbench._cli.__path__)
        if info.name.endswith("_cmd")
    )


def command_modules(argv: Sequence[str] | None = None) -> Iterator[ModuleType]:
    """The ``hpbench/_cli/*_cmd.py`` modules; each adds its sub-commands with ``register``.

    Discovery keeps this file free of a list that every new command must edit.
    When ``argv`` names a command whose module follows the naming rule
    (``codex-config`` lives in ``codex_config_cmd``), only that module is
    imported: the shell calls hpbench many times a run, and importing every
    command's dependencies each time would cost most of a second per call.
    """
    names = _module_names()
    if argv is not None:
        words = [word for word in argv if not word.startswith("-")]
        # The first word that is not an option value of a global flag names the command.
        for word in words[:3]:
            wanted = f"{word.replace('-', '_')}_cmd"
            if wanted in names:
                names = [wanted]
                break
    for name in names:
        yield importlib.import_module(f"hpbench._cli.{name}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full ``hpbench`` parser."""
    parser = argparse.ArgumentParser(
        prog="hpbench",
        description=(
            "Compute the evidence of an hpbench run: tasks and fingerprints, workspaces, "
            "captures, command analysis, results and reports. benchmarks/bench.sh runs "
            "the benchmark; these commands never start containers or agents."
        ),
    )
    parser.add_argument("--version", action="version", version=f"hpbench {__version__}")
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="console log level (default: warning)",
    )
    parser.add_argument(
        "--log-file", type=Path, help="also write every log event as a JSON line to this file"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in command_modules(argv):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    configure(level=args.log_level, log_file=args.log_file)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        err_console.print("hpbench: interrupted", markup=False)
        return EXIT_INTERRUPTED
    except ContractError as exc:
        if getattr(args, "json", False):
            print_json(
                {"ok": False, "error": exc.summary, "findings": [f.to_json() for f in exc.findings]}
            )
        err_console.print(f"hpbench: {exc}", markup=False, highlight=False)
        return EXIT_FINDINGS
    except HpbenchError as exc:
        if getattr(args, "json", False):
            print_json({"ok": False, "error": str(exc), "findings": []})
        err_console.print(f"hpbench: {exc}", markup=False, highlight=False)
        return EXIT_FINDINGS
    return code


def run() -> None:
    """Console-script entry: exit with :func:`main`'s code."""
    sys.exit(main())


__all__ = ["EXIT_USAGE", "build_parser", "main", "run"]
