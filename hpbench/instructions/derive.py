"""Derive the control and treatment base instructions from the stock text.

Control is the stock text. Treatment is the stock text with the guidance
installed as its own block right before the pinned line, and with exactly the
two pinned lines (an ``rg`` preference and an ``exec_command`` guidance line)
removed; every other stock line stays byte for byte. Both then get the same
offline-isolation rule appended. When the run turns issue reporting on, the
treatment alone then gets the issue-reporting rule (spec 004: one report after
each rejected-call recovery chain), because only the Hpatch routers offer
``report_issue``. A pin that matches no line or several lines
refuses the derivation, because a guess would silently change what is measured.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Final, Literal

import attrs

from hpbench import schemagen
from hpbench._documents import read_document, write_document
from hpbench._jsonio import write_atomic
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.instructions.pins import PinSet
from hpbench.instructions.stock import StockInstructions, sha256_text
from hpbench.rundir import INSTRUCTIONS_DIFF, INSTRUCTIONS_FILES, INSTRUCTIONS_HASHES, Arm
from hpbench.schemagen import doc

HASHES_SCHEMA: Final = "hpbench.instructions.v1"
CONTROL_NAME = INSTRUCTIONS_FILES[Arm.CONTROL]
TREATMENT_NAME = INSTRUCTIONS_FILES[Arm.HPATCH]
DIFF_NAME = INSTRUCTIONS_DIFF
HASHES_NAME = INSTRUCTIONS_HASHES


@attrs.frozen
class RetainedFile:
    """One retained instructions file's digest and size."""

    sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the file's UTF-8 text."))
    bytes: int = attrs.field(metadata=doc("Size in bytes."))


@attrs.frozen
class InstructionsHashes:
    """``hashes.json``: what both arms' instructions were derived from, and their digests."""

    schema: Literal["hpbench.instructions.v1"] = attrs.field(
        metadata=doc("Always `hpbench.instructions.v1`.")
    )
    codex_version: str = attrs.field(metadata=doc("The Codex CLI the stock text came from."))
    model: str = attrs.field(metadata=doc("The model the stock text came from."))
    stock_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the stock text."))
    pins_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the pins file."))
    guidance_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the installed guidance."))
    isolation_rule_sha256: str = attrs.field(
        metadata=doc("Hex SHA-256 of the offline-isolation rule both arms get.")
    )
    files: dict[str, RetainedFile] = attrs.field(
        metadata=doc("`control.md`, `treatment.md` and `treatment.diff` by name.")
    )
    issue_reporting_rule_sha256: str | None = attrs.field(
        default=None,
        metadata=doc(
            "Hex SHA-256 of the issue-reporting rule the treatment got; null when the run "
            "has issue reporting off."
        ),
    )


CONTRACT = schemagen.Contract(
    schema_file=f"{HASHES_SCHEMA}.schema.json", roots=(InstructionsHashes,)
)


@attrs.frozen
class DerivedInstructions:
    """Both arms' texts and the unified diff from control to treatment."""

    control: str
    treatment: str
    diff: str
    stock: StockInstructions
    report_issue: bool = False


def _line_index(
    lines: list[str], pin: str, field: str, source: str
) -> tuple[int | None, Finding | None]:
    matches = [index for index, line in enumerate(lines) if line.rstrip("\n") == pin]
    if len(matches) == 1:
        return matches[0], None
    shown = pin if len(pin) <= 120 else pin[:117] + "..."
    return None, Finding(
        "instructions.pin",
        f"must match exactly one stock line, matched {len(matches)}: {shown!r}",
        source,
        field,
    )


def _with_rule(text: str, rule: str) -> str:
    """``text`` with the isolation rule appended as its own paragraph, newline-terminated."""
    return text.rstrip("\n") + "\n\n" + rule.strip("\n") + "\n"


def derive(
    stock: StockInstructions, pin_set: PinSet, *, report_issue: bool = False
) -> DerivedInstructions:
    """Derive both arms' instructions; ``report_issue``: the run has issue reporting on.

    Raises:
        ContractError: the stock text is for another CLI version or model than
            the pins, or a pin does not match exactly one line.
    """
    pins = pin_set.pins
    source = str(pin_set.path)
    findings: list[Finding] = []
    if (stock.codex_version, stock.model) != (pins.codex_version, pins.model):
        findings.append(
            Finding(
                "instructions.version",
                f"pins are for Codex {pins.codex_version} / {pins.model}, the stock text was "
                f"captured from Codex {stock.codex_version} / {stock.model}",
                source,
                "$.codex_version",
            )
        )
        raise ContractError("stale pins: refusing to derive", findings)
    lines = stock.text.splitlines(keepends=True)
    anchor, problem = _line_index(lines, pins.install_before_line, "$.install_before_line", source)
    rg, rg_problem = _line_index(
        lines, pins.remove_rg_preference_line, "$.remove_rg_preference_line", source
    )
    exec_line, exec_problem = _line_index(
        lines, pins.remove_exec_command_line, "$.remove_exec_command_line", source
    )
    findings += [p for p in (problem, rg_problem, exec_problem) if p is not None]
    if findings or anchor is None or rg is None or exec_line is None:
        raise ContractError("the pins do not fit the stock text: refusing to derive", findings)
    if len({anchor, rg, exec_line}) != 3:
        finding = Finding("instructions.pin", "two pins name the same stock line", source, "$")
        raise ContractError("the pins do not fit the stock text: refusing to derive", [finding])

    guidance = pin_set.guidance_text.strip("\n") + "\n\n"
    treatment_lines: list[str] = []
    for index, line in enumerate(lines):
        if index == anchor:
            treatment_lines.extend(guidance.splitlines(keepends=True))
        if index not in (rg, exec_line):
            treatment_lines.append(line)
    control = _with_rule(stock.text, pin_set.isolation_rule_text)
    treatment = _with_rule("".join(treatment_lines), pin_set.isolation_rule_text)
    if report_issue:
        treatment = _with_rule(treatment, pin_set.issue_reporting_rule_text)
    diff = "".join(
        difflib.unified_diff(
            control.splitlines(keepends=True),
            treatment.splitlines(keepends=True),
            fromfile=f"instructions/{CONTROL_NAME}",
            tofile=f"instructions/{TREATMENT_NAME}",
        )
    )
    return DerivedInstructions(control, treatment, diff, stock, report_issue)


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_instructions(
    derived: DerivedInstructions, pin_set: PinSet, directory: Path
) -> InstructionsHashes:
    """Retain ``control.md``, ``treatment.md``, ``treatment.diff`` and ``hashes.json``.

    Returns the hashes document, which each attempt result references.
    """
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    texts = (
        (CONTROL_NAME, derived.control),
        (TREATMENT_NAME, derived.treatment),
        (DIFF_NAME, derived.diff),
    )
    for name, text in texts:
        write_atomic(directory / name, text)
    hashes = InstructionsHashes(
        schema=HASHES_SCHEMA,
        codex_version=derived.stock.codex_version,
        model=derived.stock.model,
        stock_sha256=derived.stock.sha256,
        pins_sha256=_sha256_file(pin_set.path),
        guidance_sha256=sha256_text(pin_set.guidance_text),
        isolation_rule_sha256=sha256_text(pin_set.isolation_rule_text),
        issue_reporting_rule_sha256=(
            sha256_text(pin_set.issue_reporting_rule_text) if derived.report_issue else None
        ),
        files={
            name: RetainedFile(sha256=sha256_text(text), bytes=len(text.encode("utf-8")))
            for name, text in texts
        },
    )
    write_document(directory / HASHES_NAME, hashes)
    return hashes


def read_hashes(path: Path) -> InstructionsHashes:
    """A retained ``hashes.json``, read through its model.

    Raises:
        ContractError: unreadable, not JSON, or not the contract (each field named).
    """
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        finding = Finding("instructions.hashes", f"cannot read: {exc}", source)
        raise ContractError(f"{source}: no instructions hashes", [finding]) from None
    return read_document(data, InstructionsHashes, source=source, code="instructions.hashes")


def delivered_matches(sent: str, instructions_file: Path) -> bool:
    """Whether what Codex sent is the instructions file, verbatim.

    Codex strips the file's trailing newline before sending it; nothing else
    may differ.
    """
    text = instructions_file.read_text(encoding="utf-8")
    return sent == text.removesuffix("\n")


def delivered_digest(instructions_file: Path) -> str:
    """SHA-256 of what Codex sends for ``instructions_file``: its text minus a trailing newline."""
    return sha256_text(instructions_file.read_text(encoding="utf-8").removesuffix("\n"))
