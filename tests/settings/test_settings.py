"""Run settings: defaults, and every bad setting refused by name before anything starts."""

from __future__ import annotations

import pytest

from hpbench.errors import ContractError
from hpbench.settings import settings_from_env


class TestDefaults:
    def test_default_preset(self) -> None:
        """No settings: paired, gpt-6-astra, medium, one repetition, offline demo."""
        settings = settings_from_env("paired", {})
        assert ("control", "hpatch") == settings.arms
        assert ("gpt-6-astra", "medium", 1) == (
            settings.model,
            settings.effort,
            settings.repetitions,
        )
        assert ("replay", True) == (settings.provider, settings.offline_demo)
        assert settings.enforce_no_edit_loops

    def test_control_only_has_one_arm(self) -> None:
        """control-only schedules the control arm alone."""
        assert ("control",) == settings_from_env("control-only", {}).arms

    def test_real_provider_with_key(self) -> None:
        """A URL and a key make a real (not demo) run."""
        env = {
            "PROVIDER": "https://models.example.invalid/v1",
            "HPBENCH_API_KEY": "sk-secret-value",
        }
        settings = settings_from_env("paired", env)
        assert not settings.offline_demo
        assert "sk-secret-value" not in str(settings.to_json())


@pytest.mark.parametrize(
    ("mode", "env", "field", "text"),
    [
        ("paired", {"REPETITIONS": "0"}, "REPETITIONS", "1 to 16"),
        ("paired", {"REPETITIONS": "two"}, "REPETITIONS", "whole number"),
        ("paired", {"REPETITIONS": "17"}, "REPETITIONS", "1 to 16"),
        ("control-only", {"REPETITIONS": "2"}, "REPETITIONS", "exactly one"),
        ("paired", {"AGENT_TIMEOUT": "5"}, "AGENT_TIMEOUT", "30 to 14400"),
        ("paired", {"EFFORT": "max"}, "EFFORT", "medium"),
        ("paired", {"MODEL": "gpt 6"}, "MODEL", "model slug"),
        ("paired", {"CONTROL_ROUTER_IMAGE": "Bad Image"}, "CONTROL_ROUTER_IMAGE", "image"),
        ("paired", {"PROVIDER": "ftp://x"}, "PROVIDER", "http(s) URL"),
        ("paired", {"PROVIDER": "https://p.example.invalid/v1"}, "PROVIDER", "API key"),
        ("paired", {"HPBENCH_API_KEY": "k"}, "PROVIDER", "names no endpoint"),
        (
            "paired",
            {"BENCHMARK_ENFORCE_NO_EDIT_LOOPS": "maybe"},
            "BENCHMARK_ENFORCE_NO_EDIT_LOOPS",
            "true",
        ),
        ("ctp-only", {}, "MODE", "not available"),
        ("sideways", {}, "MODE", "unknown mode"),
    ],
)
def test_refuses_bad_setting(mode: str, env: dict[str, str], field: str, text: str) -> None:
    """Each bad setting is a finding that names its variable."""
    with pytest.raises(ContractError) as caught:
        settings_from_env(mode, env)
    matching = [f for f in caught.value.findings if f.field == field]
    assert matching, [str(f) for f in caught.value.findings]
    assert text in matching[0].message


def test_reports_all_bad_settings_at_once() -> None:
    """Three bad settings give three findings."""
    with pytest.raises(ContractError) as caught:
        settings_from_env("paired", {"REPETITIONS": "x", "EFFORT": "y", "MODEL": "z z"})
    assert {"REPETITIONS", "EFFORT", "MODEL"} == {f.field for f in caught.value.findings}
