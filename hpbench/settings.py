"""Run settings from the environment, checked before anything starts.

bench.sh is configured by environment variables (and the mode as its first
argument). Every bad value is refused here, each finding naming the variable,
so a run never starts with a setting it would only trip over an hour later.
The normalized settings become part of the run plan (``hpbench.plan``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from hpbench.codexconfig import ReasoningEffort, forbidden_host
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.instructions.pins import default_pins_path, load_pins
from hpbench.modes import (
    EXACT_EVIDENCE_MODES,
    FRESH_CONTROL_MODES,
    IMPORTING_MODES,
    MENTOR_MODES,
    MODES,
    PROTOCOL_VARIABLES,
    REPORT_ISSUE_DEFAULTS,
    Mode,
)

PREPARATION_MODES = {"preparation-only"}
# The measuring modes (hpbench.modes, in its order), then the preparation mode.
KNOWN_MODES = (*MODES, *sorted(PREPARATION_MODES))
API_KEY_VARIABLES = ("HPBENCH_API_KEY", "OPENAI_API_KEY")
AUTH_FILE_VARIABLE = "CODEX_AUTH_FILE"
# Where a run's credential comes from: a variable's name, never its value. The offline
# demo has none (its agents send the scripted provider the word "offline").
NO_CREDENTIAL = "none"
CREDENTIAL_SOURCES = (NO_CREDENTIAL, *API_KEY_VARIABLES, AUTH_FILE_VARIABLE)
_PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9._-]{1,128})?(@sha256:[0-9a-f]{64})?$")
MAX_REPETITIONS = 16
# The treatment router's model protocols (the capture contract's Protocol values).
PROTOCOLS = ("ctp2", "native")
# Container runtimes an agent may run under: runc (Docker's default) or gVisor's runsc,
# which bench.sh accepts only when the engine lists it (docker info).
AGENT_RUNTIMES = ("runc", "runsc")
_MEMORY = re.compile(r"^([1-9][0-9]{0,6})([kmg])$")
_MEMORY_UNIT = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
MIN_MEMORY = 64 << 20
_CPUS = re.compile(r"^[0-9]{1,3}(\.[0-9]{1,2})?$")
MIN_CPUS, MAX_CPUS = 0.1, 256.0


@attrs.frozen
class Settings:
    """The normalized settings of one run."""

    mode: str
    arms: tuple[str, ...]
    task: str
    model: str
    effort: str
    repetitions: int
    agent_timeout_seconds: int
    provider: str
    offline_demo: bool
    enforce_no_edit_loops: bool
    control_router_image: str
    hpatch_router_image: str
    treatment_model_protocol: str = "ctp2"
    mentor_model: str = ""
    baseline: str = ""
    exact_evidence: bool = False
    report_issue: bool = False
    credential: str = NO_CREDENTIAL
    auth_file: str = ""
    provider_ca_bundle: str = ""
    agent_memory: str = "4g"
    agent_cpus: str = "1"
    agent_pids: int = 1024
    agent_runtime: str = "runc"
    grader_memory: str = "4g"
    grader_cpus: str = "1"
    grader_pids: int = 1024
    codex_version: str = ""


def _integer(
    env: Mapping[str, str], name: str, default: int, low: int, high: int
) -> tuple[int, Finding | None]:
    raw = env.get(name, "").strip()
    if not raw:
        return default, None
    if not raw.isdigit() or not low <= int(raw) <= high:
        return default, Finding(
            "settings.range",
            f"must be a whole number from {low} to {high}, got {raw!r}",
            field=name,
        )
    return int(raw), None


def _choice(
    env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]
) -> tuple[str, Finding | None]:
    value = env.get(name, "").strip() or default
    if value not in allowed:
        return default, Finding(
            "settings.choice", f"must be one of {', '.join(allowed)}, got {value!r}", field=name
        )
    return value, None


def _memory(env: Mapping[str, str], name: str, default: str) -> tuple[str, Finding | None]:
    """A container memory limit such as ``512m`` or ``4g`` (no swap is added to it)."""
    value = env.get(name, "").strip().lower() or default
    match = _MEMORY.match(value)
    if match is None or int(match[1]) * _MEMORY_UNIT[match[2]] < MIN_MEMORY:
        return default, Finding(
            "settings.memory",
            f"must be a size of at least 64m with a unit k, m or g (e.g. 512m, 4g), got {value!r}",
            field=name,
        )
    return value, None


def _cpus(env: Mapping[str, str], name: str, default: str) -> tuple[str, Finding | None]:
    """A container CPU quota in cores, such as ``1`` or ``0.5``."""
    value = env.get(name, "").strip() or default
    if not _CPUS.match(value) or not MIN_CPUS <= float(value) <= MAX_CPUS:
        return default, Finding(
            "settings.cpus",
            f"must be a number of cores from {MIN_CPUS} to {MAX_CPUS:g} (e.g. 1, 0.5), "
            f"got {value!r}",
            field=name,
        )
    return value, None


def _provider(env: Mapping[str, str]) -> tuple[str, bool, list[Finding]]:
    """``replay`` (offline demo) or a real endpoint URL that comes with an API key."""
    has_key = any(env.get(name) for name in (*API_KEY_VARIABLES, AUTH_FILE_VARIABLE))
    value = env.get("PROVIDER", "").strip() or ("replay" if not has_key else "")
    if value == "replay":
        return value, True, []
    if not value:
        return (
            "replay",
            True,
            [
                Finding(
                    "settings.provider",
                    "an API key is set but PROVIDER names no endpoint; set PROVIDER to the "
                    "Responses base URL, or PROVIDER=replay for the offline demo",
                    field="PROVIDER",
                )
            ],
        )
    parts = urlsplit(value)
    findings = []
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        findings.append(
            Finding(
                "settings.provider",
                f"must be 'replay' or an http(s) URL, got {value!r}",
                field="PROVIDER",
            )
        )
    if not has_key:
        findings.append(
            Finding(
                "settings.api_key",
                f"a real provider needs an API key in {' or '.join(API_KEY_VARIABLES)} "
                f"or a Codex auth.json in {AUTH_FILE_VARIABLE}",
                field="PROVIDER",
            )
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        # run.json keeps the URL: a secret in it would be written down.
        findings.append(
            Finding(
                "settings.provider",
                "must not carry credentials, a query or a fragment (give the key in "
                f"{API_KEY_VARIABLES[0]})",
                field="PROVIDER",
            )
        )
    if parts.hostname and forbidden_host(parts.hostname) and parts.scheme != "https":
        findings.append(
            Finding("settings.provider", "a hosted provider needs https", field="PROVIDER")
        )
    return value, False, findings


# The agents' user: a mounted auth.json must be readable by it (compose.yaml, Dockerfile).
AGENT_UID = 1000


def auth_file_key(path: Path) -> tuple[str | None, str | None]:
    """The API key a Codex ``auth.json`` holds, or None and why it holds none (no value
    is ever quoted)."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror}"
    except ValueError:
        return None, "not JSON"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    key = data.get("OPENAI_API_KEY")
    if not isinstance(key, str) or not key.strip():
        return None, "holds no OPENAI_API_KEY (an API-key login: `codex login --with-api-key`)"
    if data.get("tokens"):
        # A ChatGPT login refreshes its tokens at OpenAI's hosts: never from an agent.
        return None, "holds ChatGPT login tokens; give an API-key auth.json"
    return key, None


def _auth_file_problem(path: Path) -> str | None:
    """Why ``path`` is not a Codex API-key ``auth.json`` the agents can read."""
    _, problem = auth_file_key(path)
    if problem is not None:
        return problem
    status = path.stat()
    if status.st_uid != AGENT_UID and not status.st_mode & 0o004:
        # It is bind-mounted as it is: the agents' Codex runs as uid 1000.
        return f"the agents (uid {AGENT_UID}) cannot read it: chown {AGENT_UID} it (mode 0400)"
    return None


def _credential(env: Mapping[str, str], offline: bool) -> tuple[str, str, list[Finding]]:
    """The credential's source (a variable's name) and the auth file's path, if any.

    A real run takes the key from HPBENCH_API_KEY, else OPENAI_API_KEY, or the API key
    in a Codex auth.json (CODEX_AUTH_FILE), mounted read-only into the agents. Only
    presence and form are read here: no value is kept, written or quoted.
    """
    if offline:
        return NO_CREDENTIAL, "", []
    raw_file = env.get(AUTH_FILE_VARIABLE, "").strip()
    keys = [name for name in API_KEY_VARIABLES if env.get(name)]
    if raw_file and keys:
        message = f"give one credential: {keys[0]} and {AUTH_FILE_VARIABLE} are both set"
        return keys[0], "", [Finding("settings.api_key", message, field=AUTH_FILE_VARIABLE)]
    if keys:
        return keys[0], "", []
    if not raw_file:
        return NO_CREDENTIAL, "", []  # _provider already refused a real run without one
    path = Path(raw_file).resolve()
    problem = _auth_file_problem(path) if path.is_file() else "no such file"
    if problem is not None:
        finding = Finding("settings.auth_file", f"{path}: {problem}", field=AUTH_FILE_VARIABLE)
        return AUTH_FILE_VARIABLE, "", [finding]
    return AUTH_FILE_VARIABLE, str(path), []


def _ca_bundle(env: Mapping[str, str], offline: bool) -> tuple[str, Finding | None]:
    """PROVIDER_CA_BUNDLE: PEM certificates the routers trust for the provider's TLS."""
    raw = env.get("PROVIDER_CA_BUNDLE", "").strip()
    if not raw:
        return "", None
    if offline:
        message = "the offline demo's scripted provider needs no CA; unset it"
        return "", Finding("settings.ca_bundle", message, field="PROVIDER_CA_BUNDLE")
    path = Path(raw).resolve()
    try:
        pem = path.read_bytes()
    except OSError as exc:
        message = f"{path}: cannot read it: {exc.strerror}"
        return "", Finding("settings.ca_bundle", message, field="PROVIDER_CA_BUNDLE")
    if _PEM_CERTIFICATE not in pem:
        message = f"{path}: no PEM certificate in it"
        return "", Finding("settings.ca_bundle", message, field="PROVIDER_CA_BUNDLE")
    return str(path), None


def reference_router_image(env: Mapping[str, str]) -> str:
    """The reference router's image (test equipment), as bench-images tags it."""
    return f"hpbench-router:{env.get('HPBENCH_IMAGE_TAG', '').strip() or 'local'}"


def _router_images(env: Mapping[str, str], offline: bool) -> tuple[dict[str, str], list[Finding]]:
    """Each arm's router image (docs/router-contract.md).

    The treatment names its image (offline: the reference router's by default); the
    control defaults to the treatment's image, which it runs in passthrough mode. A real
    run never measures the reference router, in either arm.
    """
    reference = reference_router_image(env)
    findings = []
    hpatch = env.get("HPATCH_ROUTER_IMAGE", "").strip() or (reference if offline else "")
    if not hpatch:
        findings.append(
            Finding(
                "settings.image",
                "a real run measures your router: name its image (the reference router is "
                "test equipment)",
                field="HPATCH_ROUTER_IMAGE",
            )
        )
    images = {"hpatch": hpatch, "control": env.get("CONTROL_ROUTER_IMAGE", "").strip() or hpatch}
    for arm, image in images.items():
        name = f"{arm.upper()}_ROUTER_IMAGE"
        if image and not _IMAGE.match(image):
            findings.append(
                Finding("settings.image", f"not an image reference: {image!r}", field=name)
            )
        elif image and image == reference and not offline:
            findings.append(
                Finding(
                    "settings.image",
                    f"{image} is the reference router, test equipment: a real run never "
                    "measures it",
                    field=name,
                )
            )
    return images, findings


def _mode_protocol(
    name: str, mode: Mode | None, env: Mapping[str, str]
) -> tuple[str, list[Finding]]:
    """The run's Hpatch protocol: the mode's own setting, every other mode's refused.

    Paired treatment is Hpatch with CTP/2 (spec 002), native the documented choice
    (``TREATMENT_MODEL_PROTOCOL``); hpatch-diagnostic takes ``DIAGNOSTIC_MODEL_PROTOCOL``
    and mentor-handoff ``MENTOR_MODEL_PROTOCOL`` (both native by default). A mode whose
    arms' protocols are fixed (control-only, hpatch-only, ctp-only) takes none: a setting
    that would reach nothing is refused rather than ignored. Without a setting, the value
    kept is the treatment's fixed protocol (native when the mode has no Hpatch treatment).
    """
    own = mode.protocol if mode is not None else None
    findings = []
    for variable in PROTOCOL_VARIABLES:
        if env.get(variable, "").strip() and (own is None or own.variable != variable):
            where = f"; {name} takes {own.variable}" if own else ""
            message = f"{variable} does not apply to {name}{where}"
            findings.append(Finding("settings.protocol", message, field=variable))
    if own is None:
        fixed = mode.treatment_protocol if mode is not None else None
        return (fixed or "native"), findings
    value, finding = _choice(env, own.variable, own.default, PROTOCOLS)
    return value, [*findings, *([finding] if finding else [])]


def _only_in(
    env: Mapping[str, str], variable: str, mode: str, modes: tuple[str, ...]
) -> Finding | None:
    """A finding when ``variable`` is set in a mode that does not take it."""
    if env.get(variable, "").strip() and mode not in modes:
        message = f"{variable} does not apply to {mode}; only {', '.join(modes)} take it"
        return Finding("settings.mode_setting", message, field=variable)
    return None


# Offline, the Mentor treatment consults the scripted provider under this name (test
# equipment, like every model name of the offline demo).
OFFLINE_MENTOR_MODEL = "scripted-mentor"


def _mentor_model(
    mode: str, env: Mapping[str, str], model: str, offline: bool
) -> tuple[str, Finding | None]:
    """MENTOR_MODEL: the model the Mentor treatment consults (mentor-handoff only).

    It must differ from the main model: the report tells mentor traffic from main traffic
    by model, and spec 002 requires at least one mentor-model request in the treatment.
    """
    if (finding := _only_in(env, "MENTOR_MODEL", mode, MENTOR_MODES)) is not None:
        return "", finding
    if mode not in MENTOR_MODES:
        return "", None
    value = env.get("MENTOR_MODEL", "").strip() or (OFFLINE_MENTOR_MODEL if offline else "")
    problem = None
    if not value:
        problem = f"{mode} needs the model its mentor consults"
    elif not _MODEL.match(value):
        problem = f"not a model slug: {value!r}"
    elif value == model:
        problem = "must differ from MODEL: mentor traffic is told apart from main traffic by model"
    if problem is not None:
        return "", Finding("settings.mentor_model", problem, field="MENTOR_MODEL")
    return value, None


def _baseline(mode: str, env: Mapping[str, str]) -> tuple[str, Finding | None]:
    """BASELINE: the published control hpatch-only imports (a baseline file that
    ``hpbench baseline export`` wrote, or a finished paired or control-only run
    directory). Whether it matches the run is checked once the run's instructions exist
    (``hpbench baseline import``)."""
    if (finding := _only_in(env, "BASELINE", mode, IMPORTING_MODES)) is not None:
        return "", finding
    if mode not in IMPORTING_MODES:
        return "", None
    raw = env.get("BASELINE", "").strip()
    if not raw:
        message = (
            f"{mode} imports its control: set BASELINE to a baseline file "
            "(hpbench baseline export) or a finished paired or control-only run directory"
        )
        return "", Finding("settings.baseline", message, field="BASELINE")
    path = Path(raw).resolve()
    if not path.exists():
        return "", Finding(
            "settings.baseline", f"{path}: no such file or directory", field="BASELINE"
        )
    return str(path), None


def _exact_evidence(mode: str, env: Mapping[str, str]) -> tuple[bool, Finding | None]:
    """HPATCH_EXACT_EVIDENCE (spec 004): default off, accepted by hpatch-only and
    hpatch-diagnostic only."""
    if (finding := _only_in(env, "HPATCH_EXACT_EVIDENCE", mode, EXACT_EVIDENCE_MODES)) is not None:
        return False, finding
    value, finding = _choice(env, "HPATCH_EXACT_EVIDENCE", "false", ("true", "false"))
    return value == "true", finding


def _report_issue(mode: str, env: Mapping[str, str]) -> tuple[bool, Finding | None]:
    """HPATCH_REPORT_ISSUE (spec 004): whether the Hpatch routers offer ``report_issue``
    and run the diagnose hook; on by default except in paired (spec 002's default preset),
    taken only by modes that run an Hpatch router."""
    modes = tuple(REPORT_ISSUE_DEFAULTS)
    if (finding := _only_in(env, "HPATCH_REPORT_ISSUE", mode, modes)) is not None:
        return False, finding
    default = REPORT_ISSUE_DEFAULTS.get(mode, False)
    value, finding = _choice(env, "HPATCH_REPORT_ISSUE", str(default).lower(), ("true", "false"))
    return value == "true", finding


def settings_from_env(mode: str, env: Mapping[str, str]) -> Settings:
    """Check and normalize the settings of a run of ``mode``.

    Raises:
        ContractError: with one finding per bad setting, each naming the variable.
    """
    findings: list[Finding] = []

    def keep(result: tuple[Any, Finding | None]) -> Any:
        value, finding = result
        if finding is not None:
            findings.append(finding)
        return value

    if mode not in KNOWN_MODES:
        findings.append(Finding("settings.mode", f"unknown mode {mode!r}", field="MODE"))
    measuring = MODES.get(mode)
    arms = tuple(arm.value for arm in measuring.fresh) if measuring else ()
    task = env.get("TASK", "").strip() or "kv-rangestream"
    model = env.get("MODEL", "").strip() or "gpt-6-astra"
    if not _MODEL.match(model):
        findings.append(Finding("settings.model", f"not a model slug: {model!r}", field="MODEL"))
    efforts = tuple(effort.value for effort in ReasoningEffort)
    effort = keep(_choice(env, "EFFORT", "medium", efforts))
    repetitions = keep(_integer(env, "REPETITIONS", 1, 1, MAX_REPETITIONS))
    if measuring is not None and measuring.single_attempt and repetitions != 1:
        findings.append(
            Finding("settings.repetitions", f"{mode} runs exactly one attempt", field="REPETITIONS")
        )
    timeout = keep(_integer(env, "AGENT_TIMEOUT", 1800, 30, 14_400))
    provider, offline, provider_findings = _provider(env)
    findings += provider_findings
    images, image_findings = _router_images(env, offline)
    findings += image_findings
    if measuring is not None and mode not in FRESH_CONTROL_MODES:
        # No control router runs: its image would reach nothing.
        findings += filter(None, [_only_in(env, "CONTROL_ROUTER_IMAGE", mode, FRESH_CONTROL_MODES)])
    credential, auth_file, credential_findings = _credential(env, offline)
    findings += credential_findings
    ca_bundle = keep(_ca_bundle(env, offline))
    enforce = keep(_choice(env, "BENCHMARK_ENFORCE_NO_EDIT_LOOPS", "true", ("true", "false")))
    protocol, protocol_findings = _mode_protocol(mode, measuring, env)
    findings += protocol_findings
    mentor_model = keep(_mentor_model(mode, env, model, offline))
    baseline = keep(_baseline(mode, env))
    exact_evidence = keep(_exact_evidence(mode, env))
    report_issue = keep(_report_issue(mode, env))
    # Every container the agent's code runs in (its agent, the grader) is capped, so
    # one arm's fork bomb or memory hog fails that attempt and starves nothing else.
    limits = {
        "agent_memory": keep(_memory(env, "AGENT_MEMORY", "4g")),
        "agent_cpus": keep(_cpus(env, "AGENT_CPUS", "1")),
        "agent_pids": keep(_integer(env, "AGENT_PIDS", 1024, 64, 65_536)),
        "agent_runtime": keep(_choice(env, "AGENT_RUNTIME", "runc", AGENT_RUNTIMES)),
        "grader_memory": keep(_memory(env, "GRADER_MEMORY", "4g")),
        "grader_cpus": keep(_cpus(env, "GRADER_CPUS", "1")),
        "grader_pids": keep(_integer(env, "GRADER_PIDS", 1024, 64, 65_536)),
    }
    if findings:
        raise ContractError("refusing to start: bad settings", findings)
    return Settings(
        mode=mode,
        arms=arms,
        task=task,
        model=model,
        effort=effort,
        repetitions=repetitions,
        agent_timeout_seconds=timeout,
        provider=provider,
        offline_demo=offline,
        control_router_image=images["control"],
        hpatch_router_image=images["hpatch"],
        treatment_model_protocol=protocol,
        mentor_model=mentor_model,
        baseline=baseline,
        exact_evidence=exact_evidence,
        report_issue=report_issue,
        credential=credential,
        auth_file=auth_file,
        provider_ca_bundle=ca_bundle,
        enforce_no_edit_loops=enforce == "true",
        # The one pin of the Codex version: contrib/codex/pins.toml (images and
        # provisioning read it too).
        codex_version=load_pins(default_pins_path()).pins.codex_version,
        **limits,
    )
