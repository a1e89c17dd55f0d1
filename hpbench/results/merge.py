"""Merge every attempt object of a run into ``results.jsonl``, deterministically.

Each ``result.json`` is read through the attempt model (strict: an unknown key, a
missing field or a wrong type is refused, naming the field). Order is (repetition,
pair order, arm), whatever order the attempts finished in, and each line is canonical
JSON, so a merge of the same evidence is byte-identical.
"""

from __future__ import annotations

import json
from pathlib import Path

from hpbench._jsonio import canonical_json, write_atomic
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.results.attempt import ATTEMPT_SCHEMA, RESULT_NAME
from hpbench.results.model import Attempt, attempt_from_json, attempt_to_json
from hpbench.rundir import RunLayout

RESULTS_NAME = RunLayout(Path()).results.name


def _read_attempt(path: Path) -> tuple[Attempt | None, list[Finding]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, [Finding("results.unreadable", str(exc), str(path))]
    # A document of another schema is named as such, not as a list of field mismatches.
    if not isinstance(document, dict) or document.get("schema") != ATTEMPT_SCHEMA:
        message = f"expected schema {ATTEMPT_SCHEMA}"
        return None, [Finding("results.schema", message, str(path), "$.schema")]
    try:
        return attempt_from_json(document, source=str(path)), []
    except ContractError as exc:
        return None, list(exc.findings)


def load_attempts(run_dir: Path) -> list[Attempt]:
    """Every ``attempts/*/result.json`` of a run, in merge order.

    Raises:
        ContractError: unreadable objects, a wrong schema, a field the contract does not
            have or of the wrong type, or two attempts claiming the same (repetition, arm).
    """
    findings: list[Finding] = []
    attempts: list[Attempt] = []
    seen: dict[tuple[int, str], str] = {}
    for path in sorted(RunLayout(run_dir).attempts.glob(f"*/{RESULT_NAME}")):
        attempt, problems = _read_attempt(path)
        findings += problems
        if attempt is None:
            continue
        key = (attempt.repetition, attempt.arm)
        if key in seen:
            findings.append(
                Finding(
                    "results.duplicate",
                    f"repetition {key[0]} arm {key[1]} also in {seen[key]}",
                    str(path),
                )
            )
            continue
        seen[key] = str(path)
        attempts.append(attempt)
    if findings:
        raise ContractError(f"{run_dir}: attempt results cannot be merged", findings)
    attempts.sort(key=lambda a: (a.repetition, a.pair_order, a.arm))
    return attempts


def merge_results(run_dir: Path) -> list[Attempt]:
    """Write ``results.jsonl`` from the run's attempt objects and return them."""
    attempts = load_attempts(run_dir)
    lines = "".join(canonical_json(attempt_to_json(a)) + "\n" for a in attempts)
    write_atomic(RunLayout(run_dir).results, lines)
    return attempts
