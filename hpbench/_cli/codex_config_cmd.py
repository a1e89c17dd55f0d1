"""``hpbench codex-config``: write or check an arm's offline-safe Codex ``config.toml``."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_OK, EXIT_USAGE, add_json_flag, print_json
from hpbench._console import err_console, out_console
from hpbench.codexconfig import (
    MAX_IDLE_MS,
    MAX_RETRIES,
    MIN_IDLE_MS,
    CodexConfig,
    ReasoningEffort,
    check_config,
    render_config,
    write_config,
)
from hpbench.rundir import Arm


def register(commands: Any) -> None:
    """Add ``codex-config`` and its sub-commands."""
    group = commands.add_parser(
        "codex-config", help="generate or check an arm's offline-safe Codex config.toml"
    )
    sub = group.add_subparsers(dest="codex_config_command", metavar="SUBCOMMAND", required=True)

    render = sub.add_parser("render", help="write the config for one arm (stdout without --out)")
    render.add_argument("--arm", required=True, choices=[arm.value for arm in Arm])
    render.add_argument(
        "--router-url", required=True, help="the arm's router base URL, e.g. http://router:8080/v1"
    )
    render.add_argument("--out", type=Path, help="file to write (mode 0600), e.g. $CODEX_HOME/…")
    render.add_argument("--model", default="gpt-6-astra")
    render.add_argument(
        "--reasoning-effort",
        default=ReasoningEffort.MEDIUM.value,
        choices=[effort.value for effort in ReasoningEffort],
    )
    render.add_argument("--instructions-file", help="absolute path for model_instructions_file")
    render.add_argument("--model-catalog-json", help="absolute path of a model catalog")
    render.add_argument("--env-key", default="HPBENCH_API_KEY", help="API key variable name")
    render.add_argument("--provider-id", default="hpbench")
    render.add_argument(
        "--request-max-retries", type=int, default=2, help=f"0..{MAX_RETRIES} (default 2)"
    )
    render.add_argument(
        "--stream-max-retries", type=int, default=2, help=f"0..{MAX_RETRIES} (default 2)"
    )
    render.add_argument(
        "--stream-idle-timeout-ms",
        type=int,
        default=300_000,
        help=f"{MIN_IDLE_MS}..{MAX_IDLE_MS} (default 300000)",
    )
    add_json_flag(render)
    render.set_defaults(handler=render_command)

    check = sub.add_parser("check", help="prove a config.toml offline-safe")
    check.add_argument("path", type=Path, metavar="FILE")
    add_json_flag(check)
    check.set_defaults(handler=check_command)


def render_command(args: argparse.Namespace) -> int:
    """``hpbench codex-config render``."""
    try:
        config = CodexConfig(
            arm=Arm(args.arm),
            router_url=args.router_url,
            model=args.model,
            reasoning_effort=ReasoningEffort(args.reasoning_effort),
            provider_id=args.provider_id,
            env_key=args.env_key,
            model_instructions_file=args.instructions_file,
            model_catalog_json=args.model_catalog_json,
            request_max_retries=args.request_max_retries,
            stream_max_retries=args.stream_max_retries,
            stream_idle_timeout_ms=args.stream_idle_timeout_ms,
        )
    except ValueError as exc:
        err_console.print(f"hpbench codex-config: {exc}", markup=False, highlight=False)
        return EXIT_USAGE
    if args.out is None:
        text = render_config(config)
        if args.json:
            print_json({"ok": True, "config": text})
        else:
            sys.stdout.write(text)
        return EXIT_OK
    text = write_config(config, args.out)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if args.json:
        print_json({"ok": True, "path": str(args.out), "sha256": digest})
    else:
        out_console.print(f"{args.out}: written ({digest})", markup=False, highlight=False)
    return EXIT_OK


def check_command(args: argparse.Namespace) -> int:
    """``hpbench codex-config check FILE``: exit 1 with findings when unsafe."""
    text = args.path.read_text(encoding="utf-8")
    check_config(text, source=str(args.path))
    if args.json:
        print_json({"ok": True, "path": str(args.path), "findings": []})
    else:
        out_console.print(f"{args.path}: offline-safe", markup=False, highlight=False)
    return EXIT_OK
