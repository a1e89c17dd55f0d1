"""Freeze once: select eligible rollouts by a seeded rule and keep their exact bytes.

The selection never reads a token count or a compression result: a session's place
in the order is a seeded hash of its id alone, and a session with several eligible
rollouts keeps the one whose relative path has the smallest seeded hash. The
destination must not exist (not even empty) and must lie outside the repository.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Final

import attrs

import hpbench
from hpbench._git import git
from hpbench.codecreplay.manifest import (
    CODE,
    CORPUS_SCHEMA,
    MANIFEST_NAME,
    SAMPLES_DIR,
    CorpusManifest,
    Sample,
    sample_path,
    write_manifest,
)
from hpbench.codecreplay.rollout import CRITERIA, REQUEST_RULE, IneligibleError, parse_rollout
from hpbench.errors import ContractError, PrerequisiteError
from hpbench.findings import Finding

ROLLOUT_GLOB: Final = "rollout-*.jsonl"
EXISTS: Final = "the destination exists; a freeze never writes into or over one"

SELECTION: Final = (
    "Each eligible logical session is keyed by the SHA-256 hex digest of the UTF-8 text "
    '"hpbench.codec-corpus.v1/session/<seed>/<session_id>"; sessions are ordered by that '
    "key, ascending, and the first requested_size are selected. Token counts, usage and "
    "compression results are never read."
)
ROLLOUT_SELECTION: Final = (
    "Of a session's eligible rollouts, the one whose path relative to the sessions "
    "directory has the smallest SHA-256 hex digest of the UTF-8 text "
    '"hpbench.codec-corpus.v1/rollout/<seed>/<relative path>" is selected. Token counts, '
    "usage and compression results are never read."
)


def session_key(seed: int, session_id: str) -> str:
    """A session's place in the seeded order (:data:`SELECTION`)."""
    text = f"{CORPUS_SCHEMA}/session/{seed}/{session_id}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rollout_key(seed: int, relative: str) -> str:
    """A rollout's rank among its session's rollouts (:data:`ROLLOUT_SELECTION`)."""
    text = f"{CORPUS_SCHEMA}/rollout/{seed}/{relative}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@attrs.frozen
class Frozen:
    """A finished freeze: the manifest, where it is, and its identity."""

    manifest: CorpusManifest
    path: Path
    sha256: str


@attrs.frozen
class _Candidate:
    path: Path
    relative: str
    session_id: str
    bytes: int
    sha256: str


def _refuse(message: str, source: Path, field: str = "$") -> ContractError:
    return ContractError(message, [Finding(CODE, message, file=str(source), field=field)])


def repository_roots(cwd: Path | None = None) -> list[Path]:
    """The checkouts a corpus must stay out of: hpbench's own and the git work tree of ``cwd``."""
    roots = [Path(hpbench.__file__).resolve().parent.parent]
    try:
        found = git(["rev-parse", "--show-toplevel"], cwd or Path.cwd(), check=False)
    except PrerequisiteError:
        return roots
    if found.returncode == 0 and found.stdout.strip():
        roots.append(Path(os.fsdecode(found.stdout.strip())).resolve())
    return roots


def _check_destination(dest: Path) -> Path:
    resolved = dest.resolve()
    for root in repository_roots():
        if resolved == root or root in resolved.parents:
            msg = f"the destination is inside the repository {root}; keep private bytes outside it"
            raise _refuse(msg, dest)
    if dest.exists() or dest.is_symlink():
        raise _refuse(EXISTS, dest)
    return resolved


def _read_regular(path: Path) -> bytes:
    if path.is_symlink() or not path.is_file():
        raise IneligibleError("not-a-regular-file")
    try:
        return path.read_bytes()
    except OSError:
        raise IneligibleError("unreadable") from None


def _scan(sessions_dir: Path) -> tuple[int, Counter[str], list[_Candidate]]:
    scanned = 0
    ineligible: Counter[str] = Counter()
    eligible: list[_Candidate] = []
    for top, dirs, files in os.walk(sessions_dir, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(top) / name
            if not path.match(ROLLOUT_GLOB):
                continue
            scanned += 1
            relative = path.relative_to(sessions_dir).as_posix()
            try:
                data = _read_regular(path)
                rollout = parse_rollout(data)
            except IneligibleError as exc:
                ineligible[exc.reason] += 1
                continue
            digest = hashlib.sha256(data).hexdigest()
            eligible.append(_Candidate(path, relative, rollout.session_id, len(data), digest))
    return scanned, ineligible, eligible


def _copy_sample(candidate: _Candidate, path: Path) -> None:
    """The rollout's bytes into ``path``, provided they are still the bytes that were judged."""
    try:
        data = candidate.path.read_bytes()
    except OSError:
        data = b""
    if len(data) != candidate.bytes or hashlib.sha256(data).hexdigest() != candidate.sha256:
        msg = "the rollout changed while it was being frozen; freeze again when it is idle"
        raise _refuse(msg, candidate.path)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(handle, "wb") as stream:
        os.fchmod(stream.fileno(), 0o600)
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def freeze(sessions_dir: Path, dest: Path, seed: int, size: int) -> Frozen:
    """Select up to ``size`` eligible sessions of ``sessions_dir`` and freeze them into ``dest``.

    Raises:
        ContractError: a size below 1, a sessions directory that is not one, a destination
            that exists or lies inside the repository, or no eligible rollout at all.
    """
    if size < 1:
        raise _refuse(f"the size must be at least 1, got {size}", dest, "size")
    if not sessions_dir.is_dir():
        raise _refuse("the sessions directory is not a directory", sessions_dir)
    _check_destination(dest)
    scanned, ineligible, eligible = _scan(sessions_dir)
    by_session: dict[str, list[_Candidate]] = {}
    for candidate in eligible:
        by_session.setdefault(candidate.session_id, []).append(candidate)
    if not by_session:
        raise _refuse(f"none of the {scanned} rollout files is eligible", sessions_dir)
    order = sorted(by_session, key=lambda session: session_key(seed, session))[:size]
    chosen = [
        (min(by_session[session], key=lambda c: rollout_key(seed, c.relative)), session)
        for session in order
    ]
    samples = tuple(
        Sample(
            order=position,
            session_id=session,
            rollout=candidate.relative,
            rollout_candidates=len(by_session[session]),
            bytes=candidate.bytes,
            sha256=candidate.sha256,
        )
        for position, (candidate, session) in enumerate(chosen, start=1)
    )
    manifest = CorpusManifest(
        schema=CORPUS_SCHEMA,
        sessions_dir=str(sessions_dir.resolve()),
        eligibility=tuple(f"{code}: {text}" for code, text in CRITERIA),
        selection=SELECTION,
        rollout_selection=ROLLOUT_SELECTION,
        request_rule=REQUEST_RULE,
        seed=seed,
        requested_size=size,
        files_scanned=scanned,
        ineligible=dict(sorted(ineligible.items())),
        eligible_rollouts=len(eligible),
        population=len(by_session),
        samples=samples,
    )
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        dest.mkdir(mode=0o700)
    except FileExistsError as exc:
        raise _refuse(
            "the destination exists; a freeze never writes into or over one", dest
        ) from exc
    try:
        dest.chmod(0o700)
        (dest / SAMPLES_DIR).mkdir(mode=0o700)
        (dest / SAMPLES_DIR).chmod(0o700)
        for sample, (candidate, _) in zip(samples, chosen, strict=True):
            _copy_sample(candidate, sample_path(dest, sample))
        digest = write_manifest(manifest, dest / MANIFEST_NAME)
    except BaseException:
        # Only what this call created: the destination did not exist before it.
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return Frozen(manifest, dest / MANIFEST_NAME, digest)
