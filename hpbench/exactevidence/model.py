"""The exact-evidence record (``hpbench.hpatch-exact-evidence.v1``) and its finding codes.

With exact evidence on, the treatment router publishes one JSON object per completed
``hpatch`` or ``hpatch_recover`` call: the exact payload the model emitted, and either
Codex's exact report (the patch applied) or the exact diagnostic the model read (it did
not). Each object carries the identities the runner joins it by and, for each exact
string, its UTF-8 length and SHA-256, which the runner recomputes. Nothing else is
allowed in: an unknown key (a request header, a credential, a rebuilt script) is refused
by name.
"""

from __future__ import annotations

import enum
import hashlib
import re
from pathlib import Path
from typing import Any, Final, Literal, NewType

import attrs

from hpbench import schemagen
from hpbench._convert import make_converter
from hpbench.rundir import EXACT_EVIDENCE_JSONL
from hpbench.schemagen import doc

RECORD_SCHEMA: Final = "hpbench.hpatch-exact-evidence.v1"
SCHEMA_FILE: Final = f"{RECORD_SCHEMA}.schema.json"
RECORDS_DIR: Final = "records"
"""The sub-directory of the exact-evidence directory the router publishes records into."""
CONSOLIDATED_NAME: Final = EXACT_EVIDENCE_JSONL
"""The consolidated file's name in an attempt's evidence."""

RECORD_NAME: Final = re.compile(r"[1-9][0-9]*-[0-9a-f]{16}\.json")
"""A published record's file name: ``<exchange>-<16 hex of sha256(call)>.json``.

Anything else in the records directory (a router's temporary file above all) is left
over from a write that never completed.
"""

SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}")

# Finding codes: one per kind of refusal, so a caller can tell them apart.
CODE_MISSING: Final = "exact_evidence.missing"
CODE_FILE: Final = "exact_evidence.file"
CODE_PERMISSIONS: Final = "exact_evidence.permissions"
CODE_LEFTOVER: Final = "exact_evidence.leftover"
CODE_ENCODING: Final = "exact_evidence.encoding"
CODE_JSON: Final = "exact_evidence.json"
CODE_SCHEMA: Final = "exact_evidence.schema"
CODE_NAME: Final = "exact_evidence.name"
CODE_LENGTH: Final = "exact_evidence.length"
CODE_DIGEST: Final = "exact_evidence.digest"
CODE_INVARIANT: Final = "exact_evidence.invariant"
CODE_DUPLICATE: Final = "exact_evidence.duplicate"
CODE_CHAIN: Final = "exact_evidence.chain"
CODE_CAPTURE: Final = "exact_evidence.capture"
CODE_UNMATCHED: Final = "exact_evidence.unmatched"
CODE_OVERWRITE: Final = "exact_evidence.overwrite"

Position = NewType("Position", int)
"""A positive integer (JSON Schema ``minimum: 1``)."""

Size = NewType("Size", int)
"""A non-negative integer (JSON Schema ``minimum: 0``)."""

Name = NewType("Name", str)
"""A non-empty string identity."""

Digest = NewType("Digest", str)
"""Lower-case hexadecimal SHA-256 (64 characters)."""


class Tool(enum.Enum):
    """The Hpatch tool the model called: the initial ``hpatch`` or a correction."""

    HPATCH = "hpatch"
    HPATCH_RECOVER = "hpatch_recover"


class Outcome(enum.Enum):
    """Whether the call's patch applied (Codex reported) or was rejected (a diagnostic)."""

    APPLIED = "applied"
    REJECTED = "rejected"


@attrs.frozen
class ExactString:
    """One exact string, with the UTF-8 length and digest a reader recomputes."""

    text: str = attrs.field(metadata=doc("The string exactly as it passed, decoded."))
    bytes: Size = attrs.field(metadata=doc("Length of `text` encoded as UTF-8."))
    sha256: Digest = attrs.field(
        metadata=doc("SHA-256 of `text` encoded as UTF-8, lower-case hex.")
    )


@attrs.frozen
class ExactEvidenceRecord:
    """One completed `hpatch` or `hpatch_recover` call, with its exact strings."""

    schema: Literal["hpbench.hpatch-exact-evidence.v1"] = attrs.field(
        metadata=doc("Always `hpbench.hpatch-exact-evidence.v1`.")
    )
    session: Name = attrs.field(metadata=doc("The root thread (the capture's `root_thread_id`)."))
    thread: Name = attrs.field(metadata=doc("The thread whose request carried the outcome back."))
    exchange: Position = attrs.field(
        metadata=doc("The capture exchange whose request carried the call's outcome back.")
    )
    call: Name = attrs.field(metadata=doc("The call's `call_id`, unique within the session."))
    chain: Name = attrs.field(
        metadata=doc("The `call_id` of the chain's initial `hpatch` call (its own for attempt 1).")
    )
    attempt: Position = attrs.field(
        metadata=doc("1 for the chain's initial call, 2 and on for its corrections.")
    )
    tool: Tool = attrs.field(metadata=doc("`hpatch` for attempt 1, `hpatch_recover` after."))
    correction: bool = attrs.field(metadata=doc("True exactly when `tool` is `hpatch_recover`."))
    model: str | None = attrs.field(metadata=doc("The model the request asked for, or null."))
    outcome: Outcome = attrs.field(metadata=doc("`applied` or `rejected`."))
    payload: ExactString = attrs.field(
        metadata=doc("The exact decoded tool input the model emitted.")
    )
    report: ExactString | None = attrs.field(
        metadata=doc("Codex's exact successful report; present exactly when applied.")
    )
    diagnostic: ExactString | None = attrs.field(
        metadata=doc("The exact rendered diagnostic the model read; present exactly when rejected.")
    )


def exact_string(text: str) -> ExactString:
    """``text`` with its UTF-8 length and SHA-256, as a writer records it."""
    data = text.encode("utf-8")
    return ExactString(text, Size(len(data)), Digest(hashlib.sha256(data).hexdigest()))


_CONVERTER = make_converter()


def record_json(record: ExactEvidenceRecord) -> dict[str, Any]:
    """The record as the JSON object it is published and consolidated as."""
    data: dict[str, Any] = _CONVERTER.unstructure(record)
    return data


def record_name(exchange: int, call: str) -> str:
    """The file name a record of ``exchange`` and ``call`` is published under."""
    return f"{exchange}-{hashlib.sha256(call.encode('utf-8')).hexdigest()[:16]}.json"


def records_dir(directory: Path | str) -> Path:
    """Where the router publishes records inside the exact-evidence ``directory``."""
    return Path(directory) / RECORDS_DIR


CONTRACT = schemagen.Contract(
    schema_file=SCHEMA_FILE,
    roots=(ExactEvidenceRecord,),
    named_types={
        Position: schemagen.NamedType({"type": "integer", "minimum": 1}, "integer ≥ 1"),
        Size: schemagen.NamedType({"type": "integer", "minimum": 0}, "integer ≥ 0"),
        Name: schemagen.NamedType({"type": "string", "minLength": 1}, "non-empty string"),
        Digest: schemagen.NamedType(
            {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "64 lower-case hex digits"
        ),
    },
    docs=schemagen.DocsTables(
        Path("docs/exact-evidence.md"),
        "<!-- exact-evidence-fields:begin (generated by `hpbench schemas --write`) -->",
        "<!-- exact-evidence-fields:end -->",
    ),
)
