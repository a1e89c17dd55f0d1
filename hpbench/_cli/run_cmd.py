"""``hpbench run settings``: check bench.sh's settings and write run.json."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_OK, add_json_flag, print_json, print_raw
from hpbench._jsonio import write_atomic
from hpbench.settings import KNOWN_MODES, settings_from_env
from hpbench.task.fingerprint import task_fingerprint
from hpbench.task.registry import default_tasks_dir, load_task


def register(commands: Any) -> None:
    """Add ``run``."""
    run = commands.add_parser("run", help="run settings and metadata (bench.sh asks these)")
    sub = run.add_subparsers(dest="run_command", metavar="SUBCOMMAND", required=True)
    settings = sub.add_parser(
        "settings",
        help="check the settings in the environment; exit 1 naming every bad one",
        description=(
            "Reads TASK, MODEL, EFFORT, REPETITIONS, AGENT_TIMEOUT, CONTROL_ROUTER_IMAGE, "
            "HPATCH_ROUTER_IMAGE, PROVIDER (replay or a Responses base URL; replay when no API "
            "key is set), HPBENCH_API_KEY/OPENAI_API_KEY (presence only), "
            "BENCHMARK_ENFORCE_NO_EDIT_LOOPS, and the agent's and grader's caps: "
            "AGENT_MEMORY, AGENT_CPUS, AGENT_PIDS, AGENT_RUNTIME, GRADER_MEMORY, GRADER_CPUS, "
            "GRADER_PIDS."
        ),
    )
    settings.add_argument("mode", choices=KNOWN_MODES, metavar="MODE")
    settings.add_argument("--tasks-dir", type=Path, default=None)
    settings.add_argument("--run-json", type=Path, help="also write the settings as this run.json")
    settings.add_argument(
        "--shell", action="store_true", help="print 'export BENCH_<NAME>=<value>' lines for eval"
    )
    add_json_flag(settings)
    settings.set_defaults(handler=settings_command)


def settings_command(args: argparse.Namespace) -> int:
    """``hpbench run settings MODE``."""
    settings = settings_from_env(args.mode, os.environ)
    task = load_task(settings.task, args.tasks_dir or default_tasks_dir())
    document = {**settings.to_json(), "fingerprint": task_fingerprint(task)}
    if args.run_json is not None:
        write_atomic(args.run_json, json.dumps(document, indent=2, sort_keys=True) + "\n")
    if args.json:
        print_json(document)
    elif args.shell:
        for key, value in sorted(document.items()):
            if key == "schema":
                continue
            text = " ".join(value) if isinstance(value, list | tuple) else str(value)
            if isinstance(value, bool):
                text = str(value).lower()
            print_raw(f"export BENCH_{key.upper()}={shlex.quote(text)}")
    else:
        for key, value in sorted(document.items()):
            print_raw(f"{key}: {value}")
    return EXIT_OK
