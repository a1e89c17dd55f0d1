"""hpatch-only's imported control: the published baseline a run compares against.

An hpatch-only run (spec 002, spec 004) runs one fresh treatment attempt; its control is
imported from the baseline its ``"baseline"`` setting names (run.json): a baseline file
(``hpbench baseline export``) or a finished paired or control-only run directory, which
is exported on the spot by the same rules. ``hpbench baseline import RUN_DIR`` runs once
the run's instructions exist (the stock hash is part of the match), refuses a baseline
that does not match the run on every field :func:`hpbench.baseline.import_problems`
checks, and keeps the accepted baseline, as it was, in ``imported/baseline.json``.

The imported control is never a new attempt: it has no directory under ``attempts/``, no
line in ``results.jsonl`` and no router directory. The report reads it from here,
labelled with its source, and shows its metrics only when they are of the current capture
contract (otherwise they are correctness context only).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from hpbench._documents import write_document
from hpbench.baseline import (
    Baseline,
    current_metrics,
    export_baseline,
    import_problems,
    import_target,
    read_baseline,
)
from hpbench.capture.models import MetricsSnapshot
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.modes import mode_of
from hpbench.plan import RunPlan, load_plan
from hpbench.results.model import Attempt
from hpbench.rundir import RunLayout

CODE = "baseline.import"


@attrs.frozen
class Imported:
    """The control a run imported, and where it came from."""

    baseline: Baseline
    # The control as the run's comparison places it: the imported attempt in the run's
    # one repetition, after the fresh attempt (its own identity stays in ``baseline``).
    control: Attempt
    # Its metrics when they are of the current capture contract; None: context only.
    metrics: MetricsSnapshot | None

    @property
    def label(self) -> str:
        """How the report and the summary name the source."""
        source = self.baseline
        return (
            f"imported from run {source.source_run_id} ({source.source_mode}), repetition "
            f"{source.control.repetition}"
        )


def _source_baseline(path: Path) -> Baseline:
    """The baseline a BASELINE setting names: a file, or a run directory to export."""
    if path.is_dir():
        return export_baseline(path)
    return read_baseline(path)


def _check(baseline: Baseline, run_dir: Path, plan: RunPlan, source: str, what: str) -> None:
    """Refuse ``baseline`` for the run, naming every field that does not match."""
    problems = import_problems(baseline, import_target(run_dir, plan), source=source)
    if problems:
        raise ContractError(f"{source}: {what}", problems)


def import_into(run_dir: Path) -> Baseline:
    """Check the run's baseline against the run and keep it in ``imported/baseline.json``.

    Raises:
        ContractError: a run that imports nothing, or a baseline that cannot be imported,
            each finding naming its field.
    """
    plan = load_plan(run_dir)
    mode = mode_of(plan.mode)
    source = plan.baseline
    if mode.imported is None or not source:
        message = f"a {plan.mode} run imports no control"
        raise ContractError(message, [Finding(CODE, message, field="$.baseline")])
    baseline = _source_baseline(Path(source))
    _check(baseline, run_dir, plan, source, "the baseline cannot be imported into this run")
    path = RunLayout(run_dir).imported_baseline
    path.parent.mkdir(mode=0o700, exist_ok=True)
    write_document(path, baseline)
    return baseline


def load_imported(run_dir: Path, plan: RunPlan | None = None) -> Imported | None:
    """The run's imported control, or None when its mode imports none (``plan``: the run's,
    when the caller already read it).

    Raises:
        ContractError: an importing run without its imported baseline, or one that no
            longer matches the run (it is checked again: the file is evidence, not trust).
    """
    plan = plan or load_plan(run_dir)
    mode = mode_of(plan.mode)
    if mode.imported is None:
        return None
    path = RunLayout(run_dir).imported_baseline
    if not path.is_file():
        message = "no imported control: the run stopped before its baseline was imported"
        raise ContractError(message, [Finding(CODE, message, file=str(path))])
    baseline = read_baseline(path)
    _check(baseline, run_dir, plan, str(path), "the imported baseline does not match the run")
    control = attrs.evolve(baseline.control, repetition=1, pair_order=len(mode.fresh) + 1)
    return Imported(baseline, control, current_metrics(baseline, source=str(path)))
