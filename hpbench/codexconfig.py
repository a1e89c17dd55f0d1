"""The offline-safe Codex CLI configuration, generated per arm.

Codex 0.169 reaches outside by default: plugin sync (``git ls-remote`` of a
plugins repository), apps and analytics hosts, an update check, and, when a
config loses ``model_provider``, the OpenAI API itself. Each arm's agent
therefore gets a generated ``config.toml`` (``$CODEX_HOME/config.toml``) that:

- names one custom provider (``model_provider``) whose ``base_url`` is the arm's
  router and whose ``wire_api`` is ``responses``;
- turns off plugins, apps, goals, analytics, multi-agent, web search and the
  update check;
- bounds retries (``request_max_retries``, ``stream_max_retries``, the stream idle
  timeout, and ``features.unbounded_connection_retries = false`` so that an
  unreachable router fails instead of "waiting for network" forever);
- optionally points ``model_instructions_file`` at the arm's base instructions.

Every rendered text is parsed back and checked by :func:`check_config` before
it is returned, so no code path can produce a config without ``model_provider``
or with a provider that leads to OpenAI. The file passes ``codex --strict-config``.
"""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import attrs

from hpbench._jsonio import write_atomic
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.rundir import Arm

CODE = "codex.config"
MAX_RETRIES = 10
MIN_IDLE_MS = 1_000
MAX_IDLE_MS = 600_000
BUILTIN_PROVIDERS = frozenset({"openai", "oss", "ollama", "lmstudio", "ollama-chat"})
FORBIDDEN_HOST_SUFFIXES = ("openai.com", "chatgpt.com", "oaistatic.com", "oaiusercontent.com")
FORBIDDEN_KEYS = frozenset(
    {"chatgpt_base_url", "openai_base_url", "mcp_servers", "experimental_instructions_file"}
)
FEATURES_OFF = ("plugins", "apps", "goals", "unbounded_connection_retries")
# Variables the commands Codex runs never inherit: Codex 0.169 passes its whole
# environment to them, the API key included, and a command's output lands in the
# evidence. (A command can still read the key from Codex's own process; the run's
# evidence is scrubbed of it: hpbench/credentials.py.)
SHELL_EXCLUDES = ("*KEY*", "*SECRET*", "*TOKEN*")


class ReasoningEffort(enum.Enum):
    """``model_reasoning_effort`` values Codex accepts."""

    MINIMAL = "minimal"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"


def forbidden_host(host: str) -> bool:
    """Whether ``host`` belongs to OpenAI or ChatGPT (never a benchmark provider)."""
    host = host.lower().rstrip(".")
    return any(host == suffix or host.endswith("." + suffix) for suffix in FORBIDDEN_HOST_SUFFIXES)


def _check_router_url(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    problem = router_url_problem(value)
    if problem is not None:
        msg = f"{attribute.name}: {problem}"
        raise ValueError(msg)


def router_url_problem(value: str) -> str | None:
    """Why ``value`` cannot be a provider ``base_url``, or None when it can."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        return f"expected an http(s) URL, got {value!r}"
    if not parts.hostname:
        return f"the URL names no host: {value!r}"
    if parts.username or parts.password or parts.query or parts.fragment:
        return "the URL must not carry credentials, a query or a fragment"
    if forbidden_host(parts.hostname):
        return f"{parts.hostname} is an OpenAI host; the provider must be the arm's router"
    return None


def _check_absolute(_: Any, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is not None and not PurePosixPath(value).is_absolute():
        msg = f"{attribute.name} must be an absolute path (Codex resolves it as given)"
        raise ValueError(msg)


def _check_provider_id(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if not value or not value.replace("_", "").replace("-", "").isalnum():
        msg = f"{attribute.name} must be a non-empty [A-Za-z0-9_-] name, got {value!r}"
        raise ValueError(msg)
    if value in BUILTIN_PROVIDERS:
        msg = f"{attribute.name} {value!r} is a built-in provider; use a custom one"
        raise ValueError(msg)


def _check_env_key(_: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if not value or not value.replace("_", "").isalnum() or value[0].isdigit():
        msg = f"{attribute.name} must be an environment variable name, got {value!r}"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class CodexConfig:
    """Everything that differs between generated configs; the safety settings are fixed."""

    arm: Arm
    router_url: str = attrs.field(validator=_check_router_url)
    model: str = attrs.field(default="gpt-6-astra", validator=attrs.validators.min_len(1))
    reasoning_effort: ReasoningEffort | None = ReasoningEffort.MEDIUM
    provider_id: str = attrs.field(default="hpbench", validator=_check_provider_id)
    env_key: str = attrs.field(default="HPBENCH_API_KEY", validator=_check_env_key)
    # With a Codex auth.json (CODEX_AUTH_FILE) instead of an environment key, Codex sends
    # the file's API key to the provider (``requires_openai_auth``) and no env_key is set.
    auth_file: bool = False
    model_instructions_file: str | None = attrs.field(default=None, validator=_check_absolute)
    model_catalog_json: str | None = attrs.field(default=None, validator=_check_absolute)
    request_max_retries: int = attrs.field(
        default=2, validator=[attrs.validators.ge(0), attrs.validators.le(MAX_RETRIES)]
    )
    stream_max_retries: int = attrs.field(
        default=2, validator=[attrs.validators.ge(0), attrs.validators.le(MAX_RETRIES)]
    )
    stream_idle_timeout_ms: int = attrs.field(
        default=300_000,
        validator=[attrs.validators.ge(MIN_IDLE_MS), attrs.validators.le(MAX_IDLE_MS)],
    )


def _toml_string(value: str) -> str:
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
    escapes["\r"] = "\\r"
    out = []
    for char in value:
        if char in escapes:
            out.append(escapes[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    msg = f"no TOML form for {type(value).__name__}"
    raise TypeError(msg)


def config_tables(config: CodexConfig) -> dict[str, Any]:
    """The config as nested tables (what :func:`render_config` writes)."""
    top: dict[str, Any] = {"model": config.model, "model_provider": config.provider_id}
    if config.reasoning_effort is not None:
        top["model_reasoning_effort"] = config.reasoning_effort.value
    if config.model_instructions_file is not None:
        top["model_instructions_file"] = config.model_instructions_file
    if config.model_catalog_json is not None:
        top["model_catalog_json"] = config.model_catalog_json
    top["web_search"] = "disabled"
    top["check_for_update_on_startup"] = False
    top["features"] = dict.fromkeys(FEATURES_OFF, False)
    top["shell_environment_policy"] = {"exclude": list(SHELL_EXCLUDES)}
    top["agents"] = {"enabled": False}
    top["analytics"] = {"enabled": False}
    top["model_providers"] = {
        config.provider_id: {
            "name": f"hpbench {config.arm.value} router",
            "base_url": config.router_url,
            "wire_api": "responses",
            **({"requires_openai_auth": True} if config.auth_file else {"env_key": config.env_key}),
            "request_max_retries": config.request_max_retries,
            "stream_max_retries": config.stream_max_retries,
            "stream_idle_timeout_ms": config.stream_idle_timeout_ms,
        }
    }
    return top


def _lines(table: dict[str, Any], prefix: str) -> Iterator[str]:
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    for key, value in scalars.items():
        yield f"{key} = {_toml_value(value)}"
    for key, value in tables.items():
        name = f"{prefix}{key}"
        if any(not isinstance(v, dict) for v in value.values()):
            yield ""
            yield f"[{name}]"
        yield from _lines(value, f"{name}.")


def render_config(config: CodexConfig) -> str:
    """The ``config.toml`` text, checked by :func:`check_config` before it is returned."""
    header = [
        f"# Codex CLI config for the {config.arm.value} arm, generated by `hpbench codex-config`.",
        "# Offline-safe: the only provider is the arm's router. Do not edit by hand.",
    ]
    text = "\n".join([*header, *_lines(config_tables(config), "")]) + "\n"
    check_config(text, source="<generated>")
    return text


def _config_findings(data: dict[str, Any], source: str) -> list[Finding]:
    findings: list[Finding] = []

    def add(field: str, message: str) -> None:
        findings.append(Finding(code=CODE, message=message, file=source, field=field))

    provider_id = data.get("model_provider")
    providers = data.get("model_providers")
    if not isinstance(provider_id, str) or not provider_id:
        add("$.model_provider", "missing: without it Codex falls back to the OpenAI API")
    elif provider_id in BUILTIN_PROVIDERS:
        add("$.model_provider", f"{provider_id!r} is a built-in provider")
    elif not isinstance(providers, dict) or not isinstance(providers.get(provider_id), dict):
        add(f"$.model_providers.{provider_id}", "the named provider is not defined")
    else:
        for field, message in _provider_problems(providers[provider_id]):
            add(f"$.model_providers.{provider_id}.{field}", message)
    if isinstance(providers, dict):
        for name in providers:
            if name != provider_id:
                add(f"$.model_providers.{name}", "only the arm's provider may be defined")
    for key in sorted(FORBIDDEN_KEYS & data.keys()):
        add(f"$.{key}", "not allowed in an offline-safe config")
    expected: list[tuple[str, Any, Any]] = [
        ("$.web_search", data.get("web_search"), "disabled"),
        ("$.check_for_update_on_startup", data.get("check_for_update_on_startup"), False),
        ("$.agents.enabled", _get(data, "agents", "enabled"), False),
        ("$.analytics.enabled", _get(data, "analytics", "enabled"), False),
        (
            "$.shell_environment_policy.exclude",
            _get(data, "shell_environment_policy", "exclude"),
            list(SHELL_EXCLUDES),
        ),
    ]
    expected += [(f"$.features.{n}", _get(data, "features", n), False) for n in FEATURES_OFF]
    for field, actual, wanted in expected:
        if type(actual) is not type(wanted) or actual != wanted:
            add(field, f"must be {_toml_value(wanted)}, got {actual!r}")
    return findings


def _provider_problems(provider: dict[str, Any]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    base_url = provider.get("base_url")
    problem = router_url_problem(base_url) if isinstance(base_url, str) else "base_url missing"
    if problem is not None:
        problems.append(("base_url", problem))
    if provider.get("wire_api") != "responses":
        problems.append(("wire_api", "must be 'responses'"))
    # Exactly one credential source: an environment key or the auth.json's API key.
    env_key, auth_file = provider.get("env_key"), provider.get("requires_openai_auth")
    if (isinstance(env_key, str) and bool(env_key)) == (auth_file is True):
        problems.append(("env_key", "exactly one of env_key or requires_openai_auth = true"))
    for key in ("request_max_retries", "stream_max_retries"):
        value = provider.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_RETRIES:
            problems.append((key, f"must be set, 0..{MAX_RETRIES}"))
    idle = provider.get("stream_idle_timeout_ms")
    if (
        not isinstance(idle, int)
        or isinstance(idle, bool)
        or not MIN_IDLE_MS <= idle <= MAX_IDLE_MS
    ):
        problems.append(("stream_idle_timeout_ms", f"must be set, {MIN_IDLE_MS}..{MAX_IDLE_MS}"))
    return problems


def _get(data: dict[str, Any], table: str, key: str) -> Any:
    value = data.get(table)
    return value.get(key) if isinstance(value, dict) else None


def check_config(text: str, *, source: str = "the Codex config") -> dict[str, Any]:
    """Parse a Codex config and prove it offline-safe; raise :class:`ContractError` if not."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        finding = Finding(code=CODE, message=f"not TOML: {exc}", file=source)
        raise ContractError(f"{source}: not a Codex config", [finding]) from exc
    findings = _config_findings(data, source)
    if findings:
        raise ContractError(f"{source}: not an offline-safe Codex config", findings)
    return data


def write_config(config: CodexConfig, path: Path) -> str:
    """Render, check and write ``path`` atomically (mode 0600); return the text."""
    text = render_config(config)
    write_atomic(path, text)
    return text
