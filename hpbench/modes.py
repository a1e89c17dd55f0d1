"""The modes: which arms each one compares, which of them run, and how each arm's router
is configured.

Spec 002 names six measuring modes. Each compares a *baseline* arm with a *treatment*
arm (one of them may be absent or imported), and every arm has one router
configuration, fixed by its name or by one setting of the run:

=================  ========  =========  ====================================  ============
mode               baseline  treatment  fresh attempts (odd repetitions)      protocol
=================  ========  =========  ====================================  ============
paired             control   hpatch     control, hpatch                       setting
control-only       control   (none)     control                               (none)
hpatch-only        control   hpatch     hpatch (control imported)             native
hpatch-diagnostic  (none)    hpatch     hpatch                                setting
ctp-only           native    ctp        native, ctp                           both fixed
mentor-handoff     hpatch    mentor     hpatch, mentor                        shared
=================  ========  =========  ====================================  ============

Arms run in the order above in odd repetitions and reversed in even ones. The tables
here are the one place that says so: settings, the plan, the validator's binding, the
report and the shell (through the plan's variables) all ask this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from hpbench.rundir import Arm

# The capture contract's RouterMode and Protocol values, spelled here so that reading a
# mode (every settings check, every CLI start) does not load the capture package;
# tests/rundir/test_modes.py proves them equal to the contract's.
PASSTHROUGH, HPATCH = "passthrough", "hpatch"
NATIVE, CTP2 = "native", "ctp2"


@attrs.frozen
class ArmRouter:
    """How an arm's router runs: its mode, its protocol (None: the run's protocol
    setting decides), and whether Mentor Handoff is on."""

    mode: str
    protocol: str | None
    mentor: bool


# Spec 002: the control is passthrough/native with Mentor off, always; hpatch follows the
# run's protocol; native and ctp are fixed; only the Mentor treatment enables Mentor.
ARM_ROUTERS: Mapping[Arm, ArmRouter] = {
    Arm.CONTROL: ArmRouter(PASSTHROUGH, NATIVE, mentor=False),
    Arm.HPATCH: ArmRouter(HPATCH, None, mentor=False),
    Arm.NATIVE: ArmRouter(HPATCH, NATIVE, mentor=False),
    Arm.CTP: ArmRouter(HPATCH, CTP2, mentor=False),
    Arm.MENTOR: ArmRouter(HPATCH, None, mentor=True),
}


@attrs.frozen
class ProtocolSetting:
    """The variable that chooses a mode's Hpatch protocol, and its default."""

    variable: str
    default: str


@attrs.frozen
class Mode:
    """One measuring mode (spec 002)."""

    name: str
    baseline: Arm | None
    treatment: Arm | None
    # The arms that run fresh attempts, in odd repetitions' order (baseline first).
    fresh: tuple[Arm, ...]
    # The arm whose attempt comes from a published baseline instead of a fresh run.
    imported: Arm | None = None
    single_attempt: bool = False
    # None: no setting chooses the protocol (every arm's is fixed, or no arm is Hpatch's).
    protocol: ProtocolSetting | None = None

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The arms the report compares, baseline first: fresh and imported."""
        return tuple(arm for arm in (self.baseline, self.treatment) if arm is not None)

    @property
    def treatment_protocol(self) -> str | None:
        """The treatment arm's fixed protocol, when no setting chooses it."""
        if self.treatment is None:
            return None
        return ARM_ROUTERS[self.treatment].protocol


_TREATMENT_PROTOCOL = ProtocolSetting("TREATMENT_MODEL_PROTOCOL", CTP2)
MODES: Mapping[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode(
            "paired",
            Arm.CONTROL,
            Arm.HPATCH,
            (Arm.CONTROL, Arm.HPATCH),
            protocol=_TREATMENT_PROTOCOL,
        ),
        Mode("control-only", Arm.CONTROL, None, (Arm.CONTROL,), single_attempt=True),
        # Spec 002/004: one fresh Hpatch/native attempt against a matching published control.
        Mode(
            "hpatch-only",
            Arm.CONTROL,
            Arm.HPATCH,
            (Arm.HPATCH,),
            imported=Arm.CONTROL,
            single_attempt=True,
        ),
        Mode(
            "hpatch-diagnostic",
            None,
            Arm.HPATCH,
            (Arm.HPATCH,),
            single_attempt=True,
            protocol=ProtocolSetting("DIAGNOSTIC_MODEL_PROTOCOL", NATIVE),
        ),
        Mode("ctp-only", Arm.NATIVE, Arm.CTP, (Arm.NATIVE, Arm.CTP)),
        Mode(
            "mentor-handoff",
            Arm.HPATCH,
            Arm.MENTOR,
            (Arm.HPATCH, Arm.MENTOR),
            protocol=ProtocolSetting("MENTOR_MODEL_PROTOCOL", NATIVE),
        ),
    )
}


def modes_where(test: Callable[[Mode], bool]) -> tuple[str, ...]:
    """The measuring modes for which ``test`` holds, in table order."""
    return tuple(mode.name for mode in MODES.values() if test(mode))


# The modes that take a setting, read off the table rather than spelled again.
MENTOR_MODES = modes_where(lambda mode: any(ARM_ROUTERS[arm].mentor for arm in mode.fresh))
IMPORTING_MODES = modes_where(lambda mode: mode.imported is not None)
FRESH_CONTROL_MODES = modes_where(lambda mode: Arm.CONTROL in mode.fresh)
PROTOCOL_VARIABLES = tuple(
    sorted({mode.protocol.variable for mode in MODES.values() if mode.protocol is not None})
)
# Modes that accept the exact-evidence toggle (spec 004), default off.
EXACT_EVIDENCE_MODES = ("hpatch-only", "hpatch-diagnostic")


def reports_issues(arm: Arm) -> bool:
    """Whether ``arm``'s router offers ``report_issue`` when a run turns issue reporting
    on: every Hpatch router does; the passthrough control never does (spec 002)."""
    return ARM_ROUTERS[arm].mode == HPATCH


# Spec 004: treatment runs expose report_issue unless HPATCH_REPORT_ISSUE=false; spec
# 002's default preset (paired) has issue reporting off. Only modes that run an Hpatch
# router take the setting (control-only must disable it, spec 002).
REPORT_ISSUE_DEFAULTS: Mapping[str, bool] = {
    mode.name: mode.name != "paired"
    for mode in MODES.values()
    if any(reports_issues(arm) for arm in mode.fresh)
}


def mode_of(name: str) -> Mode:
    """The measuring mode ``name``.

    Raises:
        KeyError: not a measuring mode.
    """
    return MODES[name]


def compared_arms(run: Mapping[str, object]) -> list[str]:
    """The arms a run's report compares, baseline first (its run.json as JSON): the mode's,
    fresh and imported alike."""
    return [arm.value for arm in mode_of(str(run["mode"])).arms]


def arm_protocol(arm: Arm, run_protocol: str) -> str:
    """The protocol ``arm``'s router uses in a run whose protocol setting is
    ``run_protocol`` (run.json's ``treatment_model_protocol``)."""
    return ARM_ROUTERS[arm].protocol or run_protocol


def arm_order(mode: Mode, repetition: int) -> tuple[Arm, ...]:
    """The order ``mode``'s fresh arms run in: odd repetitions baseline first, even ones
    treatment first (spec 004: alternating order)."""
    return mode.fresh if repetition % 2 else tuple(reversed(mode.fresh))


def scheduled_attempts(mode: Mode, repetitions: int) -> list[tuple[int, int, Arm]]:
    """Every fresh attempt of a run as (repetition, place in its pair, arm), in run order."""
    return [
        (repetition, place, arm)
        for repetition in range(1, repetitions + 1)
        for place, arm in enumerate(arm_order(mode, repetition), start=1)
    ]
