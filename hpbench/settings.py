"""Run settings from the environment, checked before anything starts.

bench.sh is configured by environment variables (and the mode as its first
argument). Every bad value is refused here, each finding naming the variable,
so a run never starts with a setting it would only trip over an hour later.
The normalized settings become the run's ``run.json``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

from hpbench.codexconfig import ReasoningEffort, forbidden_host
from hpbench.errors import ContractError
from hpbench.findings import Finding

RUN_SCHEMA = "hpbench.run.v1"
CODEX_VERSION = "0.169.0"
DEFAULT_ROUTER_IMAGE = "hpbench-router:local"
RUNNING_MODES = {"paired": ("control", "hpatch"), "control-only": ("control",)}
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
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9._-]{1,128})?(@sha256:[0-9a-f]{64})?$")
MAX_REPETITIONS = 16


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
    control_router_image: str
    hpatch_router_image: str
    provider: str
    offline_demo: bool
    enforce_no_edit_loops: bool
    codex_version: str = CODEX_VERSION

    def to_json(self) -> dict[str, Any]:
        """The run.json settings block."""
        return {"schema": RUN_SCHEMA, **attrs.asdict(self)}


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


def _provider(env: Mapping[str, str]) -> tuple[str, bool, list[Finding]]:
    """``replay`` (offline demo) or a real endpoint URL that comes with an API key."""
    has_key = any(env.get(name) for name in API_KEY_VARIABLES)
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
                f"a real provider needs an API key in {' or '.join(API_KEY_VARIABLES)}",
                field="PROVIDER",
            )
        )
    if parts.hostname and forbidden_host(parts.hostname) and parts.scheme != "https":
        findings.append(
            Finding("settings.provider", "a hosted provider needs https", field="PROVIDER")
        )
    return value, False, findings


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
    if mode == "control-only" and repetitions != 1:
        findings.append(
            Finding(
                "settings.repetitions", "control-only runs exactly one attempt", field="REPETITIONS"
            )
        )
    timeout = keep(_integer(env, "AGENT_TIMEOUT", 1800, 30, 14_400))
    images = {}
    for arm in ("control", "hpatch"):
        name = f"{arm.upper()}_ROUTER_IMAGE"
        image = env.get(name, "").strip() or DEFAULT_ROUTER_IMAGE
        if not _IMAGE.match(image):
            findings.append(
                Finding("settings.image", f"not an image reference: {image!r}", field=name)
            )
        images[arm] = image
    provider, offline, provider_findings = _provider(env)
    findings += provider_findings
    enforce = keep(_choice(env, "BENCHMARK_ENFORCE_NO_EDIT_LOOPS", "true", ("true", "false")))
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
        control_router_image=images["control"],
        hpatch_router_image=images["hpatch"],
        provider=provider,
        offline_demo=offline,
        enforce_no_edit_loops=enforce == "true",
    )
