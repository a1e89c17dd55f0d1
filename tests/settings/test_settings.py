"""Run settings: defaults, and every bad setting refused by name before anything starts."""

from __future__ import annotations

import attrs
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

    def test_containment_limits(self) -> None:
        """The agent and grader caps default to 4g, one core and 1024 processes, under runc,
        and each can be set."""
        default = settings_from_env("paired", {})
        assert ("4g", "1", 1024, "runc") == (
            default.agent_memory,
            default.agent_cpus,
            default.agent_pids,
            default.agent_runtime,
        )
        assert ("4g", "1", 1024) == (
            default.grader_memory,
            default.grader_cpus,
            default.grader_pids,
        )
        env = {
            "AGENT_MEMORY": "512M",
            "AGENT_CPUS": "0.5",
            "AGENT_PIDS": "256",
            "AGENT_RUNTIME": "runsc",
            "GRADER_MEMORY": "2g",
            "GRADER_CPUS": "2",
            "GRADER_PIDS": "300",
        }
        chosen = settings_from_env("paired", env)
        assert ("512m", "0.5", 256, "runsc") == (
            chosen.agent_memory,
            chosen.agent_cpus,
            chosen.agent_pids,
            chosen.agent_runtime,
        )
        assert ("2g", "2", 300) == (chosen.grader_memory, chosen.grader_cpus, chosen.grader_pids)

    def test_router_images(self) -> None:
        """Offline both arms default to the reference router's image (tagged as built); the
        control arm defaults to the treatment's image, which it runs in passthrough mode."""
        offline = settings_from_env("paired", {"HPBENCH_IMAGE_TAG": "ci"})
        assert ("hpbench-router:ci", "hpbench-router:ci") == (
            offline.control_router_image,
            offline.hpatch_router_image,
        )
        real = settings_from_env(
            "paired",
            {
                "PROVIDER": "https://p.example.invalid/v1",
                "OPENAI_API_KEY": "k",
                "HPATCH_ROUTER_IMAGE": "example/router:1",
            },
        )
        assert ("example/router:1", "example/router:1") == (
            real.control_router_image,
            real.hpatch_router_image,
        )
        chosen = settings_from_env("paired", {"CONTROL_ROUTER_IMAGE": "example/stock:2"})
        assert ("example/stock:2", "hpbench-router:local") == (
            chosen.control_router_image,
            chosen.hpatch_router_image,
        )

    def test_the_treatment_protocol(self) -> None:
        """Paired treatment is Hpatch with CTP/2 (spec 002); native is the documented
        choice."""
        assert "ctp2" == settings_from_env("paired", {}).treatment_model_protocol
        chosen = settings_from_env("paired", {"TREATMENT_MODEL_PROTOCOL": "native"})
        assert "native" == chosen.treatment_model_protocol

    def test_the_diagnostic_protocol(self) -> None:
        """hpatch-diagnostic runs the treatment alone, on DIAGNOSTIC_MODEL_PROTOCOL (native
        by default, ctp2 on request)."""
        diagnostic = settings_from_env("hpatch-diagnostic", {})
        assert (("hpatch",), "native") == (diagnostic.arms, diagnostic.treatment_model_protocol)
        chosen = settings_from_env("hpatch-diagnostic", {"DIAGNOSTIC_MODEL_PROTOCOL": "ctp2"})
        assert "ctp2" == chosen.treatment_model_protocol

    @pytest.mark.parametrize(
        ("mode", "env", "arms", "protocol"),
        [
            ("ctp-only", {}, ("native", "ctp"), "ctp2"),
            ("mentor-handoff", {}, ("hpatch", "mentor"), "native"),
            ("mentor-handoff", {"MENTOR_MODEL_PROTOCOL": "ctp2"}, ("hpatch", "mentor"), "ctp2"),
            ("hpatch-only", {"BASELINE": "/"}, ("hpatch",), "native"),
        ],
    )
    def test_each_mode_schedules_its_arms(self, mode, env, arms, protocol) -> None:
        """Each mode runs its fresh arms, baseline first (hpatch-only's control is
        imported), on its protocol."""
        chosen = settings_from_env(mode, env)
        assert (arms, protocol) == (chosen.arms, chosen.treatment_model_protocol)

    def test_the_mentor_model(self) -> None:
        """mentor-handoff keeps the mentor model apart from the main one; offline, the
        scripted provider's mentor by default."""
        assert "scripted-mentor" == settings_from_env("mentor-handoff", {}).mentor_model
        chosen = settings_from_env("mentor-handoff", {"MENTOR_MODEL": "gpt-6-mentor"})
        assert ("gpt-6-astra", "gpt-6-mentor") == (chosen.model, chosen.mentor_model)
        assert "" == settings_from_env("paired", {}).mentor_model

    def test_the_baseline_and_exact_evidence(self, tmp_path) -> None:
        """hpatch-only keeps its baseline's resolved path; exact evidence is off by default
        and on only when asked, in the two modes that take it."""
        only = settings_from_env("hpatch-only", {"BASELINE": str(tmp_path)})
        assert (str(tmp_path.resolve()), False) == (only.baseline, only.exact_evidence)
        for mode, env in (("hpatch-only", {"BASELINE": "/"}), ("hpatch-diagnostic", {})):
            on = settings_from_env(mode, {**env, "HPATCH_EXACT_EVIDENCE": "true"})
            assert on.exact_evidence

    def test_control_only_has_one_arm(self) -> None:
        """control-only schedules the control arm alone."""
        assert ("control",) == settings_from_env("control-only", {}).arms

    def test_real_provider_with_key(self) -> None:
        """A URL and a key make a real (not demo) run."""
        env = {
            "PROVIDER": "https://models.example.invalid/v1",
            "HPBENCH_API_KEY": "sk-secret-value",
            "HPATCH_ROUTER_IMAGE": "example/router:1",
        }
        settings = settings_from_env("paired", env)
        assert not settings.offline_demo
        assert "sk-secret-value" not in str(attrs.asdict(settings))


@pytest.mark.parametrize(
    ("mode", "env", "field", "text"),
    [
        ("paired", {"REPETITIONS": "0"}, "REPETITIONS", "1 to 16"),
        ("paired", {"REPETITIONS": "two"}, "REPETITIONS", "whole number"),
        ("paired", {"REPETITIONS": "17"}, "REPETITIONS", "1 to 16"),
        ("control-only", {"REPETITIONS": "2"}, "REPETITIONS", "exactly one"),
        ("hpatch-diagnostic", {"REPETITIONS": "2"}, "REPETITIONS", "exactly one"),
        (
            "hpatch-diagnostic",
            {"DIAGNOSTIC_MODEL_PROTOCOL": "ctp3"},
            "DIAGNOSTIC_MODEL_PROTOCOL",
            "ctp2, native",
        ),
        (
            "hpatch-diagnostic",
            {"TREATMENT_MODEL_PROTOCOL": "ctp2"},
            "TREATMENT_MODEL_PROTOCOL",
            "takes DIAGNOSTIC_MODEL_PROTOCOL",
        ),
        (
            "paired",
            {"DIAGNOSTIC_MODEL_PROTOCOL": "native"},
            "DIAGNOSTIC_MODEL_PROTOCOL",
            "does not apply to paired",
        ),
        (
            "control-only",
            {"DIAGNOSTIC_MODEL_PROTOCOL": "ctp2"},
            "DIAGNOSTIC_MODEL_PROTOCOL",
            "does not apply to control-only",
        ),
        ("paired", {"AGENT_TIMEOUT": "5"}, "AGENT_TIMEOUT", "30 to 14400"),
        ("paired", {"EFFORT": "max"}, "EFFORT", "medium"),
        ("paired", {"MODEL": "gpt 6"}, "MODEL", "model slug"),
        (
            "paired",
            {"CONTROL_ROUTER_IMAGE": "Bad Image"},
            "CONTROL_ROUTER_IMAGE",
            "image reference",
        ),
        ("paired", {"HPATCH_ROUTER_IMAGE": "Bad Image"}, "HPATCH_ROUTER_IMAGE", "image reference"),
        (
            "paired",
            {"PROVIDER": "https://p.example.invalid/v1", "HPBENCH_API_KEY": "k"},
            "HPATCH_ROUTER_IMAGE",
            "name its image",
        ),
        (
            "paired",
            {
                "PROVIDER": "https://p.example.invalid/v1",
                "HPBENCH_API_KEY": "k",
                "HPATCH_ROUTER_IMAGE": "hpbench-router:local",
            },
            "HPATCH_ROUTER_IMAGE",
            "never measures it",
        ),
        (
            "paired",
            {
                "PROVIDER": "https://p.example.invalid/v1",
                "HPBENCH_API_KEY": "k",
                "HPATCH_ROUTER_IMAGE": "example/router:1",
                "CONTROL_ROUTER_IMAGE": "hpbench-router:local",
            },
            "CONTROL_ROUTER_IMAGE",
            "never measures it",
        ),
        ("paired", {"PROVIDER": "ftp://x"}, "PROVIDER", "http(s) URL"),
        ("paired", {"PROVIDER": "https://p.example.invalid/v1"}, "PROVIDER", "API key"),
        ("paired", {"HPBENCH_API_KEY": "k"}, "PROVIDER", "names no endpoint"),
        (
            "paired",
            {"BENCHMARK_ENFORCE_NO_EDIT_LOOPS": "maybe"},
            "BENCHMARK_ENFORCE_NO_EDIT_LOOPS",
            "true",
        ),
        ("paired", {"TREATMENT_MODEL_PROTOCOL": "ctp3"}, "TREATMENT_MODEL_PROTOCOL", "ctp2"),
        ("paired", {"AGENT_MEMORY": "4"}, "AGENT_MEMORY", "unit"),
        ("paired", {"AGENT_MEMORY": "32m"}, "AGENT_MEMORY", "at least 64m"),
        ("paired", {"AGENT_MEMORY": "-1g"}, "AGENT_MEMORY", "size"),
        ("paired", {"GRADER_MEMORY": "lots"}, "GRADER_MEMORY", "size"),
        ("paired", {"AGENT_CPUS": "0"}, "AGENT_CPUS", "0.1 to 256"),
        ("paired", {"AGENT_CPUS": "1,5"}, "AGENT_CPUS", "number of cores"),
        ("paired", {"GRADER_CPUS": "nan"}, "GRADER_CPUS", "number of cores"),
        ("paired", {"AGENT_PIDS": "10"}, "AGENT_PIDS", "64 to 65536"),
        ("paired", {"GRADER_PIDS": "-5"}, "GRADER_PIDS", "whole number"),
        ("paired", {"AGENT_RUNTIME": "kata"}, "AGENT_RUNTIME", "runc, runsc"),
        (
            "ctp-only",
            {"TREATMENT_MODEL_PROTOCOL": "native"},
            "TREATMENT_MODEL_PROTOCOL",
            "ctp-only",
        ),
        (
            "control-only",
            {"TREATMENT_MODEL_PROTOCOL": "ctp2"},
            "TREATMENT_MODEL_PROTOCOL",
            "does not apply to control-only",
        ),
        (
            "hpatch-only",
            {"TREATMENT_MODEL_PROTOCOL": "ctp2", "BASELINE": "/"},
            "TREATMENT_MODEL_PROTOCOL",
            "does not apply to hpatch-only",
        ),
        (
            "paired",
            {"MENTOR_MODEL_PROTOCOL": "ctp2"},
            "MENTOR_MODEL_PROTOCOL",
            "paired takes TREATMENT_MODEL_PROTOCOL",
        ),
        ("mentor-handoff", {"MENTOR_MODEL_PROTOCOL": "ctp9"}, "MENTOR_MODEL_PROTOCOL", "ctp2"),
        (
            "mentor-handoff",
            {"TREATMENT_MODEL_PROTOCOL": "ctp2"},
            "TREATMENT_MODEL_PROTOCOL",
            "takes MENTOR_MODEL_PROTOCOL",
        ),
        ("paired", {"MENTOR_MODEL": "gpt-6-mentor"}, "MENTOR_MODEL", "only mentor-handoff"),
        (
            "preparation-only",
            {"TREATMENT_MODEL_PROTOCOL": "ctp2"},
            "TREATMENT_MODEL_PROTOCOL",
            "does not apply to preparation-only",
        ),
        ("mentor-handoff", {"MENTOR_MODEL": "gpt-6-astra"}, "MENTOR_MODEL", "differ from MODEL"),
        ("mentor-handoff", {"MENTOR_MODEL": "a mentor"}, "MENTOR_MODEL", "model slug"),
        (
            "mentor-handoff",
            {
                "PROVIDER": "https://models.example.invalid/v1",
                "HPBENCH_API_KEY": "k",
                "HPATCH_ROUTER_IMAGE": "example/router:1",
            },
            "MENTOR_MODEL",
            "needs the model its mentor consults",
        ),
        ("hpatch-only", {}, "BASELINE", "imports its control"),
        ("hpatch-only", {"BASELINE": "/nonexistent/baseline.json"}, "BASELINE", "no such file"),
        ("hpatch-only", {"BASELINE": "/", "REPETITIONS": "2"}, "REPETITIONS", "exactly one"),
        ("paired", {"BASELINE": "/"}, "BASELINE", "only hpatch-only"),
        (
            "paired",
            {"HPATCH_EXACT_EVIDENCE": "true"},
            "HPATCH_EXACT_EVIDENCE",
            "only hpatch-only, hpatch-diagnostic",
        ),
        ("ctp-only", {"HPATCH_EXACT_EVIDENCE": "false"}, "HPATCH_EXACT_EVIDENCE", "ctp-only"),
        ("hpatch-diagnostic", {"HPATCH_EXACT_EVIDENCE": "yes"}, "HPATCH_EXACT_EVIDENCE", "true"),
        ("ctp-only", {"CONTROL_ROUTER_IMAGE": "x/r:1"}, "CONTROL_ROUTER_IMAGE", "ctp-only"),
        (
            "hpatch-diagnostic",
            {"CONTROL_ROUTER_IMAGE": "x/r:1"},
            "CONTROL_ROUTER_IMAGE",
            "only paired, control-only",
        ),
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
