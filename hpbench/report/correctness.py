"""Correctness per arm and per pair, and the one population every comparison uses.

A repetition is *voided* when an arm has no result or failed for a reason that is
not the model's (an infrastructure failure): it is attrition, not an outcome. The
*compared* pairs are the repetitions that are not voided; McNemar, the headline
token deltas and the bootstrap all work on exactly those pairs, so every figure
of a comparison describes the same population. The *both passed* pairs are the
compared pairs where every arm passed: an arm that failed early spent less, and
that is not a saving.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from hpbench.results.model import Attempt, FailureClass
from hpbench.stats import mcnemar_exact, wilson_interval

INFRASTRUCTURE = FailureClass.INFRASTRUCTURE
# McNemar needs pairs to compare; one pair can never be discordant enough to show anything.
MIN_PAIRS_FOR_TEST = 2
# How much of a harness failure's own text the report keeps as the reason (it may
# quote a provider or Codex message, which is not ours to reproduce at length).
REASON_CHARS = 160


@attrs.frozen
class Populations:
    """The repetitions each comparison covers."""

    compared: tuple[int, ...]
    both_passed: tuple[int, ...]


def _void_reason(result: Attempt | None) -> str | None:
    if result is None:
        return "no result"
    if result.failure_class is not INFRASTRUCTURE:
        return None
    detail = result.infrastructure_error
    if detail is not None and detail.strip():
        first_line = detail.strip().splitlines()[0]
        return f"infrastructure failure: {first_line[:REASON_CHARS]}"
    return "infrastructure failure"


def _pairs(
    results: Sequence[Attempt], arms: Sequence[str], repetitions: int
) -> list[dict[str, Any]]:
    scheduled = set(range(1, repetitions + 1)) | {r.repetition for r in results}
    pairs = []
    for repetition in sorted(scheduled):
        members = {r.arm: r for r in results if r.repetition == repetition}
        reasons = {
            arm: reason for arm in arms if (reason := _void_reason(members.get(arm))) is not None
        }
        first = min(members.values(), key=lambda r: r.pair_order).arm if members else None
        pairs.append(
            {
                "repetition": repetition,
                "first_arm": first,
                "voided": bool(reasons),
                "void_reasons": reasons,
                "arms": {
                    arm: (
                        {"passed": r.passed, "failure_class": r.failure_class.value}
                        if (r := members.get(arm)) is not None
                        else None
                    )
                    for arm in arms
                },
            }
        )
    return pairs


def populations(pairs: list[dict[str, Any]]) -> Populations:
    """The compared and both-passed repetitions of the pairs :func:`correctness` built."""
    compared = [p for p in pairs if not p["voided"]]
    both = [p for p in compared if all(o["passed"] for o in p["arms"].values())]
    return Populations(
        compared=tuple(p["repetition"] for p in compared),
        both_passed=tuple(p["repetition"] for p in both),
    )


def _attrition(arm: str, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    reasons: Counter[str] = Counter()
    for pair in pairs:
        if not pair["voided"]:
            continue
        own = pair["void_reasons"].get(arm)
        if own is not None:
            reasons[own] += 1
        else:
            other = ", ".join(f"{a}: {why}" for a, why in sorted(pair["void_reasons"].items()))
            reasons[f"pair voided by {other}"] += 1
    return {"voided": sum(reasons.values()), "reasons": dict(sorted(reasons.items()))}


def _hidden_tests(mine: Sequence[Attempt]) -> dict[str, int] | None:
    """Required hidden tests passed over those required, summed over the arm's judged
    attempts; None when no attempt was judged test by test."""
    verdicts = [v for r in mine if (v := r.grader.hidden_tests) is not None]
    if not verdicts:
        return None
    return {
        "attempts": len(verdicts),
        "passed": sum(len(v.passed) for v in verdicts),
        "required": sum(v.required for v in verdicts),
    }


def _final_responses(mine: Sequence[Attempt]) -> dict[str, int] | None:
    """How many of the arm's attempts gave the task's exact final response; None when the
    task requires none (counts only: neither text is ever reported)."""
    checks = [c for r in mine if (c := r.final_response) is not None]
    if not checks:
        return None
    return {
        "attempts": len(checks),
        "matched": sum(1 for c in checks if c.matched),
        "missing": sum(1 for c in checks if not c.found),
    }


def _commentary(mine: Sequence[Attempt]) -> dict[str, Any] | None:
    """How many of the arm's attempts met their commentary-coverage profiles; None when the
    task assigns the arm none in this mode (counts and profile names only)."""
    tallies = [c for r in mine if (c := r.commentary) is not None]
    if not tallies:
        return None
    return {
        "attempts": len(tallies),
        "covered": sum(1 for c in tallies if c.covered),
        "profiles": sorted({p.profile for c in tallies for p in c.profiles}),
    }


def _arm(arm: str, results: Sequence[Attempt], pairs: list[dict[str, Any]]) -> dict[str, Any]:
    mine = [r for r in results if r.arm == arm]
    compared = [p["arms"][arm] for p in pairs if not p["voided"]]
    passed = sum(1 for outcome in compared if outcome["passed"])
    rate = wilson_interval(passed, len(compared))
    return {
        "attempts": len(mine),
        "passed": sum(1 for r in mine if r.passed),
        "failed": sum(1 for r in mine if not r.passed and r.failure_class is not INFRASTRUCTURE),
        "infrastructure": sum(1 for r in mine if r.failure_class is INFRASTRUCTURE),
        "failure_classes": dict(
            sorted(Counter(r.failure_class.value for r in mine if not r.passed).items())
        ),
        "hidden_tests": _hidden_tests(mine),
        "final_responses": _final_responses(mine),
        "commentary": _commentary(mine),
        "pass_rate": None if rate is None else attrs.asdict(rate),
        "attrition": _attrition(arm, pairs),
    }


def baseline_and_treatment(arms: Sequence[str]) -> tuple[str, str] | None:
    """The compared arms (baseline, treatment) of a run whose ``arms`` come baseline first
    (hpbench.modes); None when the run has one arm and compares nothing."""
    return (arms[0], arms[1]) if len(arms) == 2 else None


def _mcnemar(pairs: list[dict[str, Any]], arms: Sequence[str]) -> dict[str, Any] | None:
    compared = baseline_and_treatment(arms)
    if compared is None:
        return None
    baseline, treatment = compared
    outcomes = [
        (p["arms"][baseline]["passed"], p["arms"][treatment]["passed"])
        for p in pairs
        if not p["voided"]
    ]
    if len(outcomes) < MIN_PAIRS_FOR_TEST:
        return None
    test = mcnemar_exact(outcomes)
    return {
        "pairs": test.pairs,
        "control_only": test.control_only,
        "treatment_only": test.treatment_only,
        "discordant": test.discordant,
        "p_value": test.p_value,
        "min_p_value": test.min_p_value,
    }


def correctness(
    results: Sequence[Attempt], arms: Sequence[str], repetitions: int
) -> dict[str, Any]:
    """Per-arm outcomes with pass rates and attrition, the pairs, and McNemar."""
    pairs = _pairs(results, arms, repetitions)
    chosen = populations(pairs)
    tiers = sorted({r.oracle_tier for r in results})
    return {
        "oracle_tier": tiers[0] if len(tiers) == 1 else None,
        "arms": {arm: _arm(arm, results, pairs) for arm in arms},
        "pairs": pairs,
        "compared_pairs": {"pairs": len(chosen.compared), "repetitions": list(chosen.compared)},
        "both_passed_pairs": {
            "pairs": len(chosen.both_passed),
            "repetitions": list(chosen.both_passed),
        },
        "mcnemar": _mcnemar(pairs, arms),
    }
