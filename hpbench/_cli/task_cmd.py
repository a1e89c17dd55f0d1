"""``hpbench task``: list, show, fingerprint, validate and build tasks."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_OK, add_json_flag, print_json, print_raw
from hpbench._console import out_console, print_fields, print_table
from hpbench.errors import ContractError, HpbenchError
from hpbench.plan import write_grader_spec
from hpbench.task.checks import task_findings
from hpbench.task.fingerprint import fingerprint_check_lines, task_fingerprint
from hpbench.task.gitsource import fetch_history
from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import SourceKind, Task
from hpbench.task.registry import default_tasks_dir, load_task, task_ids

log = structlog.get_logger()


def register(commands: Any) -> None:
    """Add ``task`` and its sub-commands."""
    task = commands.add_parser("task", help="task manifests, fingerprints and history")
    task.add_argument(
        "--tasks-dir",
        type=Path,
        default=None,
        help="directory holding <id>/task.toml (default: $HPBENCH_TASKS_DIR or tasks/)",
    )
    sub = task.add_subparsers(dest="task_command", metavar="SUBCOMMAND", required=True)

    listing = sub.add_parser("list", help="list the tasks and their fingerprints")
    add_json_flag(listing)
    listing.set_defaults(handler=list_command)

    show = sub.add_parser("show", help="show one task's manifest")
    show.add_argument("task_id", metavar="ID")
    add_json_flag(show)
    show.set_defaults(handler=show_command)

    fingerprint = sub.add_parser("fingerprint", help="print a task's content fingerprint")
    fingerprint.add_argument("task_id", metavar="ID")
    fingerprint.add_argument(
        "--inputs",
        action="store_true",
        help="print 'SHA-256  absolute path' for each input, a list `sha256sum -c` can recheck",
    )
    add_json_flag(fingerprint)
    fingerprint.set_defaults(handler=fingerprint_command)

    validate = sub.add_parser("validate", help="check a task manifest and its files")
    validate.add_argument("task_id", metavar="ID")
    add_json_flag(validate)
    validate.set_defaults(handler=validate_command)

    field = sub.add_parser(
        "field",
        help="print one manifest value for shell use (lists: one item a line)",
        description="NAME is a dotted key of 'task show --json', e.g. grader.command.",
    )
    field.add_argument("task_id", metavar="ID")
    field.add_argument("name", metavar="NAME")
    field.set_defaults(handler=field_command)

    hidden = sub.add_parser(
        "hidden-files",
        help="print each hidden grader file as 'workspace path<TAB>absolute source path'",
    )
    hidden.add_argument("task_id", metavar="ID")
    hidden.set_defaults(handler=hidden_files_command)

    build = sub.add_parser(
        "build",
        help="build a bundled task's base and oracle commits into a new git repository, or "
        "fetch a git-backed task's from its local mirror (HPBENCH_TASK_MIRRORS)",
    )
    build.add_argument("task_id", metavar="ID")
    build.add_argument("--out", type=Path, required=True, help="new or empty directory")
    add_json_flag(build)
    build.set_defaults(handler=build_command)

    qualify = sub.add_parser(
        "qualify",
        help="qualify a task's hidden grader on its own: benchmarks/bench.sh preparation-only",
        description=(
            "Hands over to `benchmarks/bench.sh preparation-only` with TASK=ID (the shell owns "
            "the flow: snapshots, module cache, the grader on the base and on the oracle, the "
            "isolation proofs; no model call). Its run directory goes under RUNS_DIR."
        ),
    )
    qualify.add_argument("task_id", metavar="ID")
    qualify.set_defaults(handler=qualify_command)

    spec = sub.add_parser(
        "grader-spec",
        help="write the grader spec directory bench-grade reads (hpbench run plan writes it too)",
    )
    spec.add_argument("task_id", metavar="ID")
    spec.add_argument("--out", type=Path, required=True, metavar="DIR")
    spec.set_defaults(handler=grader_spec_command)


def _tasks_dir(args: argparse.Namespace) -> Path:
    return args.tasks_dir if args.tasks_dir is not None else default_tasks_dir()


def _load(args: argparse.Namespace) -> Task:
    return load_task(args.task_id, _tasks_dir(args))


def task_summary(task: Task) -> dict[str, Any]:
    """The JSON form of a loaded task (``task show --json``)."""
    manifest = task.manifest
    grader = manifest.grader
    return {
        "id": manifest.id,
        "title": manifest.title,
        "directory": str(task.directory),
        "fingerprint": task_fingerprint(task),
        "oracle_tier": manifest.oracle_tier.value,
        "prompt": manifest.prompt,
        "source": {
            "kind": manifest.source.kind.value,
            "url": manifest.source.url,
            "base_revision": manifest.source.base_revision,
            "oracle_revision": manifest.source.oracle_revision,
        },
        "allowed_paths": list(manifest.paths.allowed),
        "grader": None
        if grader is None
        else {
            "kind": grader.kind.value,
            "root": grader.root,
            "files": list(grader.files),
            "command": list(grader.command),
            "timeout_seconds": grader.timeout_seconds,
            "base_discriminator": grader.base_discriminator,
            "required_tests": {k: list(v) for k, v in grader.required_tests.items()},
        },
        "gating": None if manifest.gating is None else {"blind": manifest.gating.blind},
        "runtime": {
            "go_version": manifest.runtime.go_version,
            "preload_go_qualification_grader": manifest.runtime.preload_go_qualification_grader,
            "owned_module_prefixes": list(manifest.runtime.owned_module_prefixes),
        },
    }


def list_command(args: argparse.Namespace) -> int:
    """``hpbench task list``."""
    tasks_dir = _tasks_dir(args)
    tasks = [load_task(task_id, tasks_dir) for task_id in task_ids(tasks_dir)]
    if args.json:
        print_json(
            {
                "tasks": [
                    {
                        "id": t.id,
                        "title": t.manifest.title,
                        "oracle_tier": t.manifest.oracle_tier.value,
                        "fingerprint": task_fingerprint(t),
                    }
                    for t in tasks
                ]
            }
        )
        return EXIT_OK
    rows = [
        (t.id, t.manifest.oracle_tier.value, task_fingerprint(t), t.manifest.title) for t in tasks
    ]
    print_table("tasks", ("id", "tier", "fingerprint", "title"), rows)
    return EXIT_OK


def show_command(args: argparse.Namespace) -> int:
    """``hpbench task show ID``."""
    summary = task_summary(_load(args))
    if args.json:
        print_json(summary)
        return EXIT_OK
    print_fields(
        [
            ("id", summary["id"]),
            ("title", summary["title"]),
            ("fingerprint", summary["fingerprint"]),
            ("oracle tier", summary["oracle_tier"]),
            ("source", summary["source"]["url"] or summary["source"]["kind"]),
            ("base revision", summary["source"]["base_revision"]),
            ("oracle revision", summary["source"]["oracle_revision"]),
            ("prompt", summary["prompt"]),
            ("allowed paths", ", ".join(summary["allowed_paths"])),
            *_grader_fields(summary["grader"]),
            ("blind edit", (summary["gating"] or {}).get("blind", "none")),
            ("go version", summary["runtime"]["go_version"]),
        ]
    )
    return EXIT_OK


def _grader_fields(grader: dict[str, Any] | None) -> list[tuple[str, str]]:
    if grader is None:
        return [("grader", "none (latency-only: no correctness claim)")]
    required = grader["required_tests"]
    return [
        ("grader", f"{grader['kind']}: {' '.join(grader['command'])}"),
        ("grader timeout", f"{grader['timeout_seconds']} s"),
        ("grader files", ", ".join(grader["files"])),
        ("base discriminator", grader["base_discriminator"]),
        *((f"required in {where}", ", ".join(tests)) for where, tests in required.items()),
    ]


def fingerprint_command(args: argparse.Namespace) -> int:
    """``hpbench task fingerprint ID``: the digest alone, for shell use."""
    task = _load(args)
    if args.inputs:
        # The shell rechecks these with sha256sum during a run: any changed byte
        # of any input changes its line, without a Python start per check.
        print_raw(fingerprint_check_lines(task).rstrip("\n"))
        return EXIT_OK
    value = task_fingerprint(task)
    if args.json:
        print_json({"id": task.id, "fingerprint": value})
    else:
        print_raw(value)
    return EXIT_OK


def validate_command(args: argparse.Namespace) -> int:
    """``hpbench task validate ID``: the manifest's contract (loading), then the task's files
    against each other (:mod:`hpbench.task.checks`); errors exit 1 with every finding."""
    task = _load(args)
    findings = task_findings(task)
    if findings:
        raise ContractError(f"task {task.id}: not a sound task", findings)
    if args.json:
        print_json({"ok": True, "id": task.id, "findings": []})
    else:
        out_console.print(f"{task.manifest_path}: valid", markup=False, highlight=False)
    return EXIT_OK


def field_command(args: argparse.Namespace) -> int:
    """``hpbench task field ID NAME``: one value of ``task show --json``."""
    value: Any = task_summary(_load(args))
    for part in args.name.split("."):
        if not isinstance(value, dict) or part not in value:
            msg = f"task {args.task_id} has no field {args.name!r}"
            raise HpbenchError(msg)
        value = value[part]
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            msg = f"{args.name!r} is a table; name one of its keys: {', '.join(sorted(item))}"
            raise HpbenchError(msg)
        text = "" if item is None else str(item).lower() if isinstance(item, bool) else str(item)
        print_raw(text)
    return EXIT_OK


def hidden_files_command(args: argparse.Namespace) -> int:
    """``hpbench task hidden-files ID``."""
    for relative, path in _load(args).grader_file_paths():
        print_raw(f"{relative}\t{path.resolve()}")
    return EXIT_OK


def build_command(args: argparse.Namespace) -> int:
    """``hpbench task build ID --out DIR``."""
    task = _load(args)
    if task.manifest.source.kind is SourceKind.GIT:
        # A git-backed task's revisions come from a local mirror, never the network.
        origin = fetch_history(task, args.out)
        source = task.manifest.source
        built = BuiltHistory(args.out, source.base_revision, source.oracle_revision)
        log.info("task_fetched", task=task.id, source=str(origin))
    else:
        built = build_history(task, args.out)
    log.info("task_built", task=task.id, base=built.base_revision, oracle=built.oracle_revision)
    if args.json:
        print_json(
            {
                "id": task.id,
                "repository": str(args.out),
                "base_revision": built.base_revision,
                "oracle_revision": built.oracle_revision,
            }
        )
    else:
        print_fields(
            [
                ("repository", str(args.out)),
                ("base revision", built.base_revision),
                ("oracle revision", built.oracle_revision),
            ]
        )
    return EXIT_OK


BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench.sh"


def qualify_command(args: argparse.Namespace) -> int:
    """``hpbench task qualify ID``: the task is loaded (so a bad one is refused here), then
    this process becomes ``bench.sh preparation-only`` for it."""
    task = _load(args)
    env = {**os.environ, "TASK": task.id, "HPBENCH_TASKS_DIR": str(_tasks_dir(args))}
    env.pop("MODE", None)
    # A fixed script and fixed arguments: the shell runs the flow, not this process.
    os.execve(BENCH, [str(BENCH), "preparation-only"], env)  # noqa: S606
    return EXIT_OK  # not reached: execve replaces this process


def grader_spec_command(args: argparse.Namespace) -> int:
    """``hpbench task grader-spec ID --out DIR``."""
    write_grader_spec(_load(args), args.out)
    print_raw(str(args.out))
    return EXIT_OK
