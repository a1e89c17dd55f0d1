"""A git-backed task's history: its two revisions, fetched from a local mirror.

A ``[source] kind = "git"`` task names the repository it comes from (``url``) and two
revisions. hpbench never reaches for the network to get them: a run is only as
reproducible as its source, and a benchmark must not depend on a host being up. The
revisions come from a local git repository instead:

- the ``url`` itself when it is a local path (absolute, or ``file://``);
- otherwise a mirror in one of the directories ``HPBENCH_TASK_MIRRORS`` names
  (colon-separated), found as ``<task id>.git``, ``<task id>``, ``<repository name>.git``
  or ``<repository name>``, in that order, directory by directory.

The task repository a run uses is a new repository holding exactly what the two
revisions reach (fetched by id, no tags, no other refs), with ``main`` at the oracle:
the same shape :func:`hpbench.task.history.build_history` gives a bundled task, so the
snapshots, the workspace proof and the module-cache rules work the same for both.
Without a reachable source, preparation refuses in one line that names the task, the
source and how to give a mirror.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from hpbench._git import git, git_text
from hpbench.errors import HpbenchError
from hpbench.task.manifest import SourceKind, Task

MIRRORS_VARIABLE = "HPBENCH_TASK_MIRRORS"
BRANCH = "main"


class SourceUnreachableError(HpbenchError):
    """A git-backed task's source is not on this machine."""


def repository_name(url: str) -> str:
    """The last path component of ``url`` without ``.git`` (``etcd`` for
    ``https://github.com/etcd-io/etcd.git``)."""
    path = urlsplit(url).path if "://" in url else url
    name = path.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git")


def _local_path(url: str) -> Path | None:
    if url.startswith("file://"):
        return Path(urlsplit(url).path)
    if url.startswith("/"):
        return Path(url)
    return None


def _is_repository(path: Path) -> bool:
    """Whether ``path`` is a git repository (bare or with a work tree)."""
    if not path.is_dir():
        return False
    result = git(["rev-parse", "--git-dir"], path, check=False)
    return result.returncode == 0


def candidates(task: Task, env: Mapping[str, str]) -> list[Path]:
    """Where the task's source is looked for, in order."""
    url = task.manifest.source.url or ""
    local = _local_path(url)
    if local is not None:
        return [local]
    names = [f"{task.id}.git", task.id]
    name = repository_name(url)
    if name:
        names += [f"{name}.git", name]
    directories = [Path(entry) for entry in env.get(MIRRORS_VARIABLE, "").split(":") if entry]
    return [directory / candidate for directory in directories for candidate in names]


def unreachable_message(task: Task, env: Mapping[str, str]) -> str:
    """The one line a run refuses with when the source is not here."""
    url = task.manifest.source.url or ""
    if _local_path(url) is not None:
        return f"task {task.id}: its git source {url} is not a git repository on this machine"
    looked = env.get(MIRRORS_VARIABLE, "")
    where = f"found no mirror in {MIRRORS_VARIABLE}={looked}" if looked else "has no mirror"
    return (
        f"task {task.id}: its git source {url} is not fetched over the network and {where}; "
        f"make one with `git clone --mirror {url} DIR/{task.id}.git` and set "
        f"{MIRRORS_VARIABLE}=DIR"
    )


def find_source(task: Task, env: Mapping[str, str] | None = None) -> Path:
    """The local repository that holds the task's revisions.

    Raises:
        SourceUnreachableError: none of the candidates is a git repository.
    """
    env = os.environ if env is None else env
    for path in candidates(task, env):
        if _is_repository(path):
            return path
    raise SourceUnreachableError(unreachable_message(task, env))


def fetch_history(task: Task, out: Path, env: Mapping[str, str] | None = None) -> Path:
    """Make ``out`` a new repository holding the task's base and oracle revisions from its
    local source, ``main`` at the oracle and checked out; returns the source used.

    Raises:
        SourceUnreachableError: no local source.
        HpbenchError: ``out`` is not empty, a revision is missing from the source or is not
            a commit, or the oracle does not descend from the base.
    """
    source = task.manifest.source
    if source.kind is not SourceKind.GIT:
        msg = f"task {task.id}: a {source.kind.value} source is built, not fetched"
        raise HpbenchError(msg)
    origin = find_source(task, env)
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        msg = f"{out}: refusing to fetch into a non-empty directory"
        raise HpbenchError(msg)
    out.mkdir(parents=True, exist_ok=True)
    git(["init", "-q", "-b", BRANCH, str(out)], out)
    revisions = (source.base_revision, source.oracle_revision)
    fetched = git(["fetch", "-q", "--no-tags", str(origin), *revisions], out, check=False)
    if fetched.returncode != 0:
        stderr = fetched.stderr.decode("utf-8", "replace").strip().splitlines()
        msg = (
            f"task {task.id}: {origin} does not have revisions {', '.join(revisions)}"
            f" ({stderr[-1] if stderr else 'git fetch failed'})"
        )
        raise HpbenchError(msg)
    for name, revision in zip(("base", "oracle"), revisions, strict=True):
        kind = git_text(["cat-file", "-t", revision], out, check=False)
        if kind != "commit":
            msg = f"task {task.id}: the {name} revision {revision} is not a commit in {origin}"
            raise HpbenchError(msg)
    ancestor = git(["merge-base", "--is-ancestor", *revisions], out, check=False)
    if ancestor.returncode != 0:
        msg = (
            f"task {task.id}: the oracle revision {source.oracle_revision} does not descend "
            f"from the base revision {source.base_revision}"
        )
        raise HpbenchError(msg)
    git(["update-ref", f"refs/heads/{BRANCH}", source.oracle_revision], out)
    git(["reset", "-q", "--hard", source.oracle_revision], out)
    # FETCH_HEAD names the source: nothing of where it came from stays in the repository.
    (out / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    return origin
