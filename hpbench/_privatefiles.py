"""Reading files a router published into a private directory, without trusting them.

Exact evidence and issue reports are both published by a process hpbench does not
control (the router under test, or a hook running in its container) into a mode-0700
directory of mode-0600 files. Whoever wrote them, the runner reads them the same way: it
never follows a symlink, it reads at most a bounded number of bytes, and it refuses a
JSON object that gives a key twice (two readers could otherwise see two documents).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, TypeVar

import attrs

from hpbench._convert import make_converter, structure
from hpbench.errors import ContractError
from hpbench.findings import Finding

T = TypeVar("T")
_CONVERTER = make_converter()


def lstat_mode(path: Path) -> int | None:
    """``path``'s own mode (a symlink's, not its target's); None when nothing is there."""
    try:
        return path.lstat().st_mode
    except FileNotFoundError:
        return None


def is_real_dir(path: Path) -> bool:
    """Whether ``path`` is a directory itself, not a symlink to one."""
    mode = lstat_mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words, for a finding."""
    return "a symlink" if stat.S_ISLNK(mode) else "not a regular file"


def read_nofollow(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path``, opened without following a symlink (a file swapped for one
    after an ``lstat`` is refused, not followed); at most ``limit + 1`` bytes when given,
    so an oversized file is seen as such without reading all of it."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as stream:
        return stream.read() if limit is None else stream.read(limit + 1)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        msg = f"key(s) given twice: {', '.join(repeated)}"
        raise ValueError(msg)
    return dict(pairs)


def loads_unique(text: str) -> Any:
    """``json.loads`` that refuses an object giving a key twice.

    Raises:
        ValueError: not JSON, or a key given twice.
    """
    return json.loads(text, object_pairs_hook=_unique_keys)


@attrs.frozen
class ParseCodes:
    """The finding codes of one kind of published file."""

    encoding: str
    json: str
    schema: str


def parse_document(
    raw: bytes, cls: type[T], *, source: str, codes: ParseCodes, problems: list[Finding]
) -> T | None:
    """``raw`` as one ``cls``: UTF-8 text of one JSON object, no key given twice (two
    readers could otherwise see two documents), structured strictly (an unknown key is
    refused by name). Each failure is one finding added to ``problems``; None then."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Finding(codes.encoding, f"not valid UTF-8 at byte {exc.start}", source))
        return None
    try:
        data = loads_unique(text)
    except ValueError as exc:
        problems.append(Finding(codes.json, f"not one JSON object: {exc}", file=source))
        return None
    try:
        return structure(_CONVERTER, data, cls, source=source, code=codes.schema)
    except ContractError as exc:
        problems.extend(exc.findings)
        return None


@attrs.frozen
class ScanCodes:
    """The finding codes of one kind of private directory."""

    file: str
    permissions: str
    leftover: str


@attrs.frozen
class Entry:
    """One file of a private directory: whether it is a published regular file to read,
    and what is already wrong with it (a file with any finding is never evidence)."""

    path: Path
    readable: bool
    findings: list[Finding]


def scan_private(
    folder: Path, *, name: re.Pattern[str], noun: str, codes: ScanCodes
) -> tuple[list[Entry], list[Finding]]:
    """The entries of a mode-0700 directory of mode-0600 files published under ``name``,
    in file-name order, and what is wrong with the directory itself.

    An absent directory holds nothing (no finding). A directory that is a symlink is never
    listed: it could point the runner at files another process controls. An entry
    without a published name is a leftover (a write that never completed); one that is
    not a regular file (a symlink above all) is never read. ``noun`` names a file in the
    findings (``record``, ``report``).
    """
    mode = lstat_mode(folder)
    if mode is None:
        return [], []
    where = str(folder)
    if not stat.S_ISDIR(mode):
        return [], [Finding(codes.file, f"the {noun}s directory is {kind_of(mode)}", where)]
    findings: list[Finding] = []
    if stat.S_IMODE(mode) != 0o700:
        message = f"the {noun}s directory has mode {stat.S_IMODE(mode):04o}, not 0700"
        findings.append(Finding(codes.permissions, message, where))
    entries = [_entry(Path(e.path), name, noun, codes) for e in os.scandir(folder)]
    return sorted(entries, key=lambda entry: entry.path.name), findings


def _entry(path: Path, name: re.Pattern[str], noun: str, codes: ScanCodes) -> Entry:
    source = str(path)
    if not name.fullmatch(path.name):
        message = f"not a published {noun} name (a write that never completed leaves this)"
        return Entry(path, False, [Finding(codes.leftover, message, source)])
    mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        return Entry(path, False, [Finding(codes.file, f"the {noun} is {kind_of(mode)}", source)])
    if stat.S_IMODE(mode) != 0o600:
        message = f"the {noun} has mode {stat.S_IMODE(mode):04o}, not 0600"
        return Entry(path, True, [Finding(codes.permissions, message, source)])
    return Entry(path, True, [])
