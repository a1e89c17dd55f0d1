"""Where tasks live and how they are found by id."""

from __future__ import annotations

import os
from pathlib import Path

from hpbench.errors import HpbenchError
from hpbench.task.manifest import MANIFEST_NAME, Task, load_manifest

TASKS_DIR_ENV = "HPBENCH_TASKS_DIR"


def default_tasks_dir() -> Path:
    """``$HPBENCH_TASKS_DIR``, else ``tasks/`` of the source checkout, else ``./tasks``."""
    configured = os.environ.get(TASKS_DIR_ENV)
    if configured:
        return Path(configured)
    checkout = Path(__file__).resolve().parents[2] / "tasks"
    if checkout.is_dir():
        return checkout
    return Path.cwd() / "tasks"


def task_ids(tasks_dir: Path) -> list[str]:
    """Ids of every directory under ``tasks_dir`` that holds a manifest, sorted."""
    if not tasks_dir.is_dir():
        msg = f"no tasks directory at {tasks_dir} (set {TASKS_DIR_ENV} or pass --tasks-dir)"
        raise HpbenchError(msg)
    return sorted(p.parent.name for p in tasks_dir.glob(f"*/{MANIFEST_NAME}"))


def load_task(task_id: str, tasks_dir: Path) -> Task:
    """Load one task by id, refusing ids that would leave ``tasks_dir``."""
    if "/" in task_id or task_id in {"", ".", ".."}:
        msg = f"not a task id: {task_id!r}"
        raise HpbenchError(msg)
    directory = tasks_dir / task_id
    if not (directory / MANIFEST_NAME).is_file():
        known = ", ".join(task_ids(tasks_dir)) or "none"
        msg = f"no task {task_id!r} in {tasks_dir} (known: {known})"
        raise HpbenchError(msg)
    return load_manifest(directory)
