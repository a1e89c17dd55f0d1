"""Bundled tasks become real git history: a base commit and an oracle commit.

The commits are built from blobs and an index, never from a working tree, so
file modes, mtimes, umask and the user's git configuration cannot change them.
Author, committer, dates and messages are fixed; the resulting commit ids are
therefore a pure function of the bundled files and are checked against the
revisions the manifest declares on every build.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from hpbench._git import git, git_env, git_text
from hpbench.errors import ContractError, HpbenchError
from hpbench.findings import Finding
from hpbench.task.manifest import SourceKind, Task

BASE_DATE = "2024-01-01T00:00:00+00:00"
ORACLE_DATE = "2024-01-02T00:00:00+00:00"
BRANCH = "main"
_FILE_MODE = "100644"


@attrs.frozen
class BuiltHistory:
    """The repository a build made and the two commit ids in it."""

    repository: Path
    base_revision: str
    oracle_revision: str


def tree_files(root: Path) -> dict[str, bytes]:
    """Every regular file below ``root`` as {POSIX relative path: bytes}.

    Symbolic links and special files are refused: their meaning depends on the
    machine, and a task must build the same everywhere.
    """
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            msg = f"{path}: bundled task files must not be symbolic links"
            raise HpbenchError(msg)
        if path.is_dir():
            continue
        if not path.is_file():
            msg = f"{path}: bundled task files must be regular files"
            raise HpbenchError(msg)
        files[relative] = path.read_bytes()
    return files


def oracle_files(task: Task) -> dict[str, bytes]:
    """The oracle revision's files: base, then the overlay, minus the deletions."""
    source = task.manifest.source
    if source.kind is not SourceKind.BUNDLED or source.base is None or source.oracle is None:
        msg = f"task {task.id}: only a bundled source can be built from files"
        raise HpbenchError(msg)
    files = tree_files(task.directory / source.base)
    overlay = tree_files(task.directory / source.oracle)
    findings: list[Finding] = []
    for index, name in enumerate(source.oracle_deletions):
        if name not in files:
            findings.append(
                Finding(
                    "task.build.deletion",
                    f"deletes {name!r}, which the base tree does not have",
                    str(task.manifest_path),
                    f"$.source.oracle_deletions[{index}]",
                )
            )
        if name in overlay:
            findings.append(
                Finding(
                    "task.build.deletion",
                    f"deletes {name!r}, which the oracle overlay also writes",
                    str(task.manifest_path),
                    f"$.source.oracle_deletions[{index}]",
                )
            )
    if findings:
        raise ContractError(f"task {task.id}: the oracle change is inconsistent", findings)
    result = {**files, **overlay}
    for name in source.oracle_deletions:
        del result[name]
    if result == files:
        msg = f"task {task.id}: the oracle overlay changes nothing"
        raise HpbenchError(msg)
    return result


def _write_tree(repository: Path, files: dict[str, bytes]) -> str:
    """Write ``files`` as blobs and one tree; return the tree id."""
    index_env = {**git_env(), "GIT_INDEX_FILE": str(repository / ".git" / "hpbench-build-index")}
    git(["read-tree", "--empty"], repository, env=index_env)
    lines = []
    for name in sorted(files):
        blob = git_text(
            ["hash-object", "-w", "--no-filters", "--stdin"], repository, stdin=files[name]
        )
        lines.append(f"{_FILE_MODE} {blob}\t{name}\n")
    git(
        ["update-index", "--add", "--index-info"],
        repository,
        stdin="".join(lines).encode(),
        env=index_env,
    )
    tree = git_text(["write-tree"], repository, env=index_env)
    (repository / ".git" / "hpbench-build-index").unlink()
    return tree


def _commit(repository: Path, tree: str, message: str, date: str, parent: str | None) -> str:
    args = ["commit-tree", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    return git_text(args, repository, env=git_env(date))


def build_history(task: Task, out: Path, *, check_revisions: bool = True) -> BuiltHistory:
    """Build ``task``'s base and oracle commits into a new repository at ``out``.

    ``main`` points at the oracle; the working tree is checked out there.

    Raises:
        HpbenchError: ``out`` is not empty, the task is not bundled, or (with
            ``check_revisions``) a built commit id differs from the manifest.
    """
    source = task.manifest.source
    if source.kind is not SourceKind.BUNDLED or source.base is None:
        msg = f"task {task.id}: a {source.kind.value} source is fetched, not built"
        raise HpbenchError(msg)
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        msg = f"{out}: refusing to build into a non-empty directory"
        raise HpbenchError(msg)
    base = tree_files(task.directory / source.base)
    oracle = oracle_files(task)
    out.mkdir(parents=True, exist_ok=True)
    git(["init", "-q", "-b", BRANCH, str(out)], out)
    base_commit = _commit(out, _write_tree(out, base), f"{task.id}: base", BASE_DATE, None)
    oracle_commit = _commit(
        out, _write_tree(out, oracle), f"{task.id}: oracle", ORACLE_DATE, base_commit
    )
    git(["update-ref", f"refs/heads/{BRANCH}", oracle_commit], out)
    git(["reset", "-q", "--hard", oracle_commit], out)
    if check_revisions:
        mismatches = [
            Finding(
                "task.build.revision",
                f"the build made {built}, the manifest says {declared}",
                str(task.manifest_path),
                f"$.source.{name}",
            )
            for name, built, declared in (
                ("base_revision", base_commit, source.base_revision),
                ("oracle_revision", oracle_commit, source.oracle_revision),
            )
            if built != declared
        ]
        if mismatches:
            raise ContractError(
                f"task {task.id}: bundled files do not build the declared revisions", mismatches
            )
    return BuiltHistory(out, base_commit, oracle_commit)
