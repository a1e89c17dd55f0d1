"""``hpbench run``: check bench.sh's settings, and plan a run once for the shell."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import attrs

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json, print_raw
from hpbench._console import err_console
from hpbench.errors import HpbenchError
from hpbench.finish import finish_run
from hpbench.plan import observe, write_plan
from hpbench.rundir import RunLayout
from hpbench.settings import KNOWN_MODES, settings_from_env
from hpbench.task.gitsource import find_source
from hpbench.task.manifest import SourceKind, Task
from hpbench.task.registry import default_tasks_dir, load_task

_SETTINGS_HELP = (
    "Reads TASK, MODEL, EFFORT, REPETITIONS, AGENT_TIMEOUT, PROVIDER (replay or a Responses "
    "base URL; replay when no API key is set), HPBENCH_API_KEY/OPENAI_API_KEY or "
    "CODEX_AUTH_FILE (presence and form only), PROVIDER_CA_BUNDLE, TREATMENT_MODEL_PROTOCOL "
    "(ctp2 or native), BENCHMARK_ENFORCE_NO_EDIT_LOOPS, and the agent's and grader's caps: "
    "AGENT_MEMORY, AGENT_CPUS, AGENT_PIDS, AGENT_RUNTIME, GRADER_MEMORY, GRADER_CPUS, "
    "GRADER_PIDS, and HPATCH_ROUTER_IMAGE / CONTROL_ROUTER_IMAGE (docs/router-contract.md; "
    "offline both default to the reference router, a real run must name its own)."
)


def register(commands: Any) -> None:
    """Add ``run``."""
    run = commands.add_parser("run", help="run settings and the run plan (bench.sh asks these)")
    sub = run.add_subparsers(dest="run_command", metavar="SUBCOMMAND", required=True)
    settings = sub.add_parser(
        "settings",
        help="check the settings in the environment; exit 1 naming every bad one",
        description=_SETTINGS_HELP,
    )
    settings.add_argument("mode", choices=KNOWN_MODES, metavar="MODE")
    add_json_flag(settings)
    settings.set_defaults(handler=settings_command)

    plan = sub.add_parser(
        "plan",
        help="check the settings, read the task once and write the run plan into RUN_DIR",
        description=(
            "Writes run.json, plan.env (sourced by the shell), grader-spec/, "
            "codex/<arm>/config.toml, fingerprint-inputs.sha256 and, offline, replay/. "
            "Nothing is written when a setting is bad. " + _SETTINGS_HELP
        ),
    )
    plan.add_argument("mode", choices=KNOWN_MODES, metavar="MODE")
    plan.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    plan.add_argument("--tasks-dir", type=Path, default=None)
    plan.add_argument(
        "--replay-dir",
        type=Path,
        default=None,
        help="other replay scripts than the task's (test equipment; offline demo only)",
    )
    plan.set_defaults(handler=plan_command)

    observed = sub.add_parser(
        "provenance",
        help="read what bench-provenance recorded into run.json; exit 1 naming what is missing",
        description=(
            "Reads provenance/ (each scheduled router image's id and --version identity, the "
            "agent image's id and Codex version) strictly into run.json's observed section. "
            "Exit 1, naming every missing or malformed fact, when provenance is incomplete: "
            "such a run's results would be refused, so it stops before any model call."
        ),
    )
    observed.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    observed.set_defaults(handler=provenance_command)

    finish = sub.add_parser(
        "finish",
        help="every scheduled attempt's result.json, results.jsonl, report.json and summary.md",
        description=(
            "Builds each scheduled attempt's object from its evidence (an attempt that never "
            "ran is classed infrastructure), merges them and writes the report. Exit 0 only "
            "when every scheduled attempt passed and all evidence validated."
        ),
    )
    finish.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    finish.set_defaults(handler=finish_command)


def settings_command(args: argparse.Namespace) -> int:
    """``hpbench run settings MODE``."""
    document = attrs.asdict(settings_from_env(args.mode, os.environ))
    if args.json:
        print_json(document)
    else:
        for key, value in sorted(document.items()):
            print_raw(f"{key}: {value}")
    return EXIT_OK


def _with_reachable_source(task: Task) -> Task:
    """``task``, once its revisions are known to be on this machine: a git-backed task
    without a local mirror is refused in one line before anything is made."""
    if task.manifest.source.kind is SourceKind.GIT:
        find_source(task)
    return task


def plan_command(args: argparse.Namespace) -> int:
    """``hpbench run plan MODE RUN_DIR``: prints the plan.env path."""
    if not args.run_dir.is_dir():
        msg = f"no run directory at {args.run_dir}"
        raise HpbenchError(msg)
    tasks_dir = args.tasks_dir or default_tasks_dir()
    plan = write_plan(
        args.mode,
        args.run_dir,
        os.environ,
        lambda task_id: _with_reachable_source(load_task(task_id, tasks_dir)),
        args.replay_dir,
    )
    print_raw(f"{RunLayout(args.run_dir).plan_env}  ({plan.mode}, task {plan.task})")
    return EXIT_OK


def provenance_command(args: argparse.Namespace) -> int:
    """``hpbench run provenance RUN_DIR``: the missing facts on stderr, if any."""
    observed = observe(args.run_dir)
    for line in observed.missing:
        err_console.print(f"provenance incomplete: {line}", markup=False, highlight=False)
    return EXIT_FINDINGS if observed.missing else EXIT_OK


def finish_command(args: argparse.Namespace) -> int:
    """``hpbench run finish RUN_DIR``: prints the summary's path and the outcome."""
    report = finish_run(args.run_dir)
    outcome = report["outcome"]
    print_raw(f"{RunLayout(args.run_dir).summary}: {'ok' if outcome['ok'] else 'not ok'}")
    for reason in outcome["reasons"]:
        print_raw(f"  {reason}")
    return EXIT_OK if outcome["ok"] else EXIT_FINDINGS
