"""Reading a ``codex exec --json`` stream line by line.

Memory stays constant however long the stream is: each line is decoded,
turned into one event and handed on. A line that cannot be read becomes an
:class:`~hpbench.codex.events.InvalidLine` carrying a finding with its line
number; reading always continues with the next line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from hpbench.codex._fields import FieldProblemError
from hpbench.codex._json import decode_line
from hpbench.codex.events import Event, InvalidLine, parse_event
from hpbench.errors import HpbenchError
from hpbench.findings import Finding


def _invalid(
    source: str,
    line: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    event_type: str | None = None,
) -> InvalidLine:
    return InvalidLine(
        line=line,
        finding=Finding(code=code, message=message, file=source, field=field, line=line),
        event_type=event_type,
    )


def _event_from_line(raw_line: bytes | str, number: int, source: str) -> Event:
    if isinstance(raw_line, bytes):
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _invalid(source, number, "codex.line.not-utf8", f"not UTF-8 ({exc.reason})")
    else:
        text = raw_line
    if not text.strip():
        return _invalid(source, number, "codex.line.blank", "blank line in a JSONL stream")
    try:
        raw = decode_line(text)
    except ValueError as exc:
        return _invalid(source, number, "codex.line.not-json", f"not JSON ({exc})")
    except RecursionError:
        return _invalid(source, number, "codex.line.not-json", "not JSON (nested too deeply)")
    if not isinstance(raw, dict):
        return _invalid(source, number, "codex.line.not-object", "a line must be one JSON object")
    try:
        return parse_event(raw, number)
    except FieldProblemError as problem:
        kind = raw.get("type")
        return _invalid(
            source,
            number,
            "codex.event.invalid",
            problem.message,
            field=problem.field,
            event_type=kind if isinstance(kind, str) else None,
        )


def iter_events(lines: Iterable[bytes | str], *, source: str = "<stream>") -> Iterator[Event]:
    """Yield one event per line of ``lines`` (bytes or text, with or without newlines).

    Args:
        lines: the stream, e.g. a file opened in binary mode.
        source: the name findings report as the file.
    """
    for number, raw_line in enumerate(lines, start=1):
        yield _event_from_line(raw_line, number, source)


def read_events(path: Path) -> Iterator[Event]:
    """Yield the events of a JSONL file, reading it line by line.

    Raises:
        HpbenchError: the file cannot be opened.
    """
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise HpbenchError(f"{path}: cannot read the Codex JSONL ({exc.strerror})") from exc
    with stream:
        yield from iter_events(stream, source=str(path))
