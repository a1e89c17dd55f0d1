"""The mode table: its spellings of the capture contract's values, and every mode's arms."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpbench import modes
from hpbench.capture.models import Protocol, RouterMode
from hpbench.modes import ARM_ROUTERS, MODES, arm_protocol, compared_arms
from hpbench.rundir import Arm


def test_the_spellings_are_the_contracts() -> None:
    """modes.py spells router modes and protocols without loading the capture package;
    they must be the contract's values."""
    assert {modes.PASSTHROUGH, modes.HPATCH} == {m.value for m in RouterMode}
    assert {modes.NATIVE, modes.CTP2} == {p.value for p in Protocol}
    for router in ARM_ROUTERS.values():
        RouterMode(router.mode)
        if router.protocol is not None:
            Protocol(router.protocol)


def test_every_arm_has_one_router_configuration() -> None:
    assert set(Arm) == set(ARM_ROUTERS)
    # Spec 002: only the Mentor treatment enables Mentor Handoff.
    assert [Arm.MENTOR] == [arm for arm, router in ARM_ROUTERS.items() if router.mentor]


@pytest.mark.parametrize(
    ("mode", "compared", "fresh"),
    [
        ("paired", ["control", "hpatch"], ("control", "hpatch")),
        ("control-only", ["control"], ("control",)),
        ("hpatch-only", ["control", "hpatch"], ("hpatch",)),
        ("hpatch-diagnostic", ["hpatch"], ("hpatch",)),
        ("ctp-only", ["native", "ctp"], ("native", "ctp")),
        ("mentor-handoff", ["hpatch", "mentor"], ("hpatch", "mentor")),
    ],
)
def test_each_mode_compares_and_runs_its_arms(mode, compared, fresh) -> None:
    assert compared == compared_arms({"mode": mode})
    assert fresh == tuple(arm.value for arm in MODES[mode].fresh)
    # Whatever is imported is compared but never run.
    imported = MODES[mode].imported
    assert imported is None or imported not in MODES[mode].fresh


def test_fixed_arms_ignore_the_run_protocol() -> None:
    assert ("native", "ctp2") == (arm_protocol(Arm.NATIVE, "ctp2"), arm_protocol(Arm.CTP, "native"))
    assert ("ctp2", "native") == (
        arm_protocol(Arm.HPATCH, "ctp2"),
        arm_protocol(Arm.CONTROL, "ctp2"),
    )
    assert "ctp2" == arm_protocol(Arm.MENTOR, "ctp2")


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("override", "role"),
    [("codex-auth-file.yaml", "agent"), ("provider-ca-bundle.yaml", "router")],
)
def test_every_arm_gets_the_real_run_overrides(override: str, role: str) -> None:
    """A real ctp-only or mentor-handoff run mounts the auth file into its agents and the
    provider's CA bundle into its routers like paired does: an arm the override left out
    would run without its credential or its provider's certificate."""
    text = (REPO / "contrib" / "compose" / override).read_text()
    compose = (REPO / "compose.yaml").read_text()
    for arm in Arm:
        service = f"  {arm.value}-{role}:\n"
        assert service in compose, service
        assert service in text, f"{override} leaves out {arm.value}-{role}"


def _command(text: str, service: str) -> list[str]:
    """The ``command`` list of ``service`` in a Compose file, as its item lines."""
    lines = text[text.index(f"\n  {service}:\n") :].splitlines()[2:]
    start = lines.index("    command:") + 1
    items = []
    for line in lines[start:]:
        if line.lstrip().startswith("#"):
            continue
        if not line.startswith("      - "):
            break
        items.append(line.strip())
    return items


def test_the_exact_evidence_override_is_the_treatment_command_plus_its_flag() -> None:
    """Compose replaces a command list whole, so the override repeats hpatch-router's:
    it must stay that command, with only --exact-evidence added."""
    base = _command((REPO / "compose.yaml").read_text(), "hpatch-router")
    override = _command(
        (REPO / "contrib" / "compose" / "exact-evidence.yaml").read_text(), "hpatch-router"
    )
    assert len(base) > 6
    assert [
        *base,
        "- --exact-evidence",
        "- ${HPBENCH_EXACT_EVIDENCE:?set HPBENCH_EXACT_EVIDENCE}",
    ] == (override)
