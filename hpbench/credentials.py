"""Keeping a real run's credential out of everything the run keeps.

The key reaches only the agents' Codex (bench-attempt passes it by name at
``docker exec``), and the commands Codex runs do not inherit it
(``shell_environment_policy`` in the generated config). But a command runs as the same
user as Codex and can still read the key from Codex's own process, then print it (into
``codex.jsonl``) or write it into the workspace (into ``diff.patch``). A router could log
it into its capture. So before anything is built from the evidence, ``hpbench run
finish`` searches every file of the run directory (and of its mount root, where the
workspaces still are) for the credential's value and replaces it in place. The paths are
written to ``credential-exposures.txt`` and the report refuses the run, naming them: a
run whose agent reached for the key is no clean measurement, and the evidence is kept
with only the key's bytes replaced.

The value is read from the environment variable the plan names (or the API key in the
auth file it names), held in memory only, and never logged or written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

import structlog

from hpbench._jsonio import write_atomic, write_atomic_stream
from hpbench.rundir import MOUNTS_LINK
from hpbench.settings import API_KEY_VARIABLES, AUTH_FILE_VARIABLE, Settings, auth_file_key

log = structlog.get_logger()

REDACTED = b"[credential redacted by hpbench]"
# A credential shorter than this is not searched for: replacing a short string would
# rewrite ordinary evidence (no provider issues keys this short).
MIN_LENGTH = 12


def credential_values(plan: Settings, env: Mapping[str, str]) -> tuple[str, ...]:
    """The value of the run's credential, if it has one long enough to search for."""
    value = ""
    if plan.credential in API_KEY_VARIABLES:
        value = env.get(plan.credential, "")
    elif plan.credential == AUTH_FILE_VARIABLE and plan.auth_file:
        value = auth_file_key(Path(plan.auth_file))[0] or ""
    value = value.strip()
    if value and len(value) < MIN_LENGTH:
        log.warning("credential_not_searched", reason=f"shorter than {MIN_LENGTH} characters")
        return ()
    return (value,) if value else ()


def _files(root: Path) -> Iterator[Path]:
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                yield path


def _roots(run_dir: Path) -> list[Path]:
    roots = [run_dir]
    link = run_dir / MOUNTS_LINK
    if link.is_symlink():
        roots.append(link.readlink())
    return roots


# Files are read in chunks: an agent can leave a file as large as the disk allows.
CHUNK = 1 << 20


def _open(path: Path) -> BinaryIO:
    """``path`` for reading, never through a symlink (whatever replaced it meanwhile)."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb")


def _chunks(path: Path, needles: list[bytes]) -> Iterator[bytes]:
    """``path``'s bytes with every needle replaced, chunk by chunk: each chunk is
    searched together with the end of the one before, so a needle that straddles two
    chunks is found too."""
    keep = max(len(needle) for needle in needles) - 1
    tail = b""
    with _open(path) as stream:
        while chunk := stream.read(CHUNK):
            data = tail + chunk
            for needle in needles:
                data = data.replace(needle, REDACTED)
            cut = max(len(data) - keep, 0)
            yield data[:cut]
            tail = data[cut:]
    yield tail


def _holds(path: Path, needles: list[bytes]) -> bool:
    """Whether ``path`` holds a needle, read in chunks that overlap by a needle's length."""
    keep = max(len(needle) for needle in needles) - 1
    tail = b""
    with _open(path) as stream:
        while chunk := stream.read(CHUNK):
            data = tail + chunk
            if any(needle in data for needle in needles):
                return True
            tail = data[len(data) - keep :] if keep else b""
    return False


def _rewrite(path: Path, needles: list[bytes]) -> None:
    """``path`` with every needle replaced, atomically, with its mode kept."""
    mode = path.stat().st_mode & 0o777

    def write(stream: BinaryIO) -> None:
        for chunk in _chunks(path, needles):
            stream.write(chunk)

    write_atomic_stream(path, write, mode)


def scrub(run_dir: Path, values: tuple[str, ...]) -> list[str]:
    """Replace every occurrence of ``values`` in the run's files; the paths changed
    (relative to the run directory, or ``.mounts/…`` under its mount root)."""
    needles = [value.encode() for value in values if value]
    if not needles:
        return []
    changed = []
    for index, root in enumerate(_roots(run_dir)):
        for path in _files(root):
            try:
                if not _holds(path, needles):
                    continue
                _rewrite(path, needles)
            except OSError:
                continue
            relative = path.relative_to(root).as_posix()
            changed.append(relative if index == 0 else f"{MOUNTS_LINK}/{relative}")
    if changed:
        log.warning("credential_redacted", files=len(changed))
    return sorted(changed)


def scrub_run(run_dir: Path, plan: Settings, env: Mapping[str, str], record: Path) -> list[str]:
    """Scrub the run of its credential and write the changed paths to ``record`` (one a
    line; an empty file when there were none). Returns the paths."""
    changed = scrub(run_dir, credential_values(plan, env))
    write_atomic(record, "".join(f"{path}\n" for path in changed))
    return changed
