"""The report document's contract (``report.json``, ``hpbench.report.v1``): one attrs model.

:func:`hpbench.report.model.build_report` assembles the figures and passes the whole
document through this model with the strict converter before anything is written, so
``report.json`` is always the model's JSON form; the JSON Schema in ``contrib/schemas/``
is generated from these classes (``hpbench schemas --write``). Maps keyed by an arm
(``control``, ``hpatch``), an attempt (``<repetition>-<arm>``) or a figure label are
JSON objects; docs/report.md says what each figure covers.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from hpbench import schemagen
from hpbench.capture.models import Comparison, RejectionCause, ToolShape
from hpbench.capture.prefix import PrefixRow
from hpbench.capture.schema import NAMED_TYPES
from hpbench.findings import Finding
from hpbench.issuereports.model import AttemptReports
from hpbench.provenance import RouterImage
from hpbench.results.model import FailureClass
from hpbench.schemagen import doc
from hpbench.stats import RateInterval

REPORT_SCHEMA: Final = "hpbench.report.v2"
SCHEMA_FILE = f"{REPORT_SCHEMA}.schema.json"

# A figure that was not reported by every attempt or pair it covers is null.
Figure = int | None


@attrs.frozen
class Population:
    """The repetitions a comparison covers."""

    pairs: int = attrs.field(metadata=doc("How many pairs."))
    repetitions: tuple[int, ...] = attrs.field(metadata=doc("Their repetition numbers."))


@attrs.frozen
class HiddenTestTally:
    """Required hidden tests passed over those required, over an arm's judged attempts."""

    attempts: int = attrs.field(metadata=doc("Attempts judged test by test."))
    passed: int = attrs.field(metadata=doc("Required tests that passed, summed."))
    required: int = attrs.field(metadata=doc("Required tests, summed."))


@attrs.frozen
class FinalResponseTally:
    """The task's exact final response over an arm's attempts (counts only)."""

    attempts: int = attrs.field(metadata=doc("Attempts held to it."))
    matched: int = attrs.field(metadata=doc("Attempts whose final substantive message was it."))
    missing: int = attrs.field(metadata=doc("Attempts with no final substantive message."))


@attrs.frozen
class CommentaryTally:
    """Commentary coverage over an arm's attempts (counts and profile names only)."""

    attempts: int = attrs.field(metadata=doc("Attempts held to a profile."))
    covered: int = attrs.field(metadata=doc("Attempts that met every assigned profile."))
    profiles: tuple[str, ...] = attrs.field(metadata=doc("The profiles (`id@version`)."))


@attrs.frozen
class Attrition:
    """An arm's voided pairs and why."""

    voided: int = attrs.field(metadata=doc("Voided pairs."))
    reasons: dict[str, int] = attrs.field(metadata=doc("Voided pairs by reason."))


@attrs.frozen
class ArmCorrectness:
    """One arm's outcomes, pass rate over the compared pairs and attrition."""

    attempts: int = attrs.field(metadata=doc("Attempts with a result."))
    passed: int = attrs.field(metadata=doc("Attempts that passed."))
    failed: int = attrs.field(metadata=doc("Attempts that failed for a reason of the agent."))
    infrastructure: int = attrs.field(metadata=doc("Attempts failed by the harness."))
    failure_classes: dict[str, int] = attrs.field(metadata=doc("Failed attempts by class."))
    hidden_tests: HiddenTestTally | None = attrs.field(
        metadata=doc("Hidden tests by name; null when no attempt was judged test by test.")
    )
    final_responses: FinalResponseTally | None = attrs.field(
        metadata=doc("The task's exact final response; null when the task requires none.")
    )
    commentary: CommentaryTally | None = attrs.field(
        metadata=doc("Commentary coverage; null when the task assigns the arm no profile.")
    )
    pass_rate: RateInterval | None = attrs.field(
        metadata=doc("Wilson interval over the compared pairs; null without one.")
    )
    attrition: Attrition = attrs.field(metadata=doc("Voided pairs."))


@attrs.frozen
class PairArm:
    """One arm's outcome in a pair."""

    passed: bool = attrs.field(metadata=doc("The attempt passed."))
    failure_class: FailureClass = attrs.field(metadata=doc("Its failure class."))


@attrs.frozen
class Pair:
    """One repetition: both arms' outcomes, which ran first, and whether it is voided."""

    repetition: int = attrs.field(metadata=doc("The repetition."))
    first_arm: str | None = attrs.field(metadata=doc("The arm that ran first; null if none."))
    voided: bool = attrs.field(
        metadata=doc("Attrition: an arm has no result or failed by the harness.")
    )
    void_reasons: dict[str, str] = attrs.field(metadata=doc("Why, by arm."))
    arms: dict[str, PairArm | None] = attrs.field(
        metadata=doc("Each arm's outcome; null for an arm without a result.")
    )


@attrs.frozen
class McNemarTest:
    """The exact McNemar test over the compared pairs."""

    pairs: int = attrs.field(metadata=doc("Compared pairs."))
    control_only: int = attrs.field(metadata=doc("Pairs where only control passed."))
    treatment_only: int = attrs.field(metadata=doc("Pairs where only the treatment passed."))
    discordant: int = attrs.field(metadata=doc("Pairs whose arms disagree."))
    p_value: float = attrs.field(metadata=doc("Two-sided exact p-value."))
    min_p_value: float = attrs.field(metadata=doc("The smallest p this many pairs could give."))


@attrs.frozen
class Correctness:
    """Correctness per arm and per pair, and the populations every comparison uses."""

    oracle_tier: str | None = attrs.field(
        metadata=doc("The attempts' oracle tier; null when they differ.")
    )
    arms: dict[str, ArmCorrectness] = attrs.field(metadata=doc("Per arm."))
    pairs: tuple[Pair, ...] = attrs.field(metadata=doc("Every scheduled repetition."))
    compared_pairs: Population = attrs.field(metadata=doc("The pairs that are not voided."))
    both_passed_pairs: Population = attrs.field(
        metadata=doc("The compared pairs where every arm passed.")
    )
    mcnemar: McNemarTest | None = attrs.field(
        metadata=doc("Null with one arm or too few compared pairs.")
    )


@attrs.frozen
class Statistics:
    """Whether statistics are shown, and in one line why not."""

    shown: bool = attrs.field(metadata=doc("Statistics are shown."))
    why: str | None = attrs.field(metadata=doc("Why not; null when shown."))
    compared_pairs: int = attrs.field(metadata=doc("Compared pairs."))
    min_pairs_for_test: int = attrs.field(metadata=doc("Pairs McNemar needs."))
    min_pairs_for_interval: int = attrs.field(metadata=doc("Pairs a bootstrap interval needs."))


@attrs.frozen
class AttemptsReported:
    """How many attempts of a population reported a figure."""

    reported: int = attrs.field(metadata=doc("Attempts that reported it."))
    attempts: int = attrs.field(metadata=doc("Attempts in the population."))


@attrs.frozen
class PairsReported:
    """How many pairs of a population have a figure's delta."""

    reported: int = attrs.field(metadata=doc("Pairs with a delta."))
    pairs: int = attrs.field(metadata=doc("Pairs in the population."))


@attrs.frozen
class BootstrapRule:
    """How the bootstrap intervals are drawn."""

    min_pairs: int = attrs.field(metadata=doc("Pairs an interval needs."))
    method: str = attrs.field(metadata=doc("The interval method (`bca`)."))
    confidence: float = attrs.field(metadata=doc("The confidence level."))
    resamples: int = attrs.field(metadata=doc("Resamples drawn."))
    seed: int = attrs.field(metadata=doc("The seed, so a rerun gives the same interval."))


@attrs.frozen
class BootstrapFigure:
    """One figure's mean paired delta and its interval."""

    reported: int = attrs.field(metadata=doc("Pairs with a delta."))
    pairs: int = attrs.field(metadata=doc("Pairs in the population."))
    mean: float | None = attrs.field(metadata=doc("Mean delta; null unless every pair has one."))
    low: float | None = attrs.field(metadata=doc("Interval low end."))
    high: float | None = attrs.field(metadata=doc("Interval high end."))
    degenerate: bool | None = attrs.field(metadata=doc("Every delta is the same value."))
    status: Literal["unavailable", "too-few-pairs", "interval"] = attrs.field(
        metadata=doc("Whether there is an interval, and if not why.")
    )


@attrs.frozen
class Bootstrap:
    """Paired bootstrap intervals of the token deltas."""

    rule: BootstrapRule = attrs.field(metadata=doc("How they are drawn."))
    pairs: int = attrs.field(metadata=doc("Pairs resampled."))
    figures: dict[str, BootstrapFigure] = attrs.field(metadata=doc("By figure label."))


@attrs.frozen
class UsageComparison:
    """Arm totals, pair deltas (treatment minus control) and the bootstrap over one
    population; a figure any member lacks is null, with how many reported it."""

    population: Population = attrs.field(metadata=doc("The pairs compared."))
    arms: dict[str, dict[str, Figure]] = attrs.field(metadata=doc("Totals by arm and label."))
    reported: dict[str, dict[str, AttemptsReported]] = attrs.field(
        metadata=doc("How many attempts reported each figure, by arm and label.")
    )
    deltas: dict[str, Figure] | None = attrs.field(
        metadata=doc("Summed pair deltas by label; null with one arm.")
    )
    deltas_reported: dict[str, PairsReported] | None = attrs.field(
        metadata=doc("How many pairs have each delta; null with one arm.")
    )
    bootstrap: Bootstrap | None = attrs.field(
        metadata=doc("Null with one arm or too few pairs for McNemar.")
    )


@attrs.frozen
class Usage(UsageComparison):
    """Provider usage from validated captures: the compared pairs, the pairs where both
    arms passed, and every attempt's own figures."""

    both_passed: UsageComparison | None = attrs.field(
        metadata=doc("The same over the pairs where both arms passed; null with one arm.")
    )
    attempts: dict[str, dict[str, Figure]] = attrs.field(
        metadata=doc("Each attempt's figures by `<repetition>-<arm>`.")
    )


@attrs.frozen
class CaptureEntry:
    """The capture validator's verdict on one router, every finding kept whole."""

    valid: bool = attrs.field(metadata=doc("No finding and a usable snapshot."))
    findings: tuple[Finding, ...] = attrs.field(
        metadata=doc("Each finding's code, message, file, line and field.")
    )


@attrs.frozen
class ProviderRow:
    """One retained provider attempt (a schema-6 provider record); never its request id."""

    exchange: int = attrs.field(metadata=doc("The exchange."))
    attempt: int = attrs.field(metadata=doc("The attempt within it."))
    role: str | None = attrs.field(metadata=doc("The thread's role; null without a client record."))
    outcome: str = attrs.field(metadata=doc("How the attempt ended."))
    http_status: int | None = attrs.field(metadata=doc("The provider's status."))
    delivered: bool = attrs.field(metadata=doc("Relayed to the client."))
    usage_state: str = attrs.field(metadata=doc("Whether usage was reported."))
    input_tokens: int | None = attrs.field(metadata=doc("Null without usage."))
    cached_input_tokens: int | None = attrs.field(metadata=doc("Null unless explicit."))
    cached_input_state: str = attrs.field(
        metadata=doc("`explicit`, `missing`, `null`, `invalid`, or `unavailable` (no usage).")
    )
    cache_write_input_tokens: int | None = attrs.field(metadata=doc("Null without usage."))
    output_tokens: int | None = attrs.field(metadata=doc("Null without usage."))
    reasoning_tokens: int | None = attrs.field(metadata=doc("Null when not reported."))
    request_model: str | None = attrs.field(metadata=doc("The model asked for."))
    response_model: str | None = attrs.field(metadata=doc("The provider-reported model."))
    header_model: str | None = attrs.field(metadata=doc("The provider-reported header model."))


@attrs.frozen
class ProviderEvidence:
    """One router's provider rows and their reconciliation with its snapshot."""

    rows: tuple[ProviderRow, ...] | None = attrs.field(
        metadata=doc("Null when the records cannot be read (never rebuilt from counters).")
    )
    unavailable: str | None = attrs.field(metadata=doc("Why there are no rows."))
    reconciled: bool = attrs.field(metadata=doc("Rows and snapshot agree."))
    problems: tuple[str, ...] = attrs.field(metadata=doc("Where they disagree."))


@attrs.frozen
class CommandCount:
    """Invocations of one command category."""

    total: int = attrs.field(metadata=doc("All invocations."))
    after_edit: int = attrs.field(metadata=doc("Those after the first edit."))


@attrs.frozen
class AttemptEditRounds:
    """One attempt's edit rounds: runs of client `file_change` items with no command between
    them (see docs/commands.md); not routed Hpatch calls."""

    rounds: int = attrs.field(metadata=doc("How many rounds."))
    file_changes: int = attrs.field(metadata=doc("Completed file changes."))
    failed_file_changes: int = attrs.field(metadata=doc("File changes that were not applied."))
    changes_per_round: tuple[int, ...] = attrs.field(
        metadata=doc("Completed file changes in each round, in order; empty when no round.")
    )
    commands_between_rounds: int = attrs.field(
        metadata=doc("Commands after the first round began and before the last one ended.")
    )
    commands_after_last_round: int = attrs.field(
        metadata=doc("Commands after the last round (0 when there is no round).")
    )
    rounds_followed_by_test: int = attrs.field(
        metadata=doc("Rounds after which a `test-build` command ran before the next round.")
    )


@attrs.frozen
class ArmCommands:
    """One arm's command analysis over the attempts whose Codex JSONL was analysed."""

    attempts: int = attrs.field(metadata=doc("Attempts with a result."))
    attempts_analysed: int = attrs.field(metadata=doc("Attempts whose JSONL was analysed."))
    counts: dict[str, CommandCount] | None = attrs.field(
        metadata=doc("By category; null when nothing was analysed.")
    )
    same_path_loops: int | None = attrs.field(metadata=doc("Structural same-path loops."))
    workspace_diff_loops: int | None = attrs.field(metadata=doc("Workspace-diff loops."))
    observations: tuple[str, ...] = attrs.field(metadata=doc("Notes on what was seen."))
    edit_rounds: dict[str, AttemptEditRounds | None] = attrs.field(
        metadata=doc(
            "Edit rounds by `<repetition>-<arm>`, every attempt with a result; null when its "
            "Codex JSONL was not analysed."
        )
    )


@attrs.frozen
class InstructionsDigests:
    """The retained instructions' digests (from hashes.json)."""

    codex_version: str = attrs.field(metadata=doc("The Codex CLI of the stock text."))
    model: str = attrs.field(metadata=doc("Its model."))
    stock_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the stock text."))
    files: dict[str, str] = attrs.field(metadata=doc("Hex SHA-256 by file name."))


@attrs.frozen
class Delivery:
    """The scripted provider's proof that an arm received exactly its instructions."""

    ok: bool = attrs.field(metadata=doc("Every request carried the file."))
    requests: int | None = attrs.field(metadata=doc("Requests recorded; null when unread."))
    matching: int | None = attrs.field(metadata=doc("Requests that carried it."))


@attrs.frozen
class RouterProvenance(RouterImage):
    """One arm's router as it ran: what was observed before the run, and what its
    captured snapshots report."""

    mode: str | None = attrs.field(metadata=doc("The mode its captured snapshots report."))
    protocol: str | None = attrs.field(metadata=doc("The protocol they report."))
    stand_in: str | None = attrs.field(
        metadata=doc("Which test equipment it is (by its self-reported name); null when none.")
    )


@attrs.frozen
class Provenance:
    """What ran: the facts behind every number, and what could not be established."""

    hpbench_version: str = attrs.field(metadata=doc("The hpbench that planned the run."))
    hpbench_revision: str | None = attrs.field(
        metadata=doc("Its git commit (`-dirty`: uncommitted changes); null when unknown.")
    )
    task_fingerprint: str = attrs.field(metadata=doc("The task's sha256 fingerprint."))
    codex_version: str | None = attrs.field(metadata=doc("`codex --version` in the agent image."))
    agent_image_id: str | None = attrs.field(metadata=doc("The agent image's id."))
    provider: str = attrs.field(
        metadata=doc("The provider as scheme and host (never a path, query or key).")
    )
    provider_stand_in: str | None = attrs.field(
        metadata=doc("Which test equipment answered as the provider; null when none did.")
    )
    routers: tuple[RouterProvenance, ...] = attrs.field(metadata=doc("Each scheduled arm's."))
    stand_ins: tuple[str, ...] = attrs.field(metadata=doc("Every stand-in that ran, one a line."))
    missing: tuple[str, ...] = attrs.field(
        metadata=doc("What could not be established; the report refuses the run unless empty.")
    )


@attrs.frozen
class HpatchAttempt:
    """One treatment attempt's routed Hpatch outcomes and tool shapes."""

    successes: int = attrs.field(metadata=doc("Hpatch calls that applied."))
    rejections: int = attrs.field(metadata=doc("Calls rejected with a diagnostic."))
    corrections: int = attrs.field(metadata=doc("Calls that corrected a rejected one."))
    unmatched: int = attrs.field(metadata=doc("Outcomes not correlated with a call."))
    diagnostics: int = attrs.field(metadata=doc("Diagnostics rendered to the model."))
    carrier_tokens: int = attrs.field(metadata=doc("Tokens of the Hpatch carrier."))
    reached: bool = attrs.field(
        metadata=doc("Whether any request reached hpatch (else its gain is no edit result).")
    )
    provider_emitted: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Tool shapes the provider emitted.")
    )
    client_delivered: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Tool shapes the client received.")
    )
    edit_payload: Comparison = attrs.field(
        metadata=doc(
            "Semantic edit payload: what the client was given to execute versus the Hpatch "
            "payloads the model emitted (signed reduction); not end-to-end output usage."
        )
    )
    rejection_causes: tuple[RejectionCause, ...] = attrs.field(
        metadata=doc("Rejections grouped by the router's cause.")
    )
    repeated_rejections: int = attrs.field(
        metadata=doc(
            "Rejections whose signature (same cause, operation and paths) an earlier "
            "rejection already had."
        )
    )
    repeated_signatures: int = attrs.field(metadata=doc("Signatures rejected more than once."))


@attrs.frozen
class Hpatch:
    """The treatment's Hpatch results by attempt."""

    attempts: dict[str, HpatchAttempt | None] = attrs.field(
        metadata=doc("By `<repetition>-hpatch`; null without a valid capture.")
    )


@attrs.frozen
class ModelRow:
    """One combination of thread role and models in an attempt's traffic."""

    traffic: Literal["main", "child", "mentor"] = attrs.field(
        metadata=doc("Root-thread traffic, a child's, or a child on the mentor model.")
    )
    request_model: str | None = attrs.field(metadata=doc("The model requested upstream."))
    response_model: str | None = attrs.field(metadata=doc("The provider-reported model."))
    header_model: str | None = attrs.field(metadata=doc("The provider's model header."))
    attempts: int = attrs.field(metadata=doc("Provider attempts, with or without usage."))
    attempts_with_usage: int = attrs.field(metadata=doc("Of those, attempts with usage."))


@attrs.frozen
class ConfiguredModels:
    """The models the run configured."""

    main: str = attrs.field(metadata=doc("The parent (root-thread) model."))
    child: str = attrs.field(metadata=doc("The model a child thread may use."))
    mentor: str | None = attrs.field(metadata=doc("The mentor model; null without Mentor."))


@attrs.frozen
class Models:
    """The models each attempt's traffic used."""

    configured: ConfiguredModels = attrs.field(metadata=doc("What the run configured."))
    attempts: dict[str, tuple[ModelRow, ...] | None] = attrs.field(
        metadata=doc("By `<repetition>-<arm>`; null without a valid capture.")
    )


@attrs.frozen
class Compression:
    """The CTP compression gate: the task's required directions and what was measured."""

    required: tuple[str, ...] = attrs.field(
        metadata=doc("Directions the task requires (`input`, `output`); empty: no gate.")
    )
    attempts: dict[str, dict[str, int | None]] = attrs.field(
        metadata=doc(
            "Each treatment attempt's signed token savings by direction; null when unknown."
        )
    )
    failures: tuple[str, ...] = attrs.field(metadata=doc("One line per failed requirement."))


@attrs.frozen
class Outcome:
    """Whether the run's evidence holds, and every reason it does not."""

    ok: bool = attrs.field(metadata=doc("Every attempt passed and all evidence validated."))
    reasons: tuple[str, ...] = attrs.field(metadata=doc("One line per reason."))


@attrs.frozen
class ImportedControl:
    """The control an hpatch-only run imported from a published baseline (never a new
    attempt of this run)."""

    label: str = attrs.field(metadata=doc("Its source, as the summary names it."))
    source_run_id: str = attrs.field(metadata=doc("The run the control ran in."))
    source_mode: str = attrs.field(metadata=doc("That run's mode."))
    source_repetition: int = attrs.field(metadata=doc("Its repetition there."))
    passed: bool = attrs.field(metadata=doc("Whether it passed (an import requires it)."))
    metrics: Literal["current", "context only"] = attrs.field(
        metadata=doc(
            "`current`: its metrics are of this capture contract and compared; `context "
            "only`: written under another contract, never combined with fresh capture"
        )
    )


@attrs.frozen
class ExactEvidenceLine:
    """One printed row of an attempt's exact evidence."""

    label: str = attrs.field(metadata=doc("What the row counts."))
    value: str = attrs.field(metadata=doc("Its value; fractions give both numbers."))


@attrs.frozen
class ExactEvidenceAttempt:
    """One treatment attempt's exact-evidence analysis (spec 004): counts and bytes only."""

    ok: bool = attrs.field(metadata=doc("Every record read, joined and consolidated."))
    rows: dict[str, Any] | None = attrs.field(
        metadata=doc(
            "The aggregate rows (hpbench/exactevidence/rows.py: retained fractions, payload, "
            "diagnostic and report bytes, chains, fragment counts); null when refused."
        )
    )
    lines: tuple[ExactEvidenceLine, ...] = attrs.field(
        metadata=doc("The rows as summary.md prints them.")
    )
    consolidated: str | None = attrs.field(
        metadata=doc("The attempt's `hpatch-exact-evidence.jsonl`; null when refused.")
    )
    findings: tuple[Finding, ...] = attrs.field(metadata=doc("Why the records were refused."))


@attrs.frozen
class IssueReports:
    """The issue reports the Hpatch routers' diagnose hooks published (spec 004): counts
    only; the titles and bodies stay in each attempt's `issue-reports.jsonl`."""

    collected: int | None = attrs.field(
        metadata=doc("Reports collected over the run; null when any attempt's were refused.")
    )
    calls: int | None = attrs.field(
        metadata=doc(
            "`report_issue` calls in delivered responses over the run; null when any "
            "attempt's capture could not be read."
        )
    )
    attempts: tuple[AttemptReports, ...] = attrs.field(
        metadata=doc("Each scheduled Hpatch attempt, in run order.")
    )


@attrs.frozen
class InvocationRow:
    """One invocation of a resumed run (invocations.jsonl)."""

    invocation: int = attrs.field(metadata=doc("1 for the first, then each resume."))
    repetitions: tuple[int, ...] = attrs.field(metadata=doc("The repetitions it ran."))
    superseded: tuple[int, ...] = attrs.field(
        metadata=doc("The repetitions whose earlier evidence it moved to superseded/<n>/.")
    )


@attrs.frozen
class ReportDocument:
    """``report.json``: everything summary.md says, as data (``hpbench.report.v2``)."""

    schema: Literal["hpbench.report.v2"] = attrs.field(metadata=doc("Always `hpbench.report.v2`."))
    run: Any = attrs.field(metadata=doc("The run's run.json, verbatim (its own contract)."))
    correctness: Correctness = attrs.field(metadata=doc("Correctness first."))
    statistics: Statistics = attrs.field(metadata=doc("Whether statistics are shown."))
    usage: Usage = attrs.field(metadata=doc("Provider usage from validated captures."))
    captures: dict[str, CaptureEntry] = attrs.field(
        metadata=doc("The validator's verdict by `<repetition>-<arm>`.")
    )
    provider_responses: dict[str, ProviderEvidence] = attrs.field(
        metadata=doc("Provider rows by `<repetition>-<arm>`.")
    )
    commands: dict[str, ArmCommands] = attrs.field(metadata=doc("Command analysis by arm."))
    instructions: InstructionsDigests | None = attrs.field(
        metadata=doc("Null when no instructions were derived.")
    )
    deliveries: dict[str, Delivery] = attrs.field(
        metadata=doc("Delivery proofs by `<repetition>-<arm>` (offline demo only).")
    )
    phases: dict[str, float] = attrs.field(metadata=doc("Elapsed seconds by phase."))
    agent_seconds: dict[str, tuple[float | None, ...]] = attrs.field(
        metadata=doc("Each attempt's agent wall time, by arm.")
    )
    provenance: Provenance = attrs.field(metadata=doc("What ran."))
    compression: Compression = attrs.field(metadata=doc("The CTP compression gate."))
    hpatch: Hpatch = attrs.field(metadata=doc("The Hpatch arms' results."))
    imported: ImportedControl | None = attrs.field(
        metadata=doc("hpatch-only's imported control and its source; null in other modes.")
    )
    models: Models = attrs.field(metadata=doc("Main, child and mentor models per attempt."))
    cache_prefix: dict[str, tuple[PrefixRow, ...] | None] = attrs.field(
        metadata=doc(
            "By `<repetition>-<arm>`: each root-thread request's cache-prefix statuses "
            "(spec 002's diagnostic table); null without a valid capture."
        )
    )
    exact_evidence: dict[str, ExactEvidenceAttempt] | None = attrs.field(
        metadata=doc("By `<repetition>-<arm>` when exact evidence is on; null when it is off.")
    )
    issue_reports: IssueReports | None = attrs.field(
        metadata=doc("When issue reporting is on (`report_issue`); null when it is off.")
    )
    outcome: Outcome = attrs.field(metadata=doc("The verdict."))
    invocations: tuple[InvocationRow, ...] | None = attrs.field(
        default=None,
        metadata=doc(
            "Each invocation of a resumed run and the repetitions it ran "
            "(`benchmarks/bench.sh resume`); null when the run was never resumed."
        ),
    )


# Tool shapes are the capture's own (``ToolShape``), with its constrained scalars.
CONTRACT = schemagen.Contract(
    schema_file=SCHEMA_FILE, roots=(ReportDocument,), named_types=NAMED_TYPES
)
