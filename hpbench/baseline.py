"""A published baseline: one passing control attempt, exported for hpatch-only to import.

hpatch-only runs one fresh treatment attempt against a control that already ran (spec
002, spec 004). The control comes from a baseline file that ``hpbench baseline export
RUN_DIR`` writes from a completed paired or control-only run (``hpbench.baseline.v2``):
the control's attempt object, the content it ran against (task id and fingerprint, the
stock base instructions' hash, the Codex version, model and effort), whether it was an
offline demo, and its router's metrics snapshot as captured, with the capture contract
version it was written under.

An import must match the importing run on every one of those, and the control must
have passed; each mismatch, and each piece of missing content evidence, refuses the
import and names the field (:func:`import_problems`). Metrics written under another
capture contract version are correctness context only: :func:`current_metrics` never
returns them, so they cannot be combined with a fresh capture or shown as current.
An offline demo's baseline is never imported into a real run, nor a real one into a
demo: test equipment never stands in for what is measured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from hpbench import schemagen
from hpbench._documents import document_json, read_document
from hpbench._jsonio import readable_json
from hpbench.capture import validate_capture
from hpbench.capture.children import ModelExpectation
from hpbench.capture.models import RECORD_SCHEMA_VERSION, SNAPSHOT_SCHEMA, MetricsSnapshot
from hpbench.capture.validator import snapshot_from_json
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.instructions.derive import read_hashes
from hpbench.plan import RunPlan, load_plan
from hpbench.results.merge import load_attempts
from hpbench.results.model import Attempt
from hpbench.rundir import (
    CAPTURE_DIR,
    CODEX_JSONL,
    INSTRUCTIONS_HASHES,
    METRICS_JSON,
    Arm,
    RunLayout,
)
from hpbench.schemagen import doc

BASELINE_SCHEMA: Final = "hpbench.baseline.v2"
SCHEMA_FILE: Final = f"{BASELINE_SCHEMA}.schema.json"
CODE: Final = "baseline"
EXPORTING_MODES: Final = ("paired", "control-only")


@attrs.frozen
class Baseline:
    """One passing control attempt and what it ran against (``hpbench.baseline.v2``)."""

    schema: Literal["hpbench.baseline.v2"] = attrs.field(
        metadata=doc("Always `hpbench.baseline.v2`.")
    )
    source_run_id: str = attrs.field(metadata=doc("The run the control comes from."))
    source_mode: str = attrs.field(metadata=doc("That run's mode (`paired`, `control-only`)."))
    offline_demo: bool = attrs.field(
        metadata=doc("Whether that run was an offline demo (never imported into a real run).")
    )
    task_id: str = attrs.field(metadata=doc("The task's id."))
    task_fingerprint: str | None = attrs.field(
        metadata=doc("The task's content fingerprint; null refuses every import.")
    )
    stock_instructions_sha256: str | None = attrs.field(
        metadata=doc("SHA-256 of the stock base instructions; null refuses every import.")
    )
    codex_version: str = attrs.field(metadata=doc("The pinned Codex CLI version it ran."))
    model: str = attrs.field(metadata=doc("The model."))
    effort: str = attrs.field(metadata=doc("The reasoning effort."))
    control: Attempt = attrs.field(metadata=doc("The control's attempt object, as it was."))
    record_schema_version: int = attrs.field(
        metadata=doc("The capture record schema its metrics were written under.")
    )
    snapshot_schema: str = attrs.field(metadata=doc("The metrics snapshot's schema."))
    metrics: dict[str, Any] = attrs.field(
        metadata=doc("The control router's validated metrics snapshot, as captured.")
    )


@attrs.frozen
class ImportTarget:
    """What the importing run ran against: the baseline must match every field."""

    offline_demo: bool
    task_id: str
    task_fingerprint: str | None
    stock_instructions_sha256: str | None
    codex_version: str
    model: str
    effort: str


CONTRACT = schemagen.Contract(schema_file=SCHEMA_FILE, roots=(Baseline,))


def _refuse(message: str, field: str, source: str) -> ContractError:
    return ContractError(message, [Finding(CODE, message, file=source, field=field)])


def _control_attempt(layout: RunLayout, repetition: int | None) -> Attempt:
    source = str(layout.root)
    # The run's attempt objects as the merge reads them: one unreadable, off-contract or
    # duplicated object refuses the export rather than being passed over.
    attempts = [a for a in load_attempts(layout.root) if a.arm == Arm.CONTROL.value]
    if repetition is not None:
        chosen = [a for a in attempts if a.repetition == repetition]
        if not chosen:
            msg = f"the run has no control attempt in repetition {repetition}"
            raise _refuse(msg, "$.control.repetition", source)
        if not chosen[0].passed:
            msg = f"the control attempt of repetition {repetition} did not pass"
            raise _refuse(msg, "$.control.passed", source)
        return chosen[0]
    passing = sorted((a for a in attempts if a.passed), key=lambda a: a.repetition)
    if not passing:
        raise _refuse("the run has no passing control attempt", "$.control.passed", source)
    return passing[0]


def export_baseline(run_dir: Path, repetition: int | None = None) -> Baseline:
    """The baseline of ``run_dir``'s passing control (the first, or ``repetition``'s).

    Raises:
        ContractError: a run that is not paired or control-only, no passing control, or
            a control capture that does not validate, each naming what is wrong.
    """
    layout = RunLayout(run_dir)
    plan = load_plan(run_dir)
    source = str(run_dir)
    if plan.mode not in EXPORTING_MODES:
        msg = f"a {plan.mode} run has no fresh control to publish"
        raise _refuse(msg, "$.source_mode", source)
    control = _control_attempt(layout, repetition)
    router = layout.router(control.repetition, Arm.CONTROL.value)
    report = validate_capture(
        router / CAPTURE_DIR,
        router / METRICS_JSON,
        arm=Arm.CONTROL.value,
        codex_jsonl=[layout.attempt(control.repetition, Arm.CONTROL.value) / CODEX_JSONL],
        models=ModelExpectation(parent=plan.model, child=frozenset({plan.model})),
    )
    if not report.ok or report.snapshot is None:
        raise ContractError(
            f"{router}: the control's capture does not validate; it is no baseline",
            list(report.findings),
        )
    hashes = read_hashes(layout.instructions_dir / INSTRUCTIONS_HASHES)
    return Baseline(
        schema=BASELINE_SCHEMA,
        source_run_id=plan.run_id,
        source_mode=plan.mode,
        offline_demo=plan.offline_demo,
        task_id=plan.task,
        task_fingerprint=plan.fingerprint,
        stock_instructions_sha256=hashes.stock_sha256,
        codex_version=plan.codex_version,
        model=plan.model,
        effort=plan.effort,
        control=control,
        record_schema_version=RECORD_SCHEMA_VERSION,
        snapshot_schema=SNAPSHOT_SCHEMA,
        metrics=json.loads((router / METRICS_JSON).read_text(encoding="utf-8")),
    )


def import_target(run_dir: Path, plan: RunPlan | None = None) -> ImportTarget:
    """What the run in ``run_dir`` runs against (its plan, read here unless the caller
    already holds it, and its derived instructions)."""
    plan = plan or load_plan(run_dir)
    hashes_path = RunLayout(run_dir).instructions_dir / INSTRUCTIONS_HASHES
    stock = read_hashes(hashes_path).stock_sha256 if hashes_path.is_file() else None
    return ImportTarget(
        offline_demo=plan.offline_demo,
        task_id=plan.task,
        task_fingerprint=plan.fingerprint,
        stock_instructions_sha256=stock,
        codex_version=plan.codex_version,
        model=plan.model,
        effort=plan.effort,
    )


_MATCHED: Final = (
    "task_id",
    "task_fingerprint",
    "stock_instructions_sha256",
    "codex_version",
    "model",
    "effort",
)
# The control's own object must say what the baseline says it ran.
_CONTROL_AGREES: Final = (("task_id", "task_id"), ("task_fingerprint", "task_fingerprint"))


def import_problems(baseline: Baseline, target: ImportTarget, *, source: str) -> list[Finding]:
    """Why ``baseline`` cannot be imported into the run ``target`` describes; empty when it can."""
    problems: list[Finding] = []

    def add(field: str, message: str) -> None:
        problems.append(Finding(CODE, message, file=source, field=field))

    if baseline.offline_demo != target.offline_demo:
        kind = "an offline demo" if baseline.offline_demo else "a real run"
        add("$.offline_demo", f"the baseline is {kind}'s; the importing run is not")
    for name in _MATCHED:
        mine, theirs = getattr(baseline, name), getattr(target, name)
        if mine is None or theirs is None:
            whose = "the baseline" if mine is None else "the importing run"
            add(f"$.{name}", f"{whose} has no {name}: missing content evidence refuses import")
        elif mine != theirs:
            add(f"$.{name}", f"the baseline has {mine!r}; the importing run has {theirs!r}")
    control = baseline.control
    if control.arm != Arm.CONTROL.value:
        add("$.control.arm", f"the imported attempt is a {control.arm} attempt, not a control")
    if not control.passed:
        add("$.control.passed", "the imported control did not pass")
    for own, theirs in (*_CONTROL_AGREES, ("model", "model"), ("effort", "effort")):
        if getattr(control, own) != getattr(baseline, theirs):
            add(f"$.control.{own}", f"the control's {own} is not the baseline's")
    try:
        current_metrics(baseline, source=source)
    except ContractError as exc:
        add("$.metrics", f"the metrics claim the current capture contract but break it: {exc}")
    return problems


def current_metrics(baseline: Baseline, *, source: str) -> MetricsSnapshot | None:
    """The baseline's metrics when they are of the current capture contract; None when they
    are correctness context only (written under another contract version).

    Raises:
        ContractError: metrics that claim the current contract but do not satisfy it.
    """
    current = (RECORD_SCHEMA_VERSION, SNAPSHOT_SCHEMA)
    if (baseline.record_schema_version, baseline.snapshot_schema) != current:
        return None
    return snapshot_from_json(baseline.metrics, source=f"{source} $.metrics")


def write_baseline(baseline: Baseline, path: Path) -> None:
    """Write the baseline file (refusing to replace one: a published baseline is evidence)."""
    try:
        with path.open("x", encoding="utf-8") as stream:
            stream.write(readable_json(document_json(baseline)))
    except FileExistsError as exc:
        raise _refuse("refusing to replace an existing baseline file", "$", str(path)) from exc


def read_baseline(path: Path) -> Baseline:
    """A baseline file read strictly; every wrong field is named."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise _refuse(f"not JSON: {exc}", "$", str(path)) from exc
    return read_document(data, Baseline, source=str(path), code=CODE)
