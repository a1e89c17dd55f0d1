"""The run directory: the one place that names the arms and every artefact's path.

bench.sh writes a run directory and the ``hpbench`` commands read it; both sides
must agree on every name. In Python, no other module spells a run-directory
path: it asks :class:`RunLayout`. The layout (docs: README, "The run
directory")::

    runs/<run-id>/
      run.json  results.jsonl  report.json  summary.md  log.jsonl
      attempts/<rep>-<arm>/   codex.jsonl  result.json  ...
      routers/<rep>-<arm>/    metrics.json  capture/
      reps/<rep>/             provider.jsonl  services.txt
      provenance/             <arm>-router.image-id  <arm>-router.identity  ...
      invocations.jsonl       each invocation's repetitions (a resumed run)
      resume/<n>/             a resume's provenance and instructions, had again
      superseded/<n>/         attempts/, routers/, reps/ a resume ran again
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs


class Arm(enum.Enum):
    """A measured arm (which modes compare which arms: hpbench.modes)."""

    CONTROL = "control"  # stock Codex behind a passthrough router
    HPATCH = "hpatch"  # Codex behind the Hpatch router, on the run's protocol
    NATIVE = "native"  # ctp-only's baseline: Hpatch on the native protocol
    CTP = "ctp"  # ctp-only's treatment: Hpatch on CTP/2
    MENTOR = "mentor"  # mentor-handoff's treatment: Hpatch with Mentor Handoff on


# Each arm's base instructions in instructions/ (bench-instructions derives them): the
# stock text for the control, the derived treatment text for every Hpatch arm.
INSTRUCTIONS_FILES = {arm: "control.md" if arm is Arm.CONTROL else "treatment.md" for arm in Arm}
# The workspace's path as Codex sees it inside the agent (compose.yaml mounts it there).
AGENT_WORKSPACE = "/workspace"

# Files of one attempt directory (attempts/<rep>-<arm>/), written by bench-attempt,
# bench-changes and hpbench run finish, in the order they appear.
CODEX_JSONL = "codex.jsonl"
CODEX_EXIT = "codex.exit"
AGENT_SECONDS = "agent.seconds"
AGENT_TIMEOUT = "agent.timeout"
AGENT_LIMITS = "agent-limits.txt"
CHANGED_PATHS = "changed-paths.z"
CHANGES_JSON = "changes.json"
DIFF_PATCH = "diff.patch"
GRADING_DIR = "grader"
GRADER_SECONDS = "grader.seconds"
# What bench-attempt writes last instead of grader.seconds when the task has no grader
# (latency-only): the attempt ran to its end, and nothing grades it.
UNGRADED = "ungraded"
INFRASTRUCTURE_NOTE = "infrastructure.txt"
COMMENTARY_COVERAGE = "commentary-coverage.json"
RESULT_JSON = "result.json"
# Files of a grading directory (an attempt's grader/, qualification/base and /oracle),
# written by bench-grade and hpbench grader verdict|qualify.
GRADER_STDOUT = "grader.stdout"
GRADER_STDERR = "grader.stderr"
GRADER_EXIT = "grader.exit"
GRADER_STATE = "grader.state"
VERDICT_JSON = "verdict.json"
# One JSON line per invocation of the run (hpbench.resume).
INVOCATIONS = "invocations.jsonl"
# The scripted provider's request records (reps/<rep>/ of an offline run).
PROVIDER_RECORDS = "provider.jsonl"
# Files of one router directory (routers/<rep>-<arm>/).
METRICS_JSON = "metrics.json"
CAPTURE_DIR = "capture"
# Inside a treatment router's capture when exact evidence is on (spec 004): its records,
# and the run's consolidation of every attempt's.
EXACT_EVIDENCE_DIR = "exact-evidence"
EXACT_EVIDENCE_JSONL = "hpatch-exact-evidence.jsonl"
EXACT_EVIDENCE_ANALYSIS = "exact-evidence.json"
# Inside a treatment router's capture when issue reporting is on (spec 004): the reports
# the diagnose hook published; each attempt's consolidation, and the run's collection.
ISSUE_REPORTS_DIR = "issue-reports"
ISSUE_REPORTS_JSONL = "issue-reports.jsonl"
ISSUE_REPORTS_COLLECTION = "issue-reports.json"
# Files of the provenance directory (provenance/), one fact a file, written by
# bench-provenance after the images are built: per scheduled arm
# ``<arm>-router.image-id`` and ``<arm>-router.identity`` (its ``--version`` line), and
# the agent image's id and Codex version.
PROVENANCE_IMAGE_ID = "image-id"
PROVENANCE_IDENTITY = "identity"
PROVENANCE_AGENT_IMAGE_ID = "agent.image-id"
PROVENANCE_CODEX_VERSION = "codex.version"
# <image>.go-version: `go env GOVERSION` in the agent and grader images.
PROVENANCE_GO_VERSION = "go-version"
# The run directory's link to its mount root, where the agents' mounts live during the
# run (bench-lib.sh, mount_root).
MOUNTS_LINK = ".mounts"
# Files of the instructions directory besides each arm's text.
INSTRUCTIONS_DIFF = "treatment.diff"
INSTRUCTIONS_HASHES = "hashes.json"
STOCK_DIR = "stock"


@attrs.frozen
class RunLayout:
    """Every path of one run directory."""

    root: Path

    @property
    def run_json(self) -> Path:
        """The checked settings and the task fingerprint."""
        return self.root / "run.json"

    @property
    def plan_env(self) -> Path:
        """The plan's variables for the shell (``hpbench run plan``), sourced once."""
        return self.root / "plan.env"

    @property
    def grader_spec(self) -> Path:
        """The hidden grader as the run uses it, one fact a file."""
        return self.root / "grader-spec"

    @property
    def credential_exposures(self) -> Path:
        """Files in which the credential was found and replaced (hpbench.credentials)."""
        return self.root / "credential-exposures.txt"

    @property
    def provenance(self) -> Path:
        """What ran, as the engine and the images said (bench-provenance)."""
        return self.root / "provenance"

    def router_fact(self, arm: str, fact: str) -> Path:
        """One fact about ``arm``'s router image in ``provenance/``."""
        return self.provenance / f"{arm}-router.{fact}"

    @property
    def fingerprint_inputs(self) -> Path:
        """``sha256sum -c`` lines of the task's inputs, rechecked during the run."""
        return self.root / "fingerprint-inputs.sha256"

    @property
    def replay(self) -> Path:
        """The scripted provider's scripts (offline demo only)."""
        return self.root / "replay"

    @property
    def instructions_dir(self) -> Path:
        """Stock and derived base instructions (bench-instructions)."""
        return self.root / "instructions"

    def instructions(self, arm: Arm) -> Path:
        """The arm's retained base instructions."""
        return self.instructions_dir / INSTRUCTIONS_FILES[arm]

    @property
    def phases(self) -> Path:
        """Each phase's elapsed seconds, ``<phase>\t<seconds>`` a line."""
        return self.root / "phases.tsv"

    @property
    def qualification(self) -> Path:
        """The hidden grader's base/ and oracle/ gradings."""
        return self.root / "qualification"

    def codex_config(self, arm: str) -> Path:
        """The arm's Codex configuration for every repetition: ``codex/<arm>/config.toml``."""
        return self.root / "codex" / arm / "config.toml"

    @property
    def results(self) -> Path:
        """Every attempt object, merged deterministically."""
        return self.root / "results.jsonl"

    @property
    def report_json(self) -> Path:
        """Everything summary.md says, machine-readable."""
        return self.root / "report.json"

    @property
    def summary(self) -> Path:
        """What a person reads first."""
        return self.root / "summary.md"

    @property
    def exact_evidence(self) -> Path:
        """The exact-evidence analysis of every treatment attempt (when it is on)."""
        return self.root / EXACT_EVIDENCE_ANALYSIS

    @property
    def issue_reports(self) -> Path:
        """The collection of every treatment attempt's issue reports (when reporting is on)."""
        return self.root / ISSUE_REPORTS_COLLECTION

    @property
    def attempts(self) -> Path:
        """The directory of every attempt's evidence."""
        return self.root / "attempts"

    @property
    def routers(self) -> Path:
        """The directory of every router's evidence."""
        return self.root / "routers"

    @property
    def imported_baseline(self) -> Path:
        """hpatch-only's imported control, as accepted (hpbench.imported)."""
        return self.root / "imported" / "baseline.json"

    def attempt(self, repetition: int, arm: str) -> Path:
        """One attempt's evidence: ``attempts/<rep>-<arm>``."""
        return self.attempts / f"{repetition}-{arm}"

    def router(self, repetition: int, arm: str) -> Path:
        """One arm's router evidence in a repetition: ``routers/<rep>-<arm>``."""
        return self.routers / f"{repetition}-{arm}"

    def routers_of(self, arm: str) -> list[Path]:
        """Every router directory of ``arm``, in name order."""
        return sorted(self.routers.glob(f"*-{arm}"))

    def repetition(self, repetition: int) -> Path:
        """A repetition's own evidence (``reps/<rep>/``: its services, provider records)."""
        return self.root / "reps" / str(repetition)

    def provider_records(self, repetition: int) -> Path:
        """The scripted provider's request records of a repetition (offline runs)."""
        return self.repetition(repetition) / PROVIDER_RECORDS

    @property
    def invocations(self) -> Path:
        """One JSON line per invocation of the run: the first and each resume
        (hpbench.resume), with the repetitions each ran."""
        return self.root / INVOCATIONS

    def superseded(self, invocation: int) -> Path:
        """The evidence a resume (invocation ``n``) replaced, moved here whole:
        ``superseded/<n>/{attempts,routers,reps}/…``."""
        return self.root / "superseded" / str(invocation)

    def resume_dir(self, invocation: int) -> Path:
        """A resume's own checks: the provenance and instructions it had again."""
        return self.root / "resume" / str(invocation)


# A suite directory (benchmarks/libexec/bench-suite: several tasks' runs, one after another):
# what bench-suite was asked and how each task's run ended, each task's ordinary run
# directory under tasks/<id>/, and the pooled suite.json and summary.md (hpbench suite
# finish). Layout (docs/suites.md)::
#
#     runs/<stamp>-<mode>-suite-XXXXXX/
#       mode.txt  tasks.txt  exits.tsv  suite.json  summary.md
#       tasks/<id>/            an ordinary run directory (RunLayout)
SUITE_MODE = "mode.txt"
SUITE_TASKS_LIST = "tasks.txt"
SUITE_EXITS = "exits.tsv"
SUITE_JSON = "suite.json"
SUITE_SUMMARY = "summary.md"
SUITE_TASKS_DIR = "tasks"
# exits.tsv's status of a task an interrupt kept from starting.
SUITE_SKIPPED = "skipped"


@attrs.frozen
class SuiteLayout:
    """Every path of one suite directory."""

    root: Path

    @property
    def mode(self) -> Path:
        """The measuring mode every task ran in, one line (bench-suite, before the first)."""
        return self.root / SUITE_MODE

    @property
    def tasks_list(self) -> Path:
        """The task ids in the order they run, one a line (bench-suite, before the first)."""
        return self.root / SUITE_TASKS_LIST

    @property
    def exits(self) -> Path:
        """``<id>\t<exit status>`` for each task whose run ended, ``<id>\tskipped`` for each
        an interrupt kept from starting (bench-suite appends them as they happen)."""
        return self.root / SUITE_EXITS

    @property
    def suite_json(self) -> Path:
        """Per-task rows and pooled statistics, machine-readable."""
        return self.root / SUITE_JSON

    @property
    def summary(self) -> Path:
        """What a person reads first: the per-task table and the pooled statistics."""
        return self.root / SUITE_SUMMARY

    @property
    def tasks(self) -> Path:
        """The directory of every task's run directory."""
        return self.root / SUITE_TASKS_DIR

    def task_run(self, task: str) -> Path:
        """One task's ordinary run directory: ``tasks/<id>``."""
        return self.tasks / task
