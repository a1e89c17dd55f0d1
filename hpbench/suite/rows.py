"""One row per task of a suite, from the task's own report.json.

Each task ran as an ordinary run, and its report already computed what the suite shows:
the arms' counts and Wilson pass rates over its compared pairs, its pairs and which are
voided, its McNemar test, and its token deltas with their bootstrap. A row copies those
figures (it never recomputes them differently); the only figures derived here are the
task's McNemar stratum (its compared pairs' discordant counts, which its report also holds
once it has two compared pairs, and which must then agree) and each token figure's
relative delta (the task's summed delta over its baseline total).

A task whose run left no report is a row with the reason, and no figures: never zeros.
So is a report that does not read through its contract, or that is of another task or mode.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import attrs

from hpbench._documents import read_document
from hpbench._privatefiles import loads_unique
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.modes import mode_of
from hpbench.plan import RunPlan
from hpbench.report.document import Bootstrap, Pair, ReportDocument, UsageComparison
from hpbench.report.figures import TOKEN_FIGURES
from hpbench.rundir import RunLayout, SuiteLayout
from hpbench.suite.document import (
    ArmTally,
    Discordance,
    TaskFigures,
    TaskMcNemar,
    TaskRow,
    TokenFigure,
)
from hpbench.suite.request import TaskExit

CODE = "suite.report"


def _exit_text(ended: TaskExit | None) -> str:
    if ended is None or ended.status is None:
        return "exit status not recorded"
    return f"exit {ended.status}"


def read_report(path: Path) -> ReportDocument:
    """A task's report.json through the report's contract.

    Raises:
        ContractError: not UTF-8 JSON with unique keys, or not the contract (by field).
    """
    try:
        data = loads_unique(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        finding = Finding(CODE, f"not one JSON document: {exc}", file=str(path))
        raise ContractError(f"{path}: not a report", [finding]) from None
    return read_document(data, ReportDocument, source=str(path), code=CODE)


def _plan_of(report: ReportDocument, source: str) -> RunPlan:
    """The report's ``run`` (its run.json, verbatim) through the plan's contract."""
    return read_document(report.run, RunPlan, source=f"{source} $.run", code=CODE)


def _refuse(source: str, message: str, field: str) -> ContractError:
    return ContractError(f"{source}: {message}", [Finding(CODE, message, source, field)])


def _compared_outcomes(
    pairs: tuple[Pair, ...], baseline: str, treatment: str, source: str
) -> list[tuple[bool, bool]]:
    outcomes = []
    for index, pair in enumerate(pairs):
        if pair.voided:
            continue
        first, second = pair.arms.get(baseline), pair.arms.get(treatment)
        if first is None or second is None:
            field = f"$.correctness.pairs[{index}]"
            raise _refuse(source, "a compared pair lacks an arm's outcome", field)
        outcomes.append((first.passed, second.passed))
    return outcomes


def _discordance(report: ReportDocument, arms: tuple[str, ...], source: str) -> Discordance:
    baseline, treatment = arms
    outcomes = _compared_outcomes(report.correctness.pairs, baseline, treatment, source)
    found = Discordance(
        pairs=len(outcomes),
        baseline_only=sum(1 for b, t in outcomes if b and not t),
        treatment_only=sum(1 for b, t in outcomes if t and not b),
    )
    test = report.correctness.mcnemar
    if test is not None and (test.pairs, test.control_only, test.treatment_only) != (
        found.pairs,
        found.baseline_only,
        found.treatment_only,
    ):
        raise _refuse(source, "its McNemar counts disagree with its pairs", "$.correctness.mcnemar")
    return found


def _mcnemar(report: ReportDocument) -> TaskMcNemar:
    test = report.correctness.mcnemar
    if test is not None:
        return TaskMcNemar(p_value=test.p_value, min_p_value=test.min_p_value, why=None)
    why = report.statistics.why or "its report has no McNemar test"
    return TaskMcNemar(p_value=None, min_p_value=None, why=why)


def _relative(delta: int | None, baseline: int | None) -> float | None:
    if delta is None or baseline is None or baseline == 0:
        return None
    return delta / baseline


def _token_figure(
    usage: UsageComparison, bootstrap: Bootstrap | None, arms: tuple[str, ...], label: str
) -> TokenFigure:
    baseline_arm, treatment_arm = arms
    baseline = usage.arms[baseline_arm][label]
    delta = None if usage.deltas is None else usage.deltas[label]
    reported = None if usage.deltas_reported is None else usage.deltas_reported[label]
    figure = TokenFigure(
        baseline=baseline,
        treatment=usage.arms[treatment_arm][label],
        delta=delta,
        reported_pairs=0 if reported is None else reported.reported,
        pairs=usage.population.pairs,
        relative=_relative(delta, baseline),
        mean=None,
        low=None,
        high=None,
        interval="no-bootstrap",
    )
    if bootstrap is None:
        return figure
    drawn = bootstrap.figures[label]
    return attrs.evolve(
        figure, mean=drawn.mean, low=drawn.low, high=drawn.high, interval=drawn.status
    )


def _tokens(report: ReportDocument, arms: tuple[str, ...], source: str) -> dict[str, TokenFigure]:
    usage = report.usage
    missing = [arm for arm in arms if arm not in usage.arms]
    if missing or usage.deltas is None:
        raise _refuse(source, "its usage does not compare the mode's two arms", "$.usage")
    return {label: _token_figure(usage, usage.bootstrap, arms, label) for label in TOKEN_FIGURES}


def _arm_tally(report: ReportDocument, arm: str) -> ArmTally:
    stats = report.correctness.arms[arm]
    rate = stats.pass_rate
    return ArmTally(
        attempts=stats.attempts,
        passed=stats.passed,
        infrastructure=stats.infrastructure,
        compared=0 if rate is None else rate.trials,
        compared_passed=0 if rate is None else rate.successes,
    )


def _void_reasons(pairs: tuple[Pair, ...]) -> dict[str, int]:
    reasons: Counter[str] = Counter()
    for pair in pairs:
        if pair.voided:
            reasons.update(f"{arm}: {why}" for arm, why in pair.void_reasons.items())
    return dict(sorted(reasons.items()))


def task_figures(report: ReportDocument, task: str, mode: str, source: str) -> TaskFigures:
    """The suite's columns of one task's report.

    Raises:
        ContractError: the report is of another task or mode, its arms are not the mode's,
            or its figures disagree with each other.
    """
    plan = _plan_of(report, source)
    if plan.task != task:
        raise _refuse(source, f"it is task {plan.task}'s report, not {task}'s", "$.run.task")
    if plan.mode != mode:
        raise _refuse(source, f"it is a {plan.mode} report, not {mode}", "$.run.mode")
    arms = tuple(arm.value for arm in mode_of(mode).arms)
    if tuple(report.correctness.arms) != arms:
        raise _refuse(source, f"its arms are not {', '.join(arms)}", "$.correctness.arms")
    compared = len(arms) == 2
    pairs = report.correctness.pairs
    images = {plan.control_router_image, plan.hpatch_router_image}
    return TaskFigures(
        fingerprint=plan.fingerprint,
        oracle_tier=report.correctness.oracle_tier,
        repetitions=plan.repetitions,
        offline_demo=plan.offline_demo,
        reference_routers=images == {plan.reference_router_image},
        scheduled_pairs=len(pairs),
        compared_pairs=report.correctness.compared_pairs.pairs,
        voided_pairs=sum(1 for pair in pairs if pair.voided),
        void_reasons=_void_reasons(pairs),
        arms={arm: _arm_tally(report, arm) for arm in arms},
        discordance=_discordance(report, arms, source) if compared else None,
        mcnemar=_mcnemar(report) if compared else None,
        tokens=_tokens(report, arms, source) if compared else None,
        outcome_ok=report.outcome.ok,
    )


def _first_finding(exc: ContractError) -> str:
    if not exc.findings:
        return exc.summary
    first = exc.findings[0]
    where = f" ({first.field})" if first.field else ""
    more = f"; and {len(exc.findings) - 1} more finding(s)" if len(exc.findings) > 1 else ""
    return f"{first.message}{where}{more}"


def task_row(layout: SuiteLayout, task: str, mode: str, ended: TaskExit | None) -> TaskRow:
    """One task's row: its report's figures, or why it has none."""
    run_dir = layout.task_run(task)
    run = RunLayout(run_dir)
    relative = run_dir.relative_to(layout.root).as_posix()
    summary = run.summary.relative_to(layout.root).as_posix() if run.summary.is_file() else None

    row = TaskRow(
        task=task,
        status="no report",
        reason=None,
        exit_status=None if ended is None else ended.status,
        run_directory=relative,
        summary=summary,
        figures=None,
    )

    def without(reason: str) -> TaskRow:
        return attrs.evolve(row, reason=reason)

    if ended is not None and ended.skipped:
        return without("skipped: the suite was interrupted before this task started")
    if not run_dir.is_dir():
        ended_text = _exit_text(ended)
        return without(f"no run directory: the run stopped before it was planned ({ended_text})")
    if not run.report_json.is_file():
        ended_text = _exit_text(ended)
        return without(f"no report.json: the run stopped before its report ({ended_text})")
    source = str(run.report_json)
    try:
        figures = task_figures(read_report(run.report_json), task, mode, source)
    except ContractError as exc:
        return without(f"report.json refused: {_first_finding(exc)}")
    return attrs.evolve(row, status="reported", figures=figures)
