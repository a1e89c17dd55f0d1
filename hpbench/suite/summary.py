"""The suite's summary.md: what ran, the outcome, one row per task, the pooled statistics
and the per-task token figures, rendered from the suite document.

Like each task's own summary it prints "unavailable" for what is unknown (never 0), keeps
deltas signed (treatment minus baseline), carries the offline demo's warning, and shows
no thread, session, request or call identity: text from evidence is redacted, and
counts are all it takes from the reports.
"""

from __future__ import annotations

from hpbench.report.markdown import UNAVAILABLE, number, percent, redact, signed, table
from hpbench.report.summary_usage import FIGURE_NAMES, OFFLINE_NOTE
from hpbench.suite.document import (
    PooledMcNemar,
    SuiteDocument,
    TaskFigures,
    TaskRow,
    TokenFigure,
)

# The threshold a reader most often brings (as in each task's summary): McNemar's floor is
# compared with it only to say in words when no outcome of these pairs could get there.
CONVENTIONAL_ALPHA = 0.05
NO_REPORT = "no report"


def _line(text: str | None) -> str:
    """Text from evidence on one line, whole, with every identity-shaped token redacted."""
    return redact(" ".join((text or UNAVAILABLE).split()))


def _relative(value: float | None) -> str:
    return UNAVAILABLE if value is None else f"{100 * value:+.1f} %"


def _repetitions(document: SuiteDocument) -> str:
    counts = sorted({row.figures.repetitions for row in document.tasks if row.figures})
    if not counts:
        return f"{UNAVAILABLE} (no task has a report)"
    if len(counts) == 1:
        return f"{counts[0]} per task"
    return "per task, as the table below says"


def _banner(document: SuiteDocument) -> list[str]:
    tasks = [row.task for row in document.tasks]
    lines = [f"# hpbench suite: {document.mode}, {len(tasks)} task(s)", ""]
    if document.offline_demo:
        if document.reference_routers:
            routers = (
                "the routers are the reference router: this suite measures the harness, not "
                "a model or a router."
            )
        else:
            routers = "this suite measures the harness, not a model."
        lines += ["> **Offline demo.** The model is the scripted provider and " + routers, ""]
    arms = document.arms
    if len(arms) == 2:
        arms_text = f"{arms[0]} (baseline), {arms[1]} (treatment); deltas are {arms[1]} - {arms[0]}"
    else:
        arms_text = f"{arms[0]} only: one arm, nothing is compared"
    lines += table(
        ("setting", "value"),
        [
            ("mode", document.mode),
            ("arms", arms_text),
            ("tasks", f"{', '.join(tasks)} (one after another, in this order)"),
            ("repetitions", _repetitions(document)),
            (
                "interrupted",
                "yes: the tasks after the interrupted one did not run"
                if document.interrupted
                else "no",
            ),
        ],
    )
    return [*lines, ""]


def _outcome(document: SuiteDocument) -> list[str]:
    lines = ["## Outcome", ""]
    if document.outcome.ok:
        lines.append(
            "Every task's run exited 0 and its report says every attempt passed and all "
            "evidence validated."
        )
    else:
        lines += [f"- {_line(reason)}" for reason in document.outcome.reasons]
    return [*lines, ""]


def _run_cell(row: TaskRow) -> str:
    if row.status == NO_REPORT and row.exit_status is None:
        return "did not run" if row.reason and row.reason.startswith("skipped") else "not recorded"
    return "not recorded" if row.exit_status is None else f"exit {row.exit_status}"


def _per_arm(figures: TaskFigures, arms: tuple[str, ...], key: str) -> str:
    return " / ".join(str(getattr(figures.arms[arm], key)) for arm in arms)


def _p_cell(figures: TaskFigures) -> str:
    test = figures.mcnemar
    if test is None or test.p_value is None:
        return f"no test ({figures.compared_pairs} compared pair(s))"
    return f"{test.p_value:.4g}"


def _link(row: TaskRow) -> str:
    return "none" if row.summary is None else f"[{row.summary}]({row.summary})"


def _task_cells(row: TaskRow, arms: tuple[str, ...]) -> tuple[str, ...]:
    figures = row.figures
    if figures is None:
        # Every column between the run and the link: repetitions, attempts, passed, voided,
        # (discordant, McNemar p,) report outcome.
        width = 7 if len(arms) == 2 else 5
        return (row.task, _run_cell(row), *[NO_REPORT] * width, _link(row))
    cells = [
        str(figures.repetitions),
        _per_arm(figures, arms, "attempts"),
        _per_arm(figures, arms, "passed"),
        f"{figures.voided_pairs} of {figures.scheduled_pairs}",
    ]
    if figures.discordance is not None:
        found = figures.discordance
        cells += [
            f"{found.baseline_only} / {found.treatment_only} of {found.pairs}",
            _p_cell(figures),
        ]
    cells.append("ok" if figures.outcome_ok else "not ok")
    return (row.task, _run_cell(row), *cells, _link(row))


def _tasks(document: SuiteDocument) -> list[str]:
    arms = document.arms
    both = " / ".join(arms)
    header = ["task", "run", "repetitions", f"attempts ({both})", f"passed ({both})"]
    header.append("voided pairs")
    if len(arms) == 2:
        header += [f"discordant ({arms[0]} only / {arms[1]} only)", "McNemar p"]
    header += ["report outcome", "summary"]
    lines = [
        "## Tasks",
        "",
        "Each task ran as an ordinary run in its own directory; its summary has everything "
        "about it. Voided pairs lack a result or had an infrastructure failure and are "
        "compared nowhere.",
        "",
    ]
    lines += table(header, [_task_cells(row, arms) for row in document.tasks])
    if document.pooled.no_claim:
        lines += [
            "",
            f"Latency-only task(s), which make no correctness claim (a pass means only that "
            f"the attempt ran within its bounds and allowed paths): "
            f"{', '.join(document.pooled.no_claim)}. They are left out of the pooled pass "
            "rates and McNemar.",
        ]
    missing = [row for row in document.tasks if row.figures is None]
    if missing:
        lines += ["", "Tasks without a report (left out of every pooled figure, never zeros):", ""]
        lines += [f"- {row.task}: {_line(row.reason)}" for row in missing]
    voided = [
        (row.task, row.figures.void_reasons)
        for row in document.tasks
        if row.figures is not None and row.figures.void_reasons
    ]
    if voided:
        lines += ["", "Why pairs were voided:", ""]
        for task, void_reasons in voided:
            reasons = "; ".join(f"{n} {why}" for why, n in void_reasons.items())
            lines.append(f"- {task}: {_line(reasons)}")
    return [*lines, ""]


def _mcnemar_line(test: PooledMcNemar, arms: tuple[str, ...], tasks: int) -> str:
    line = (
        f"**Pooled McNemar**, exact, stratified by task (the pair is the matched unit, so "
        f"the pooled counts are the sums of the {tasks} task(s)' discordant pairs): "
        f"{arms[0]}-only passes {test.baseline_only}, {arms[1]}-only passes "
        f"{test.treatment_only}, over {test.pairs} compared pairs, p = {test.p_value:.4g}. "
        f"With {test.discordant} discordant pair(s) the smallest p any outcome could give is "
        f"{test.min_p_value:.4g}"
    )
    if test.discordant == 0:
        return line + "; every pair agrees, so the test cannot show a difference."
    if test.min_p_value > CONVENTIONAL_ALPHA:
        return line + f"; no outcome of so few pairs could reach p < {CONVENTIONAL_ALPHA}."
    return line + "."


def _rate_cells(arm: str, document: SuiteDocument) -> tuple[str, ...]:
    pooled = document.pooled.arms[arm]
    rate = pooled.pass_rate
    if rate is None:
        return (arm, "0", f"{UNAVAILABLE} (no compared attempt)", UNAVAILABLE)
    return (
        arm,
        str(pooled.compared),
        f"{percent(rate.rate)} ({rate.successes} of {rate.trials})",
        f"[{percent(rate.low)}, {percent(rate.high)}]",
    )


def _pooled(document: SuiteDocument) -> list[str]:
    pooled, arms = document.pooled, document.arms
    lines = ["## Pooled over the tasks", ""]
    if not pooled.tasks:
        return [*lines, "No task with a correctness claim has a report: nothing is pooled.", ""]
    left_out = ""
    if pooled.left_out:
        left_out = f"; left out, without a report: {', '.join(pooled.left_out)}"
    if pooled.no_claim:
        left_out += f"; left out, latency-only: {', '.join(pooled.no_claim)}"
    lines += [
        f"Pooled over the {pooled.compared_pairs} compared pair(s) of {len(pooled.tasks)} "
        f"task(s) with a report ({', '.join(pooled.tasks)}){left_out}. Each compared attempt "
        "weighs the same, so a task with more repetitions weighs more; tasks differ in "
        "difficulty, so read the pooled rate beside the per-task rows.",
        "",
    ]
    lines += table(
        ("arm", "compared attempts", "pooled pass rate", "Wilson 95 % interval"),
        [_rate_cells(arm, document) for arm in arms],
    )
    if len(arms) == 2:
        delta = pooled.pass_rate_delta
        shown = UNAVAILABLE if delta is None else f"{100 * delta:+.1f} percentage points"
        lines += ["", f"Pooled pass-rate difference ({arms[1]} - {arms[0]}): {shown}."]
    lines.append("")
    if pooled.mcnemar is None:
        lines += [f"No pooled McNemar: {pooled.why}.", ""]
    else:
        lines += [_mcnemar_line(pooled.mcnemar, arms, len(pooled.strata)), ""]
    if pooled.strata:
        rows = [
            (s.task, str(s.pairs), str(s.baseline_only), str(s.treatment_only))
            for s in pooled.strata
        ]
        total = (
            "pooled (sum)",
            str(sum(s.pairs for s in pooled.strata)),
            str(sum(s.baseline_only for s in pooled.strata)),
            str(sum(s.treatment_only for s in pooled.strata)),
        )
        lines += table(
            ("stratum (task)", "compared pairs", f"{arms[0]} only", f"{arms[1]} only"),
            [*rows, total],
        )
        lines.append("")
    return lines


def _interval_cell(figure: TokenFigure) -> str:
    if figure.interval == "interval":
        return f"[{signed(figure.low)}, {signed(figure.high)}]"
    if figure.interval == "too-few-pairs":
        return f"too few pairs for an interval ({figure.pairs})"
    if figure.interval == "unavailable":
        return f"{UNAVAILABLE} ({figure.reported_pairs} of {figure.pairs} pairs reported)"
    return f"no bootstrap ({figure.pairs} compared pair(s))"


def _delta_cell(figure: TokenFigure) -> str:
    if figure.delta is not None:
        return signed(figure.delta)
    return f"{UNAVAILABLE} ({figure.reported_pairs} of {figure.pairs} pairs reported)"


def _mean_cell(figure: TokenFigure) -> str:
    if figure.interval == "no-bootstrap":
        return "not drawn"
    return signed(figure.mean)


def _tokens(document: SuiteDocument) -> list[str]:
    arms = document.arms
    if len(arms) != 2:
        return []
    baseline, treatment = arms
    lines = [
        "## Tokens, per task",
        "",
        "Token figures are per task only, over each task's compared pairs, as its own report "
        f"computed them: arm totals, the delta ({treatment} - {baseline}) summed over its "
        "pairs, that delta relative to the baseline total, and the report's mean per-pair "
        "delta with its bootstrap interval. They are never summed or averaged across tasks: "
        "tasks differ in size, so a sum or mean of token counts would mostly be the largest "
        "task's.",
        "",
    ]
    rows = []
    for row in document.tasks:
        if row.figures is None or row.figures.tokens is None:
            continue
        for label, figure in row.figures.tokens.items():
            rows.append(
                (
                    row.task,
                    FIGURE_NAMES[label],
                    number(figure.baseline),
                    number(figure.treatment),
                    _delta_cell(figure),
                    _relative(figure.relative),
                    _mean_cell(figure),
                    _interval_cell(figure),
                )
            )
    if not rows:
        return [*lines, "No task has a report: no token figure.", ""]
    lines += table(
        (
            "task",
            "figure",
            baseline,
            treatment,
            f"delta ({treatment} - {baseline})",
            "relative delta",
            "mean per-pair delta",
            "interval",
        ),
        rows,
    )
    tokens = document.pooled.tokens or {}
    lines += [
        "",
        "Across tasks, one figure, for what it is: the **median of the per-task relative "
        f"deltas** (each task's summed delta over its own {baseline} total). It weighs every "
        "task the same whatever its size and is not a sum; it is unavailable unless every "
        "task with a report has the relative delta.",
        "",
    ]
    lines += table(
        ("figure", "median of per-task relative deltas", "tasks"),
        [
            (FIGURE_NAMES[label], _relative(t.median_relative), f"{t.reported} of {t.tasks}")
            for label, t in tokens.items()
        ],
    )
    if document.offline_demo:
        lines += ["", OFFLINE_NOTE]
    return [*lines, ""]


def render_suite_summary(document: SuiteDocument) -> str:
    """summary.md for a suite document."""
    sections = [
        _banner(document),
        _outcome(document),
        _tasks(document),
        _pooled(document),
        _tokens(document),
    ]
    return "\n".join(line for section in sections for line in section).rstrip("\n") + "\n"
