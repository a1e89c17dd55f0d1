"""Merge every attempt object of a run into ``results.jsonl``, deterministically.

Order is (repetition, pair order, arm), whatever order the attempts finished
in, and each line is canonical JSON, so a merge of the same evidence is
byte-identical.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpbench._jsonio import canonical_json, write_atomic
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.results.attempt import ATTEMPT_SCHEMA, RESULT_NAME
from hpbench.rundir import RunLayout

RESULTS_NAME = RunLayout(Path()).results.name


def load_attempts(run_dir: Path) -> list[dict[str, Any]]:
    """Every ``attempts/*/result.json`` of a run, in merge order.

    Raises:
        ContractError: unreadable objects, a wrong schema, or two attempts
            claiming the same (repetition, arm).
    """
    findings: list[Finding] = []
    attempts: list[dict[str, Any]] = []
    seen: dict[tuple[int, str], str] = {}
    for path in sorted(RunLayout(run_dir).attempts.glob(f"*/{RESULT_NAME}")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            findings.append(Finding("results.unreadable", str(exc), str(path)))
            continue
        if not isinstance(document, dict) or document.get("schema") != ATTEMPT_SCHEMA:
            findings.append(
                Finding(
                    "results.schema", f"expected schema {ATTEMPT_SCHEMA}", str(path), "$.schema"
                )
            )
            continue
        key = (int(document["repetition"]), str(document["arm"]))
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
        attempts.append(document)
    if findings:
        raise ContractError(f"{run_dir}: attempt results cannot be merged", findings)
    attempts.sort(key=lambda a: (a["repetition"], a["pair_order"], a["arm"]))
    return attempts


def merge_results(run_dir: Path) -> list[dict[str, Any]]:
    """Write ``results.jsonl`` from the run's attempt objects and return them."""
    attempts = load_attempts(run_dir)
    write_atomic(RunLayout(run_dir).results, "".join(canonical_json(a) + "\n" for a in attempts))
    return attempts
