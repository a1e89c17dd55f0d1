"""What ``hpbench task validate`` checks beyond the manifest's own contract.

:func:`hpbench.task.manifest.load_manifest` refuses a manifest that cannot be right in
itself. These checks read the task's files against each other and against the rules a
task author must follow (docs/tasks.md), each one a finding that names the file:

- the prompt repeats the offline-isolation rule verbatim (spec 004: "the task prompt
  repeats it"), and names no hidden grader file, no required test and not the base
  discriminator (the grader must stay hidden);
- a bundled source's allowed paths are exactly the paths its oracle changes, none is
  a test file the grader replaces, and no hidden file lands on a visible base file;
- a bundled correctness task declares its blind edit (``[gating]``), which the gating
  tests grade;
- replay scripts, when the task ships them, are both there and each one loads.

A git source's history is not fetched here: its oracle paths are checked where its
mirror is (tests/task/test_etcd_task.py).
"""

from __future__ import annotations

from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.instructions.pins import default_pins_path, load_pins
from hpbench.reference.script import load_script
from hpbench.task.history import oracle_files, tree_files
from hpbench.task.manifest import OracleTier, SourceKind, Task

REPLAY_DIR = "replay"
REPLAY_SCRIPTS = ("control.json", "hpatch.json")


def task_findings(task: Task, isolation_rule: str | None = None) -> list[Finding]:
    """Every problem of a loaded task's files; empty when it is sound. ``isolation_rule``
    is the rule's text (default: the pinned file's)."""
    rule = (
        isolation_rule
        if isolation_rule is not None
        else load_pins(default_pins_path()).isolation_rule_text
    )
    findings = _prompt_findings(task, rule)
    if task.manifest.source.kind is SourceKind.BUNDLED:
        findings += _bundled_findings(task)
    findings += _replay_findings(task)
    return findings


def _prompt_findings(task: Task, rule: str) -> list[Finding]:
    source = str(task.prompt_path)
    try:
        prompt = task.prompt_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Finding("task.prompt", f"cannot be read: {exc}", source)]
    findings = []
    if rule.strip() not in prompt:
        message = (
            "does not repeat the offline-isolation rule verbatim "
            "(contrib/codex/offline-isolation-rule.md)"
        )
        findings.append(Finding("task.prompt.isolation_rule", message, source))
    grader = task.manifest.grader
    if grader is not None:
        leaks = [*grader.files, grader.base_discriminator]
        leaks += [test for tests in grader.required_tests.values() for test in tests]
        findings += [
            Finding("task.prompt.leak", f"names {leak!r}, which the grader keeps hidden", source)
            for leak in leaks
            if leak in prompt
        ]
    return findings


def _bundled_findings(task: Task) -> list[Finding]:
    manifest = task.manifest
    source = str(task.manifest_path)
    if manifest.source.base is None:
        return []
    base = tree_files(task.directory / manifest.source.base)
    try:
        oracle = oracle_files(task)
    except ContractError as exc:
        return list(exc.findings)
    changed = sorted(
        name for name in base.keys() | oracle.keys() if base.get(name) != oracle.get(name)
    )
    allowed = set(manifest.paths.allowed)
    findings = [
        Finding("task.paths.allowed", f"{name} is changed by the oracle but not allowed", source)
        for name in changed
        if name not in allowed
    ]
    findings += [
        Finding(
            "task.paths.allowed",
            f"{name} is allowed but the oracle does not change it (allowed paths are exactly "
            "the oracle's production paths)",
            source,
        )
        for name in sorted(allowed - set(changed))
    ]
    for name, _ in task.grader_file_paths():
        if name in base:
            message = f"hidden file {name} would replace the base's visible file of that name"
            findings.append(Finding("task.grader.files", message, source))
    if manifest.oracle_tier is OracleTier.CORRECTNESS and manifest.gating is None:
        message = (
            "a bundled correctness task declares its blind edit ([gating] blind), which the "
            "gating tests grade"
        )
        findings.append(Finding("task.gating.missing", message, source))
    return findings


def _replay_findings(task: Task) -> list[Finding]:
    directory = task.directory / REPLAY_DIR
    if not directory.is_dir():
        return []
    findings: list[Finding] = []
    for name in REPLAY_SCRIPTS:
        path = directory / name
        if not path.is_file():
            message = f"the offline demo needs {REPLAY_DIR}/{name} beside the others"
            findings.append(Finding("task.replay.missing", message, str(path)))
            continue
        try:
            load_script(path)
        except ContractError as exc:
            findings += exc.findings
    return findings
