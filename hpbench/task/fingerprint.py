"""The content fingerprint of a task.

It covers the manifest, the visible prompt and every hidden grader file: each
as its task-relative path and its bytes, in canonical (sorted path) order.
File order on disk, modification times and permissions play no part, so two
clones of the repository agree, while any changed byte changes the digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hpbench.task.manifest import MANIFEST_NAME, Task

FINGERPRINT_PREFIX = "sha256:"


def fingerprint_inputs(task: Task) -> list[tuple[str, Path]]:
    """The (task-relative path, file) pairs the fingerprint covers, sorted by path."""
    entries = {
        MANIFEST_NAME: task.manifest_path,
        task.manifest.prompt: task.prompt_path,
    }
    grader = task.manifest.grader
    if grader is not None:
        for name, path in task.grader_file_paths():
            entries[f"{grader.root}/{name}"] = path
    return sorted(entries.items())


def task_fingerprint(task: Task) -> str:
    """``sha256:<hex>`` over every input's length-prefixed path and bytes."""
    digest = hashlib.sha256(b"hpbench.task-fingerprint.v1\0")
    for name, path in fingerprint_inputs(task):
        encoded = name.encode("utf-8")
        data = path.read_bytes()
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        digest.update(len(data).to_bytes(8, "big") + data)
    return FINGERPRINT_PREFIX + digest.hexdigest()


def fingerprint_check_lines(task: Task) -> str:
    """``sha256sum -c`` lines of every input (``<hex>  <absolute path>``): the shell rechecks
    them during a run without starting Python."""
    return "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.resolve()}\n"
        for _, path in fingerprint_inputs(task)
    )
