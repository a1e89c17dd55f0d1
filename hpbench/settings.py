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

RUNNING_MODES = {
    "paired": ("control", "hpatch"),
    "control-only": ("control",),
    "hpatch-diagnostic": ("hpatch",),
}
# Modes that run exactly one attempt (spec 002): no repetitions to choose.
SINGLE_ATTEMPT_MODES = ("control-only", "hpatch-diagnostic")
PREPARATION_MODES = {"preparation-only"}
KNOWN_MODES = (
    "paired",
    "control-only",
    "hpatch-only",
    "hpatch-diagnostic",
    "ctp-only",
    "mentor-handoff",
    "preparation-only",
)
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


def _treatment_protocol(mode: str, env: Mapping[str, str]) -> tuple[str, Finding | None]:
    """The treatment router's protocol: each mode's own setting, the other's refused.

    Paired treatment is Hpatch with CTP/2 (spec 002), native the documented choice
    (``TREATMENT_MODEL_PROTOCOL``). hpatch-diagnostic has its own setting,
    ``DIAGNOSTIC_MODEL_PROTOCOL`` (default native), which every other mode refuses by
    name; a setting that would reach nothing is refused rather than ignored.
    """
    diagnostic = mode == "hpatch-diagnostic"
    own, other = (
        ("DIAGNOSTIC_MODEL_PROTOCOL", "TREATMENT_MODEL_PROTOCOL")
        if diagnostic
        else ("TREATMENT_MODEL_PROTOCOL", "DIAGNOSTIC_MODEL_PROTOCOL")
    )
    if env.get(other, "").strip():
        where = "hpatch-diagnostic" if diagnostic else "it"
        message = f"{other} does not apply to {mode}; {where} takes {own}"
        return "", Finding("settings.protocol", message, field=other)
    return _choice(env, own, "native" if diagnostic else "ctp2", PROTOCOLS)


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
    elif mode not in RUNNING_MODES and mode not in PREPARATION_MODES:
        findings.append(
            Finding(
                "settings.mode", f"mode {mode!r} is not available in this version", field="MODE"
            )
        )
    arms = RUNNING_MODES.get(mode, ())
    task = env.get("TASK", "").strip() or "kv-rangestream"
    model = env.get("MODEL", "").strip() or "gpt-6-astra"
    if not _MODEL.match(model):
        findings.append(Finding("settings.model", f"not a model slug: {model!r}", field="MODEL"))
    efforts = tuple(effort.value for effort in ReasoningEffort)
    effort = keep(_choice(env, "EFFORT", "medium", efforts))
    repetitions = keep(_integer(env, "REPETITIONS", 1, 1, MAX_REPETITIONS))
    if mode in SINGLE_ATTEMPT_MODES and repetitions != 1:
        findings.append(
            Finding("settings.repetitions", f"{mode} runs exactly one attempt", field="REPETITIONS")
        )
    timeout = keep(_integer(env, "AGENT_TIMEOUT", 1800, 30, 14_400))
    provider, offline, provider_findings = _provider(env)
    findings += provider_findings
    images, image_findings = _router_images(env, offline)
    findings += image_findings
    credential, auth_file, credential_findings = _credential(env, offline)
    findings += credential_findings
    ca_bundle = keep(_ca_bundle(env, offline))
    enforce = keep(_choice(env, "BENCHMARK_ENFORCE_NO_EDIT_LOOPS", "true", ("true", "false")))
    protocol = keep(_treatment_protocol(mode, env))
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
        credential=credential,
        auth_file=auth_file,
        provider_ca_bundle=ca_bundle,
        enforce_no_edit_loops=enforce == "true",
        # The one pin of the Codex version: contrib/codex/pins.toml (images and
        # provisioning read it too).
        codex_version=load_pins(default_pins_path()).pins.codex_version,
        **limits,
    )
