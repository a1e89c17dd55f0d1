"""Tasks: manifests, fingerprints, history built from bundled files, workspace proofs."""

from hpbench.task.fingerprint import task_fingerprint
from hpbench.task.manifest import Manifest, OracleTier, Task, load_manifest
from hpbench.task.registry import default_tasks_dir, load_task, task_ids

__all__ = [
    "Manifest",
    "OracleTier",
    "Task",
    "default_tasks_dir",
    "load_manifest",
    "load_task",
    "task_fingerprint",
    "task_ids",
]
