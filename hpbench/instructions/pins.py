"""The derivation pins: ``contrib/codex/pins.toml``.

Pins bind the treatment's derivation to one Codex CLI version and one model,
whose stock text they were written against: a different version or model has a
different stock text, and reusing pins (or a captured stock text) across them
is refused.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import attrs

from hpbench._convert import make_converter, structure
from hpbench.errors import ContractError
from hpbench.findings import Finding

SCHEMA_VERSION = 1
PINS_NAME = "pins.toml"


@attrs.frozen
class Pins:
    """Where the guidance goes and which two stock lines the treatment drops."""

    schema_version: int
    codex_version: str
    model: str
    guidance: str
    isolation_rule: str
    # Appended to the treatment's text only when the run turns issue reporting on.
    issue_reporting_rule: str
    install_before_line: str
    remove_rg_preference_line: str
    remove_exec_command_line: str


@attrs.frozen
class PinSet:
    """Loaded pins with the texts they name."""

    pins: Pins
    path: Path
    guidance_text: str
    isolation_rule_text: str
    issue_reporting_rule_text: str


def default_pins_path() -> Path:
    """``contrib/codex/pins.toml`` of the source checkout."""
    return Path(__file__).resolve().parents[2] / "contrib" / "codex" / PINS_NAME


def load_pins(path: Path) -> PinSet:
    """Load pins and the guidance and rule files beside them.

    Raises:
        ContractError: unreadable TOML, unknown or missing keys, wrong types,
            a missing guidance or rule file, or an empty pin.
    """
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        finding = Finding("pins.unreadable", str(exc), source)
        raise ContractError(f"{source}: cannot read the pins", [finding]) from None
    pins = structure(make_converter(), data, Pins, source=source, code="pins.schema")
    findings: list[Finding] = []
    if pins.schema_version != SCHEMA_VERSION:
        findings.append(
            Finding(
                "pins.schema_version",
                f"expected {SCHEMA_VERSION}, got {pins.schema_version}",
                source,
                "$.schema_version",
            )
        )
    for name in ("install_before_line", "remove_rg_preference_line", "remove_exec_command_line"):
        value: str = getattr(pins, name)
        if not value.strip() or "\n" in value:
            findings.append(Finding("pins.line", "must be one non-empty line", source, f"$.{name}"))
    texts: dict[str, str] = {}
    for name in ("guidance", "isolation_rule", "issue_reporting_rule"):
        file = path.parent / getattr(pins, name)
        try:
            texts[name] = file.read_text(encoding="utf-8")
        except OSError:
            findings.append(Finding("pins.file", f"cannot read {file}", source, f"$.{name}"))
    if findings:
        raise ContractError(f"{source}: invalid pins", findings)
    return PinSet(
        pins, path, texts["guidance"], texts["isolation_rule"], texts["issue_reporting_rule"]
    )
