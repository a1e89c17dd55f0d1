"""Statistics pooled over the tasks of a suite that reported.

- **Pass rate** per arm: the compared attempts of every task summed (each attempt weighs
  the same, so a task with more repetitions weighs more), with a Wilson interval, and the
  signed difference treatment minus baseline.
- **McNemar, stratified by task**: the pair is the matched unit, so the pooled test is the
  exact McNemar test on the sums of the tasks' discordant counts
  (:func:`hpbench.stats.mcnemar_stratified`); each task's stratum is kept beside it.
- **Tokens**: never summed or averaged across tasks, whose sizes differ (one large task
  would be the whole sum). The one cross-task figure is the median of the per-task
  relative deltas (each task's summed delta over its own baseline total), labelled as
  such, and null unless every compared task has it.

Tasks without a report are left out of every pooled figure and named. A latency-only task
makes no correctness claim (its pass says only that the attempt ran within its bounds), so
it is left out of the pass rates and McNemar, named, and kept in the token median.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from hpbench.report.correctness import MIN_PAIRS_FOR_TEST
from hpbench.report.figures import TOKEN_FIGURES
from hpbench.stats import McNemarStratum, mcnemar_stratified, wilson_interval
from hpbench.suite.document import (
    CrossTaskTokens,
    Pooled,
    PooledArm,
    PooledMcNemar,
    Stratum,
    TaskFigures,
    TaskRow,
)
from hpbench.task.manifest import OracleTier


def _arm(figures: Sequence[TaskFigures], arm: str) -> PooledArm:
    compared = sum(f.arms[arm].compared for f in figures)
    passed = sum(f.arms[arm].compared_passed for f in figures)
    return PooledArm(compared=compared, passed=passed, pass_rate=wilson_interval(passed, compared))


def _rate_delta(arms: dict[str, PooledArm], names: Sequence[str]) -> float | None:
    if len(names) != 2:
        return None
    baseline, treatment = (arms[name].pass_rate for name in names)
    if baseline is None or treatment is None:
        return None
    return treatment.rate - baseline.rate


def _strata(reported: Sequence[TaskRow]) -> tuple[Stratum, ...]:
    strata = []
    for row in reported:
        figures = row.figures
        if figures is None or figures.discordance is None:
            continue
        found = figures.discordance
        strata.append(Stratum(row.task, found.pairs, found.baseline_only, found.treatment_only))
    return tuple(strata)


def _mcnemar(strata: Sequence[Stratum]) -> PooledMcNemar:
    test = mcnemar_stratified(
        [McNemarStratum(s.pairs, s.baseline_only, s.treatment_only) for s in strata]
    )
    return PooledMcNemar(
        pairs=test.pairs,
        baseline_only=test.control_only,
        treatment_only=test.treatment_only,
        discordant=test.discordant,
        p_value=test.p_value,
        min_p_value=test.min_p_value,
    )


def _cross_task(figures: Sequence[TaskFigures], label: str) -> CrossTaskTokens:
    relatives = [
        f.tokens[label].relative
        for f in figures
        if f.tokens is not None and f.tokens[label].relative is not None
    ]
    known = [value for value in relatives if value is not None]
    complete = bool(figures) and len(known) == len(figures)
    return CrossTaskTokens(
        median_relative=median(known) if complete else None,
        reported=len(known),
        tasks=len(figures),
    )


def pool(rows: Sequence[TaskRow], arms: Sequence[str]) -> Pooled:
    """The pooled statistics of the rows that have a report."""
    with_report = [row for row in rows if row.figures is not None]
    every_figure = [row.figures for row in with_report if row.figures is not None]
    # A latency-only task's pass is no correctness claim (spec 000): it pools no pass rate.
    no_claim = OracleTier.LATENCY_ONLY.value
    reported = [row for row in with_report if row.figures and row.figures.oracle_tier != no_claim]
    figures = [row.figures for row in reported if row.figures is not None]
    pooled_arms = {arm: _arm(figures, arm) for arm in arms}
    compared_pairs = sum(f.compared_pairs for f in figures)
    strata = _strata(reported) if len(arms) == 2 else ()
    why: str | None = None
    if len(arms) != 2:
        why = "one arm: there is nothing to compare"
    elif compared_pairs < MIN_PAIRS_FOR_TEST:
        why = (
            f"{compared_pairs} compared pair(s) over the tasks: McNemar needs at least "
            f"{MIN_PAIRS_FOR_TEST}"
        )
    return Pooled(
        tasks=tuple(row.task for row in reported),
        left_out=tuple(row.task for row in rows if row.figures is None),
        no_claim=tuple(row.task for row in with_report if row not in reported),
        compared_pairs=compared_pairs,
        arms=pooled_arms,
        pass_rate_delta=_rate_delta(pooled_arms, arms),
        strata=strata,
        mcnemar=_mcnemar(strata) if why is None else None,
        why=why,
        tokens=(
            {label: _cross_task(every_figure, label) for label in TOKEN_FIGURES}
            if len(arms) == 2
            else None
        ),
    )
