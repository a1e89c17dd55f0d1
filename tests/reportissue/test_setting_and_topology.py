"""HPATCH_REPORT_ISSUE (spec 004): its defaults per mode, its refusals, what the plan hands
the shell, and the topology that installs the diagnose hook in every Hpatch router and
never in the control's."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpbench.errors import ContractError
from hpbench.issuereports.model import HOOK_DIRECTORY_VARIABLE, HOOK_PATH, REPORTS_PATH
from hpbench.modes import MODES, REPORT_ISSUE_DEFAULTS, reports_issues
from hpbench.plan import SHELL_VARIABLES
from hpbench.rundir import Arm
from hpbench.settings import settings_from_env

from ..rundir.test_modes import _command as compose_command

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("mode", "env", "default"),
    [
        # Spec 002's default preset has issue reporting off.
        ("paired", {}, False),
        # Spec 004: treatment runs expose report_issue by default.
        ("hpatch-only", {"BASELINE": "/"}, True),
        ("hpatch-diagnostic", {}, True),
        ("ctp-only", {}, True),
        ("mentor-handoff", {}, True),
    ],
)
def test_defaults_and_the_toggle(mode: str, env: dict[str, str], default: bool) -> None:
    assert default == settings_from_env(mode, env).report_issue
    for value in ("true", "false"):
        toggled = settings_from_env(mode, {**env, "HPATCH_REPORT_ISSUE": value})
        assert (value == "true") == toggled.report_issue


@pytest.mark.parametrize(
    ("mode", "value", "text"),
    [
        # Control-only must disable issue reporting (spec 002): no Hpatch router runs.
        ("control-only", "true", "does not apply to control-only"),
        ("control-only", "false", "does not apply to control-only"),
        ("preparation-only", "false", "does not apply to preparation-only"),
        ("hpatch-diagnostic", "yes", "must be one of true, false"),
    ],
)
def test_refused_by_name(mode: str, value: str, text: str) -> None:
    with pytest.raises(ContractError) as caught:
        settings_from_env(mode, {"HPATCH_REPORT_ISSUE": value})
    found = [f for f in caught.value.findings if f.field == "HPATCH_REPORT_ISSUE"]
    assert 1 == len(found) and text in found[0].message


def test_the_modes_that_take_it_are_those_with_an_hpatch_router() -> None:
    assert ("control",) == tuple(a.value for a in Arm if not reports_issues(a))
    assert {name for name, mode in MODES.items() if Arm.CONTROL not in mode.fresh} | {
        "paired"
    } == set(REPORT_ISSUE_DEFAULTS)


def test_the_plan_names_the_hook_or_off() -> None:
    (variable,) = [v for v in SHELL_VARIABLES if v.name == "HPBENCH_REPORT_ISSUE"]
    on = settings_from_env("hpatch-diagnostic", {})
    off = settings_from_env("hpatch-diagnostic", {"HPATCH_REPORT_ISSUE": "false"})
    assert HOOK_PATH == variable.value(on, None)  # type: ignore[arg-type]
    assert "off" == variable.value(off, None)  # type: ignore[arg-type]


def test_every_router_is_told_and_only_the_control_is_always_off() -> None:
    compose = (REPO / "compose.yaml").read_text()
    for arm in Arm:
        command = [
            item.removeprefix("- ") for item in compose_command(compose, f"{arm.value}-router")
        ]
        flag = command[command.index("--report-issue") + 1]
        expected = "${HPBENCH_REPORT_ISSUE:-off}" if reports_issues(arm) else '"off"'
        assert expected == flag, arm


def test_the_override_installs_the_hook_in_every_hpatch_router_only() -> None:
    text = (REPO / "contrib" / "compose" / "report-issue.yaml").read_text()
    for arm in Arm:
        present = f"\n  {arm.value}-router:\n" in text
        assert present == reports_issues(arm), arm
    assert text.count(f"{HOOK_DIRECTORY_VARIABLE}: {REPORTS_PATH}") == 4
    hook = REPO / "contrib" / "diagnose-hook" / "hpbench-diagnose-hook"
    assert text.count(f"./{hook.relative_to(REPO)}:${{HPBENCH_REPORT_ISSUE:?") == 4
    assert hook.stat().st_mode & 0o111, "the hook must be executable"
