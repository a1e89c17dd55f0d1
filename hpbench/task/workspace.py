"""Proof that an agent's workspace is history-free.

An agent must start from the base tree alone: one commit, no remote, no tags,
no reflog beyond that commit, no object that belongs only to the oracle, and
no hidden grader file in any form. Every check that fails becomes a finding,
so a refused workspace says everything that is wrong with it at once.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hpbench._git import blob_id, git, git_text
from hpbench.findings import Finding
from hpbench.task.history import build_history
from hpbench.task.manifest import SourceKind, Task


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def verify_workspace(
    workspace: Path, task: Task, task_repository: Path | None = None
) -> list[Finding]:
    """Every reason ``workspace`` is not a history-free base snapshot of ``task``.

    ``task_repository`` holds the task's base and oracle revisions; for a
    bundled task it may be omitted and is then built in a temporary directory.
    An empty list means the workspace is proven history-free.
    """
    if task_repository is None:
        if task.manifest.source.kind is not SourceKind.BUNDLED:
            return [
                Finding(
                    "workspace.repository",
                    "a git-sourced task needs --task-repo to know its oracle objects",
                    str(workspace),
                )
            ]
        with tempfile.TemporaryDirectory(prefix="hpbench-task-") as scratch:
            built = build_history(task, Path(scratch) / "repo")
            return _verify(workspace, task, built.repository)
    return _verify(workspace, task, task_repository)


def _verify(workspace: Path, task: Task, repository: Path) -> list[Finding]:
    where = str(workspace)
    if not (workspace / ".git").is_dir():
        return [Finding("workspace.not_git", "not the top of a git repository", where)]
    messages = [
        *_history_problems(workspace),
        *_object_problems(workspace, task, repository),
        *_content_problems(workspace, task, repository),
    ]
    return [Finding(code, message, where) for code, message in messages]


Problem = tuple[str, str]


def _history_problems(workspace: Path) -> list[Problem]:
    """One commit, one branch, no remote, no tags, no foreign reflog, no borrowed objects."""
    problems: list[Problem] = []
    commits = _lines(git_text(["rev-list", "--all", "--reflog"], workspace, check=False))
    if len(commits) != 1:
        problems.append(("workspace.commits", f"expected exactly one commit, found {len(commits)}"))
    head = git(["rev-parse", "--verify", "-q", "HEAD"], workspace, check=False)
    head_id = head.stdout.decode().strip()
    if head.returncode != 0:
        problems.append(("workspace.head", "HEAD does not name a commit"))
    remotes = _lines(git_text(["remote"], workspace))
    if remotes:
        problems.append(("workspace.remote", f"has remote(s): {', '.join(remotes)}"))
    refs = _lines(git_text(["for-each-ref", "--format=%(refname)"], workspace))
    extra_refs = [ref for ref in refs if not ref.startswith("refs/heads/")]
    if extra_refs:
        problems.append(("workspace.refs", f"has refs beyond one branch: {', '.join(extra_refs)}"))
    branches = [ref for ref in refs if ref.startswith("refs/heads/")]
    if len(branches) > 1:
        problems.append(("workspace.refs", f"has {len(branches)} branches, expected one"))
    reflog = _lines(git_text(["log", "-g", "--all", "--format=%H"], workspace, check=False))
    if any(entry != head_id for entry in reflog):
        problems.append(
            ("workspace.reflog", "the reflog names commits other than the snapshot commit")
        )
    for name in ("objects/info/alternates", "shallow", "objects/info/grafts"):
        if (workspace / ".git" / name).exists():
            problems.append(
                ("workspace.borrowed_objects", f".git/{name} exists: objects come from elsewhere")
            )
    return problems


def _present_objects(workspace: Path) -> set[str]:
    batch = ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]
    return set(_lines(git_text(batch, workspace)))


def _object_ids(args: list[str], cwd: Path) -> set[str]:
    return {line.split(" ", 1)[0] for line in _lines(git_text(args, cwd))}


def _oracle_only_objects(task: Task, repository: Path) -> set[str]:
    source = task.manifest.source
    return _object_ids(
        ["rev-list", "--objects", source.oracle_revision, f"^{source.base_revision}"], repository
    )


def _object_problems(workspace: Path, task: Task, repository: Path) -> list[Problem]:
    """No unreachable, oracle or hidden objects; the tree is the base tree."""
    problems: list[Problem] = []
    present = _present_objects(workspace)
    unreachable = present - _object_ids(["rev-list", "--objects", "--all"], workspace)
    if unreachable:
        problems.append(
            (
                "workspace.unreachable_objects",
                f"{len(unreachable)} object(s) not reachable from the snapshot commit",
            )
        )
    if task.manifest.source.oracle_revision in present:
        problems.append(("workspace.oracle_commit", "holds the oracle commit object"))
    leaked = _oracle_only_objects(task, repository) & present
    if leaked:
        problems.append(
            ("workspace.oracle_objects", f"holds {len(leaked)} object(s) of the oracle revision")
        )
    head_tree = git(["rev-parse", "--verify", "-q", "HEAD^{tree}"], workspace, check=False)
    base_tree = git_text(
        ["rev-parse", f"{task.manifest.source.base_revision}^{{tree}}"], repository
    )
    if head_tree.returncode == 0 and head_tree.stdout.decode().strip() != base_tree:
        problems.append(
            ("workspace.base_tree", "the snapshot's tree differs from the base revision's tree")
        )
    hidden = {blob_id(path.read_bytes()): name for name, path in task.grader_file_paths()}
    problems.extend(
        ("workspace.hidden_object", f"holds the content of hidden grader file {hidden[blob]}")
        for blob in sorted(hidden.keys() & present)
    )
    return problems


def _content_problems(workspace: Path, task: Task, repository: Path) -> list[Problem]:
    """No hidden grader file by path, and no working file with hidden or oracle-only content."""
    problems: list[Problem] = [
        ("workspace.hidden_file", f"hidden grader file {name} is present")
        for name, _ in task.grader_file_paths()
        if (workspace / name).exists()
    ]
    hidden = {blob_id(path.read_bytes()): name for name, path in task.grader_file_paths()}
    oracle_only = _oracle_only_objects(task, repository)
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace)
        if relative.parts[0] == ".git" or path.is_symlink() or not path.is_file():
            continue
        content = blob_id(path.read_bytes())
        if content in hidden:
            problems.append(
                (
                    "workspace.hidden_content",
                    f"{relative.as_posix()} holds hidden grader file {hidden[content]}",
                )
            )
        elif content in oracle_only:
            problems.append(
                (
                    "workspace.oracle_content",
                    f"{relative.as_posix()} has content of the oracle revision",
                )
            )
    return problems
