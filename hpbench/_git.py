"""A thin, environment-clean way to ask git things.

User and system git configuration (signing, hooks, autocrlf, default branch)
must never change what hpbench builds or proves, so every call runs with
neither and with fixed identities.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from hpbench.errors import HpbenchError, PrerequisiteError

IDENTITY_NAME = "hpbench"
IDENTITY_EMAIL = "tasks@hpbench.invalid"


def git_env(date: str | None = None) -> dict[str, str]:
    """The environment for every git call: no user config, fixed identity and dates."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in {"HOME", "XDG_CONFIG_HOME"}
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=IDENTITY_NAME,
        GIT_AUTHOR_EMAIL=IDENTITY_EMAIL,
        GIT_COMMITTER_NAME=IDENTITY_NAME,
        GIT_COMMITTER_EMAIL=IDENTITY_EMAIL,
        GIT_TERMINAL_PROMPT="0",
        HOME=os.devnull,
    )
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


def git(
    args: Sequence[str],
    cwd: Path,
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd`` and return the completed process.

    Raises:
        PrerequisiteError: git is not installed.
        HpbenchError: git failed and ``check`` is true; the message keeps git's stderr.
    """
    command = ["git", "-c", "core.autocrlf=false", "-c", "core.fsmonitor=false", *args]
    try:
        result = subprocess.run(
            command,
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=dict(env) if env is not None else git_env(),
            check=False,
        )
    except FileNotFoundError:
        raise PrerequisiteError("git is not installed", "apt-get install git") from None
    if check and result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()
        msg = f"git {' '.join(args)} failed in {cwd} (exit {result.returncode}): {stderr}"
        raise HpbenchError(msg)
    return result


def git_text(args: Sequence[str], cwd: Path, **kwargs: object) -> str:
    """``git args`` stdout as stripped text."""
    return git(args, cwd, **kwargs).stdout.decode("utf-8").strip()  # type: ignore[arg-type]


def blob_id(data: bytes) -> str:
    """The SHA-1 object id git gives ``data`` as a blob, computed without git."""
    import hashlib  # noqa: PLC0415 - only this helper needs it

    header = f"blob {len(data)}\0".encode()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()
