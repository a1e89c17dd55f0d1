"""The run plan: the settings checked once, the task read once, written once for the shell.

``hpbench run plan MODE RUN_DIR`` is the only place a run's settings and task are
read. In one Python start it writes into the run directory:

- ``run.json``: the :class:`RunPlan` (schema ``hpbench.run.v2``), which every later
  ``hpbench`` command reads instead of the environment or the task directory;
- ``plan.env``: ``export NAME='value'`` lines, exactly the variables in
  :data:`SHELL_VARIABLES`, which the shell sources once;
- ``grader-spec/``: the hidden grader, one fact a file, for bench-grade,
  bench-gomodcache and bench-qualify;
- ``codex/<arm>/config.toml``: each arm's Codex configuration for the whole run;
- ``fingerprint-inputs.sha256``: the task's inputs, which the shell rechecks with
  ``sha256sum -c`` without starting Python;
- ``replay/``: the scripted provider's scripts (offline demo only).

Every variable names the files that consume it, and every setting names where it
goes, so a setting nothing reads fails a test (tests/plan/).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from hpbench import __version__, schemagen
from hpbench._convert import make_converter, structure
from hpbench._git import git_env
from hpbench._jsonio import canonical_json, write_atomic
from hpbench.codexconfig import CodexConfig, ReasoningEffort, write_config
from hpbench.errors import ContractError, HpbenchError
from hpbench.findings import Finding
from hpbench.issuereports.model import HOOK_PATH
from hpbench.issuereports.model import OFF as REPORT_ISSUE_OFF
from hpbench.provenance import Observed, read_observed
from hpbench.rundir import EXACT_EVIDENCE_DIR, SUITE_TASKS_DIR, Arm, RunLayout, SuiteLayout
from hpbench.settings import (
    API_KEY_VARIABLES,
    AUTH_FILE_VARIABLE,
    Settings,
    reference_router_image,
    settings_from_env,
)
from hpbench.task.fingerprint import fingerprint_check_lines, task_fingerprint
from hpbench.task.manifest import Task

PLAN_SCHEMA = "hpbench.run.v3"
# Where Codex finds its base instructions inside the agent (compose.yaml mounts them).
AGENT_INSTRUCTIONS_PATH = "/run/hpbench/instructions.md"
ROUTER_PORT = 8080
# Where a treatment router with exact evidence on keeps its records, in its container.
EXACT_EVIDENCE_PATH = f"/capture/{EXACT_EVIDENCE_DIR}"


@attrs.frozen
class GraderPlan:
    """The hidden grader as the run uses it (the task manifest's ``[grader]``)."""

    kind: str = attrs.field(metadata=schemagen.doc("go-test, pytest or command"))
    command: tuple[str, ...] = attrs.field(metadata=schemagen.doc("argv, run in the grader"))
    timeout_seconds: int
    base_discriminator: str = attrs.field(
        metadata=schemagen.doc("text the grader prints on the base revision")
    )
    files: tuple[str, ...] = attrs.field(metadata=schemagen.doc("workspace-relative hidden files"))
    preload_go_qualification_grader: bool


@attrs.frozen(kw_only=True)
class RunPlan(Settings):
    """One run's plan: its checked settings (flat) and what the task fixes for the run."""

    schema: str = attrs.field(default=PLAN_SCHEMA, validator=attrs.validators.in_((PLAN_SCHEMA,)))
    run_id: str = attrs.field(metadata=schemagen.doc("the run directory's name"))
    reference_router_image: str = attrs.field(
        metadata=schemagen.doc("the reference router's image (test equipment) in this engine")
    )
    fingerprint: str = attrs.field(metadata=schemagen.doc("the task's sha256 fingerprint"))
    task_directory: str
    prompt_file: str = attrs.field(metadata=schemagen.doc("the visible prompt Codex receives"))
    base_revision: str
    oracle_revision: str
    go_version: str = attrs.field(
        default="",
        metadata=schemagen.doc(
            "the task's Go toolchain (`runtime.go_version`): the images are built with it "
            "and provenance checks that they have it; empty in plans made before it was "
            "planned"
        ),
    )
    grader: GraderPlan | None = attrs.field(
        metadata=schemagen.doc("null for a latency-only task, which has no grader")
    )
    hpbench_version: str = attrs.field(metadata=schemagen.doc("the hpbench that planned the run"))
    hpbench_revision: str = attrs.field(
        metadata=schemagen.doc(
            "its git commit, with `-dirty` when the checkout had uncommitted changes; empty "
            "when it is not a git checkout (the report then refuses the run's provenance)"
        )
    )
    require_compression: tuple[str, ...] = attrs.field(
        default=(),
        metadata=schemagen.doc(
            "directions (`input`, `output`) in which the task requires the treatment's CTP "
            "token savings to be positive (the task's `[ctp]`)"
        ),
    )
    observed: Observed | None = attrs.field(
        default=None,
        metadata=schemagen.doc(
            "what the engine and the images said before the run (`hpbench run provenance`); "
            "null until then"
        ),
    )


_CONVERTER = make_converter()
CONTRACT = schemagen.Contract(schema_file=f"{PLAN_SCHEMA}.schema.json", roots=(RunPlan,))


@attrs.frozen
class ShellVariable:
    """One ``plan.env`` variable: its value, the plan fields it comes from, its readers."""

    name: str
    value: Callable[[RunPlan, RunLayout], str]
    sources: tuple[str, ...]
    consumers: tuple[str, ...]


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _upstream(arm: Arm) -> Callable[[RunPlan, RunLayout], str]:
    # Offline, each router's upstream is the scripted provider's path for its arm; a real
    # run sends both arms to the one provider.
    def value(plan: RunPlan, _: RunLayout) -> str:
        if plan.offline_demo:
            return f"http://provider:{ROUTER_PORT}/{arm.value}/v1"
        return plan.provider

    return value


def _image_field(arm: Arm) -> str:
    return "control_router_image" if arm is Arm.CONTROL else "hpatch_router_image"


def router_image(plan: Settings, arm: Arm) -> str:
    """The image ``arm``'s router runs in this run."""
    image: str = getattr(plan, _image_field(arm))
    return image


def _image_value(arm: Arm) -> Callable[[RunPlan, RunLayout], str]:
    return lambda plan, _: router_image(plan, arm)


def _field(name: str, *consumers: str) -> ShellVariable:
    """``BENCH_<FIELD>``: one plan field as it is."""

    def value(plan: RunPlan, _: RunLayout) -> str:
        raw = getattr(plan, name)
        if isinstance(raw, bool):
            return _flag(raw)
        return " ".join(raw) if isinstance(raw, tuple) else str(raw)

    return ShellVariable(f"BENCH_{name.upper()}", value, (name,), consumers)


def _compose(name: str, field: str, *consumers: str) -> ShellVariable:
    """``HPBENCH_<NAME>``: a plan field compose.yaml substitutes (and others may read)."""
    return ShellVariable(
        name, lambda p, _: str(getattr(p, field)), (field,), ("compose.yaml", *consumers)
    )


def _override(name: str, field: str, override: str) -> ShellVariable:
    """``HPBENCH_<NAME>``: a plan field a Compose override file in contrib/compose/
    substitutes; bench-repetition adds that file only when the value is set."""
    return ShellVariable(
        name,
        lambda p, _: str(getattr(p, field)),
        (field,),
        (_LIB + "bench-repetition", f"contrib/compose/{override}"),
    )


_LIB = "benchmarks/libexec/"
SHELL_VARIABLES: tuple[ShellVariable, ...] = (
    _field("mode", _LIB + "bench-paired"),
    _field("arms", _LIB + "bench-lib.sh"),
    _field("task", _LIB + "bench-paired", _LIB + "bench-preparation-only"),
    _field("model", _LIB + "bench-instructions"),
    _field("effort", _LIB + "bench-paired"),
    _field("repetitions", _LIB + "bench-paired"),
    _field("agent_timeout_seconds", _LIB + "bench-attempt"),
    _field("offline_demo", _LIB + "bench-paired", _LIB + "bench-repetition"),
    # A real run's provider: each agent must prove it cannot reach it (bench-isolation).
    _field("provider", _LIB + "bench-isolation"),
    _field("codex_version", _LIB + "bench-instructions"),
    # The task's Go toolchain: compose.yaml builds the agent and grader images with it.
    ShellVariable("GO_VERSION", lambda p, _: p.go_version, ("go_version",), ("compose.yaml",)),
    _field("base_revision", _LIB + "bench-prepare", _LIB + "bench-lib.sh"),
    _field("oracle_revision", _LIB + "bench-prepare"),
    _field("prompt_file", _LIB + "bench-attempt"),
    ShellVariable(
        "BENCH_GRADER_SPEC",
        lambda _, layout: str(layout.grader_spec),
        ("grader", "grader_memory", "grader_cpus", "grader_pids"),
        (_LIB + "bench-grade", _LIB + "bench-gomodcache", _LIB + "bench-prepare"),
    ),
    _field("reference_router_image", _LIB + "bench-lib.sh", _LIB + "bench-paired"),
    # Each arm's router image: the control's setting for the control, the Hpatch router's
    # for every Hpatch arm. bench-lib.sh (the image check), bench-paired (the banner) and
    # bench-provenance read the scheduled arms' as HPBENCH_${arm^^}_ROUTER_IMAGE.
    *(
        ShellVariable(
            f"HPBENCH_{arm.name}_ROUTER_IMAGE",
            _image_value(arm),
            (_image_field(arm),),
            ("compose.yaml",),
        )
        for arm in Arm
    ),
    # Where the key comes from (a variable's name): bench-attempt hands the agent's Codex
    # that variable's value at `docker exec`, so no file and no container config holds it.
    _field("credential", _LIB + "bench-attempt"),
    # Paths the topology mounts through an override file bench-repetition adds when set.
    _override("HPBENCH_AUTH_FILE", "auth_file", "codex-auth-file.yaml"),
    _override("HPBENCH_PROVIDER_CA_BUNDLE", "provider_ca_bundle", "provider-ca-bundle.yaml"),
    # Exact evidence on: where the treatment router keeps its records (inside its capture,
    # so they are per attempt and collected with it); empty when off.
    ShellVariable(
        "HPBENCH_EXACT_EVIDENCE",
        lambda p, _: EXACT_EVIDENCE_PATH if p.exact_evidence else "",
        ("exact_evidence",),
        (_LIB + "bench-repetition", "contrib/compose/exact-evidence.yaml"),
    ),
    # Issue reporting on: the diagnose hook's path in each Hpatch router's container, which
    # its --report-issue names and the override file mounts; "off" when off (spec 004).
    ShellVariable(
        "HPBENCH_REPORT_ISSUE",
        lambda p, _: HOOK_PATH if p.report_issue else REPORT_ISSUE_OFF,
        ("report_issue",),
        (
            _LIB + "bench-instructions",
            _LIB + "bench-repetition",
            "compose.yaml",
            "contrib/compose/report-issue.yaml",
        ),
    ),
    # The run's Hpatch protocol (the hpatch and mentor routers'; native and ctp are fixed).
    _compose("HPBENCH_MODEL_PROTOCOL", "treatment_model_protocol"),
    # The Mentor treatment's mentor model (mentor-handoff only; empty otherwise).
    _compose("HPBENCH_MENTOR_MODEL", "mentor_model"),
    _compose("HPBENCH_AGENT_MEMORY", "agent_memory"),
    _compose("HPBENCH_AGENT_CPUS", "agent_cpus"),
    _compose("HPBENCH_AGENT_PIDS", "agent_pids"),
    _compose("HPBENCH_AGENT_RUNTIME", "agent_runtime", _LIB + "bench-lib.sh"),
    *(
        ShellVariable(
            f"HPBENCH_{arm.name}_UPSTREAM", _upstream(arm), ("provider",), ("compose.yaml",)
        )
        for arm in Arm
    ),
    # A real provider lives outside the topology: the routers' egress network needs a
    # route out. Offline it stays internal (the scripted provider is on it).
    ShellVariable(
        "HPBENCH_EGRESS_INTERNAL",
        lambda p, _: _flag(p.offline_demo),
        ("offline_demo",),
        ("compose.yaml",),
    ),
)

# Settings the shell never needs: where each is read from run.json instead.
RUN_JSON_CONSUMERS: Mapping[str, tuple[str, ...]] = {
    "enforce_no_edit_loops": ("hpbench/report/model.py",),
    "treatment_model_protocol": ("hpbench/report/captures.py",),
    "mentor_model": ("hpbench/report/captures.py",),
    "baseline": ("hpbench/imported.py",),
    "exact_evidence": ("hpbench/report/summary.py",),
}


def grader_plan(task: Task) -> GraderPlan | None:
    """The task's hidden grader as a run uses it; None for a latency-only task."""
    grader = task.manifest.grader
    if grader is None:
        return None
    return GraderPlan(
        kind=grader.kind.value,
        command=grader.command,
        timeout_seconds=grader.timeout_seconds,
        base_discriminator=grader.base_discriminator,
        files=grader.files,
        preload_go_qualification_grader=task.manifest.runtime.preload_go_qualification_grader,
    )


@attrs.frozen
class GraderCaps:
    """The grader container's caps, as the settings checked them (GRADER_*)."""

    memory: str = attrs.field(default=attrs.fields(Settings).grader_memory.default)
    cpus: str = attrs.field(default=attrs.fields(Settings).grader_cpus.default)
    pids: int = attrs.field(default=attrs.fields(Settings).grader_pids.default)

    @classmethod
    def of(cls, settings: Settings) -> GraderCaps:
        """The caps a run's settings chose."""
        return cls(settings.grader_memory, settings.grader_cpus, settings.grader_pids)


def write_grader_spec(task: Task, directory: Path, caps: GraderCaps | None = None) -> None:
    """The grader spec the shell reads: one fact a file, ``command`` one argument a line,
    ``hidden-files`` one ``<workspace-relative>\\t<file in the task>`` a line, and the
    container's caps (``memory``, ``cpus``, ``pids``; the defaults without ``caps``). Only
    this checked spec reaches bench-grade, so it never re-checks a cap. A latency-only task
    has no grader: its spec says ``kind`` none and holds no command, so the shell skips
    qualification and grading (and bench-grade, given it, refuses: no command)."""
    directory.mkdir(parents=True, exist_ok=True)
    caps = caps or GraderCaps()
    grader = grader_plan(task)
    hidden = "".join(f"{name}\t{path.resolve()}\n" for name, path in task.grader_file_paths())
    facts = {"kind": "none\n", "command": "", "preload_go_qualification_grader": "false\n"}
    if grader is not None:
        facts = {
            "kind": f"{grader.kind}\n",
            "command": "".join(f"{arg}\n" for arg in grader.command),
            "timeout_seconds": f"{grader.timeout_seconds}\n",
            "base_discriminator": f"{grader.base_discriminator}\n",
            "preload_go_qualification_grader": f"{_flag(grader.preload_go_qualification_grader)}\n",
        }
    facts |= {
        "hidden-files": hidden,
        "memory": f"{caps.memory}\n",
        "cpus": f"{caps.cpus}\n",
        "pids": f"{caps.pids}\n",
    }
    for name, text in facts.items():
        write_atomic(directory / name, text, mode=0o644)


def _write_codex_configs(plan: RunPlan, layout: RunLayout) -> None:
    # One config per arm for the whole run: every repetition's agent gets the same file.
    for arm in Arm:
        path = layout.codex_config(arm.value)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_config(
            CodexConfig(
                arm=arm,
                router_url=f"http://{arm.value}-router:{ROUTER_PORT}/v1",
                model=plan.model,
                reasoning_effort=ReasoningEffort(plan.effort),
                model_instructions_file=AGENT_INSTRUCTIONS_PATH,
                auth_file=plan.credential == AUTH_FILE_VARIABLE,
                # Codex reads the key from the variable the user set (bench-attempt passes
                # it by name); offline, from HPBENCH_API_KEY="offline".
                env_key=plan.credential
                if plan.credential in API_KEY_VARIABLES
                else "HPBENCH_API_KEY",
            ),
            path,
        )
        path.chmod(0o644)


def _copy_replay(source: Path, layout: RunLayout) -> None:
    """The task's scripts, one per arm (``<arm>.json``): an Hpatch arm without a script of
    its own plays the treatment's (``hpatch.json``), as the scripted provider finds its
    script by the arm in the request path."""
    missing = [name for name in ("control.json", "hpatch.json") if not (source / name).is_file()]
    if missing:
        msg = f"no replay scripts ({', '.join(missing)}) in {source}"
        raise HpbenchError(msg)
    shutil.copytree(source, layout.replay)
    for arm in Arm:
        script = layout.replay / f"{arm.value}.json"
        if not script.exists():
            shutil.copyfile(layout.replay / f"{Arm.HPATCH.value}.json", script)
    # The scripted provider reads them as another user through a read-only mount.
    for directory, _, files in os.walk(layout.replay):
        Path(directory).chmod(0o755)
        for name in files:
            (Path(directory) / name).chmod(0o644)


def checkout_revision(root: Path) -> str:
    """The git commit of the hpbench checkout at ``root`` (``-dirty`` when tracked files
    changed), or ``""`` when it is not a git checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            env=git_env(),
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            env=git_env(),
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"{head}-dirty" if dirty else head


def build_plan(
    settings: Settings, task: Task, run_id: str, reference_image: str, revision: str = ""
) -> RunPlan:
    """The plan of one run from its checked settings and its loaded task."""
    manifest = task.manifest
    return RunPlan(
        **attrs.asdict(settings, recurse=False),
        run_id=run_id,
        reference_router_image=reference_image,
        fingerprint=task_fingerprint(task),
        task_directory=str(task.directory.resolve()),
        prompt_file=str(task.prompt_path.resolve()),
        base_revision=manifest.source.base_revision,
        oracle_revision=manifest.source.oracle_revision,
        go_version=manifest.runtime.go_version,
        grader=grader_plan(task),
        hpbench_version=__version__,
        hpbench_revision=revision,
        require_compression=tuple(d.value for d in manifest.ctp.require_compression),
    )


def plan_env(plan: RunPlan, layout: RunLayout) -> str:
    """``plan.env``: one ``export`` line per declared variable, quoted for bash."""
    lines = [f"# hpbench run plan {plan.run_id}: sourced once by bench-{plan.mode}"]
    lines += [
        f"export {variable.name}={shlex.quote(variable.value(plan, layout))}"
        for variable in SHELL_VARIABLES
    ]
    return "\n".join(lines) + "\n"


def write_plan(
    mode: str,
    run_dir: Path,
    env: Mapping[str, str],
    load: Callable[[str], Task],
    replay_dir: Path | None = None,
) -> RunPlan:
    """Check the settings, load the task and write everything the run reads.

    Nothing is written unless the settings and the task are good: a refused run
    leaves its run directory as it found it.

    Raises:
        ContractError: bad settings, each naming its variable; a task that does not load.
        HpbenchError: the offline demo without replay scripts.
    """
    settings = settings_from_env(mode, env)
    task = load(settings.task)
    layout = RunLayout(run_dir)
    # The checkout bench.sh runs from (BENCH_ROOT), else the one this package lives in.
    root = Path(env.get("BENCH_ROOT") or Path(__file__).resolve().parents[1])
    plan = build_plan(
        settings, task, run_id_of(run_dir), reference_router_image(env), checkout_revision(root)
    )
    if plan.offline_demo:
        _copy_replay(replay_dir or task.directory / "replay", layout)
    elif replay_dir is not None:
        msg = (
            "HPBENCH_REPLAY_DIR is test equipment for the offline demo; "
            "unset it for a real provider"
        )
        raise HpbenchError(msg)
    write_grader_spec(task, layout.grader_spec, GraderCaps.of(settings))
    _write_codex_configs(plan, layout)
    write_atomic(layout.fingerprint_inputs, fingerprint_check_lines(task))
    write_run_json(layout, plan)
    write_atomic(layout.plan_env, plan_env(plan, layout))
    return plan


def run_id_of(run_dir: Path) -> str:
    """The run's id: its directory's name, which is unique under RUNS_DIR. A task's run in
    a suite (``<suite>/tasks/<id>``) is named by its task alone, so its id is the suite's
    name and the task's: an imported baseline or a merged result names one run, never
    every suite's run of that task."""
    suite = run_dir.parent.parent
    if run_dir.parent.name == SUITE_TASKS_DIR and SuiteLayout(suite).mode.is_file():
        return f"{suite.name}.{run_dir.name}"
    return run_dir.name


def observe(run_dir: Path) -> Observed:
    """Read what bench-provenance recorded into run.json's ``observed`` section.

    Returns the observation; its ``missing`` lines are empty when provenance is complete.
    """
    layout = RunLayout(run_dir)
    plan = load_plan(run_dir)
    images = {arm.value: router_image(plan, arm) for arm in Arm}
    observed = read_observed(layout, plan.arms, images, plan.codex_version, plan.go_version)
    write_run_json(layout, attrs.evolve(plan, observed=observed))
    return observed


def plan_json(plan: RunPlan) -> dict[str, Any]:
    """The plan as the JSON object ``run.json`` holds."""
    document: dict[str, Any] = _CONVERTER.unstructure(plan)
    return document


def write_run_json(layout: RunLayout, plan: RunPlan) -> None:
    """``run.json`` (canonical JSON, mode 0600, atomic)."""
    write_atomic(layout.run_json, canonical_json(plan_json(plan)) + "\n")


def load_plan(run_dir: Path) -> RunPlan:
    """A run's ``run.json``, strictly: an unknown or missing field is refused by name.

    Raises:
        ContractError: the document does not fit :class:`RunPlan`.
    """
    path = RunLayout(run_dir).run_json
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"{path}: cannot read the run plan: {exc}"
        raise HpbenchError(msg) from None
    if isinstance(data, dict) and data.get("schema") != PLAN_SCHEMA:
        finding = Finding(
            "plan.schema",
            f"expected {PLAN_SCHEMA!r}, got {data.get('schema')!r}",
            file=str(path),
            field="$.schema",
        )
        raise ContractError(f"{path}: not a run plan", [finding])
    return structure(_CONVERTER, data, RunPlan, source=str(path), code="plan.schema")
