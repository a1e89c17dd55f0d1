"""The suite document's contract (``suite.json``, ``hpbench.suite.v1``): one attrs model.

A suite runs several tasks one after another in one mode, each task as an ordinary run in
``tasks/<id>/`` with its own report.json. :func:`hpbench.suite.finish.build_suite` reads
those reports and writes this document: one row per task (a task whose run left no report
is a row that says so and why, never zeros) and the statistics pooled over the tasks that
reported. Maps keyed by an arm (``control``, ``hpatch``) or a figure label are JSON
objects; docs/suites.md says what each figure covers. The JSON Schema in
``contrib/schemas/`` is generated from these classes (``hpbench schemas --write``).
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

from hpbench import schemagen
from hpbench.schemagen import doc
from hpbench.stats import RateInterval

SUITE_SCHEMA: Final = "hpbench.suite.v1"
SCHEMA_FILE: Final = f"{SUITE_SCHEMA}.schema.json"

# Whether a task's token figure has an interval, as its report says; ``no-bootstrap`` when
# its report drew none (one arm, or fewer compared pairs than McNemar needs).
IntervalStatus = Literal["interval", "too-few-pairs", "unavailable", "no-bootstrap"]


@attrs.frozen
class ArmTally:
    """One arm of one task, as its report counts it."""

    attempts: int = attrs.field(metadata=doc("Attempts with a result."))
    passed: int = attrs.field(metadata=doc("Attempts that passed."))
    infrastructure: int = attrs.field(metadata=doc("Attempts failed by the harness."))
    compared: int = attrs.field(
        metadata=doc("Its attempts in compared (non-voided) pairs: the pass rate's trials.")
    )
    compared_passed: int = attrs.field(metadata=doc("Of those, the attempts that passed."))


@attrs.frozen
class Discordance:
    """A task's compared pairs and those whose arms disagree (the McNemar stratum)."""

    pairs: int = attrs.field(metadata=doc("Compared pairs."))
    baseline_only: int = attrs.field(metadata=doc("Pairs where only the baseline arm passed."))
    treatment_only: int = attrs.field(metadata=doc("Pairs where only the treatment arm passed."))


@attrs.frozen
class TaskMcNemar:
    """The exact McNemar test of one task, as its report computed it."""

    p_value: float | None = attrs.field(
        metadata=doc("Two-sided exact p-value; null when the report has no test.")
    )
    min_p_value: float | None = attrs.field(
        metadata=doc("The smallest p this task's pairs could give; null without a test.")
    )
    why: str | None = attrs.field(metadata=doc("Why there is no test; null when there is one."))


@attrs.frozen
class TokenFigure:
    """One token figure of one task over its compared pairs, as its report computed it."""

    baseline: int | None = attrs.field(
        metadata=doc("The baseline arm's total; null unless every attempt reported it.")
    )
    treatment: int | None = attrs.field(metadata=doc("The treatment arm's total; likewise."))
    delta: int | None = attrs.field(
        metadata=doc("The summed per-pair delta (treatment - baseline); null unless every pair.")
    )
    reported_pairs: int = attrs.field(metadata=doc("Pairs with a delta."))
    pairs: int = attrs.field(metadata=doc("Compared pairs."))
    relative: float | None = attrs.field(
        metadata=doc(
            "The delta over the baseline total (signed); null when either is unknown or the "
            "baseline total is 0."
        )
    )
    mean: float | None = attrs.field(
        metadata=doc("The report's mean per-pair delta; null when its report drew no bootstrap.")
    )
    low: float | None = attrs.field(metadata=doc("The report's interval, low end."))
    high: float | None = attrs.field(metadata=doc("The report's interval, high end."))
    interval: IntervalStatus = attrs.field(
        metadata=doc("Whether the report has an interval, and if not why.")
    )


@attrs.frozen
class TaskFigures:
    """What a task's report.json says, reduced to the suite's columns."""

    fingerprint: str = attrs.field(metadata=doc("The task's sha256 fingerprint."))
    oracle_tier: str | None = attrs.field(
        metadata=doc(
            "Its attempts' oracle tier (`correctness`, `latency-only`: no correctness claim); "
            "null when they differ."
        )
    )
    repetitions: int = attrs.field(metadata=doc("Repetitions scheduled."))
    offline_demo: bool = attrs.field(metadata=doc("The model was the scripted provider."))
    reference_routers: bool = attrs.field(
        metadata=doc("Every router was the reference router (test equipment).")
    )
    scheduled_pairs: int = attrs.field(metadata=doc("Pairs (repetitions) in the report."))
    compared_pairs: int = attrs.field(metadata=doc("Pairs that are not voided."))
    voided_pairs: int = attrs.field(metadata=doc("Voided pairs (attrition)."))
    void_reasons: dict[str, int] = attrs.field(
        metadata=doc("Voided pairs by `<arm>: <reason>`; a pair may count under both arms.")
    )
    arms: dict[str, ArmTally] = attrs.field(metadata=doc("By arm, baseline first."))
    discordance: Discordance | None = attrs.field(metadata=doc("Null with one arm."))
    mcnemar: TaskMcNemar | None = attrs.field(metadata=doc("Null with one arm."))
    tokens: dict[str, TokenFigure] | None = attrs.field(
        metadata=doc("By figure label; null with one arm.")
    )
    outcome_ok: bool = attrs.field(
        metadata=doc("The report's verdict: every attempt passed and all evidence validated.")
    )


@attrs.frozen
class TaskRow:
    """One task of the suite: how its run ended, and its report's figures if it has one."""

    task: str = attrs.field(metadata=doc("The task id."))
    status: Literal["reported", "no report"] = attrs.field(
        metadata=doc("Whether its report.json was read.")
    )
    reason: str | None = attrs.field(
        metadata=doc("Why there is no report; null when there is one.")
    )
    exit_status: int | None = attrs.field(
        metadata=doc("Its run's exit status; null when it never started or was not recorded.")
    )
    run_directory: str = attrs.field(metadata=doc("Its run directory, relative to the suite's."))
    summary: str | None = attrs.field(
        metadata=doc("Its summary.md, relative to the suite's directory; null when absent.")
    )
    figures: TaskFigures | None = attrs.field(metadata=doc("Null without a report."))


@attrs.frozen
class PooledArm:
    """One arm's compared attempts over every task that reported."""

    compared: int = attrs.field(metadata=doc("Attempts in compared pairs, summed over tasks."))
    passed: int = attrs.field(metadata=doc("Of those, the attempts that passed."))
    pass_rate: RateInterval | None = attrs.field(
        metadata=doc("Wilson interval of the pooled rate; null without a compared attempt.")
    )


@attrs.frozen
class Stratum:
    """One task's McNemar stratum."""

    task: str = attrs.field(metadata=doc("The task id."))
    pairs: int = attrs.field(metadata=doc("Its compared pairs."))
    baseline_only: int = attrs.field(metadata=doc("Pairs where only the baseline passed."))
    treatment_only: int = attrs.field(metadata=doc("Pairs where only the treatment passed."))


@attrs.frozen
class PooledMcNemar:
    """Exact McNemar stratified by task: the sums of the strata's discordant counts."""

    pairs: int = attrs.field(metadata=doc("Compared pairs of every stratum."))
    baseline_only: int = attrs.field(metadata=doc("Summed over the strata."))
    treatment_only: int = attrs.field(metadata=doc("Summed over the strata."))
    discordant: int = attrs.field(metadata=doc("Pairs whose arms disagree, over the strata."))
    p_value: float = attrs.field(metadata=doc("Two-sided exact p-value."))
    min_p_value: float = attrs.field(metadata=doc("The smallest p these pairs could give."))


@attrs.frozen
class CrossTaskTokens:
    """The median of per-task relative deltas of one figure: each task's summed delta over
    its own baseline total. Never a sum or mean of token counts across tasks, which differ
    in size."""

    median_relative: float | None = attrs.field(
        metadata=doc("Null unless every compared task has the relative delta.")
    )
    reported: int = attrs.field(metadata=doc("Tasks with the relative delta."))
    tasks: int = attrs.field(metadata=doc("Tasks with a two-arm report."))


@attrs.frozen
class Pooled:
    """Statistics over every task that reported; the tasks without a report are named."""

    tasks: tuple[str, ...] = attrs.field(
        metadata=doc("The tasks pooled: those with a report whose tier makes a correctness claim.")
    )
    left_out: tuple[str, ...] = attrs.field(metadata=doc("Tasks without a report."))
    no_claim: tuple[str, ...] = attrs.field(
        metadata=doc(
            "Latency-only tasks: no correctness claim, so out of the pass rates and McNemar; "
            "their token figures stay in the cross-task median."
        )
    )
    compared_pairs: int = attrs.field(metadata=doc("Compared pairs, summed over the tasks."))
    arms: dict[str, PooledArm] = attrs.field(metadata=doc("By arm, baseline first."))
    pass_rate_delta: float | None = attrs.field(
        metadata=doc(
            "Treatment minus baseline pooled pass rate; null with one arm or without a "
            "compared attempt in either."
        )
    )
    strata: tuple[Stratum, ...] = attrs.field(
        metadata=doc("Each pooled task's McNemar stratum; empty with one arm.")
    )
    mcnemar: PooledMcNemar | None = attrs.field(
        metadata=doc("Null with one arm or fewer compared pairs than McNemar needs.")
    )
    why: str | None = attrs.field(metadata=doc("Why there is no test; null when there is one."))
    tokens: dict[str, CrossTaskTokens] | None = attrs.field(
        metadata=doc("By figure label; null with one arm.")
    )


@attrs.frozen
class SuiteOutcome:
    """Whether every task ran and passed with all evidence validated, and every reason not."""

    ok: bool = attrs.field(metadata=doc("Every task's run exited 0 and its report is ok."))
    reasons: tuple[str, ...] = attrs.field(metadata=doc("One line per reason."))


@attrs.frozen
class SuiteDocument:
    """``suite.json``: every task's row and the pooled statistics (``hpbench.suite.v1``)."""

    schema: Literal["hpbench.suite.v1"] = attrs.field(metadata=doc("Always `hpbench.suite.v1`."))
    mode: str = attrs.field(metadata=doc("The measuring mode every task ran in."))
    arms: tuple[str, ...] = attrs.field(metadata=doc("The compared arms, baseline first."))
    interrupted: bool = attrs.field(
        metadata=doc("An interrupt stopped the suite (tasks after it were skipped).")
    )
    offline_demo: bool | None = attrs.field(
        metadata=doc("Some task's model was the scripted provider; null when no task reported.")
    )
    reference_routers: bool | None = attrs.field(
        metadata=doc("Every reported task ran only the reference router; null when none did.")
    )
    tasks: tuple[TaskRow, ...] = attrs.field(metadata=doc("Every task, in the order it ran."))
    pooled: Pooled = attrs.field(metadata=doc("Statistics over the tasks that reported."))
    outcome: SuiteOutcome = attrs.field(metadata=doc("The verdict."))


CONTRACT = schemagen.Contract(schema_file=SCHEMA_FILE, roots=(SuiteDocument,))
