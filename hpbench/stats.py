"""Statistics for the summary: Wilson pass-rate intervals, exact McNemar, a seeded BCa bootstrap.

McNemar and the bootstrap work on pairs (one control and one treatment
attempt of the same repetition). The caller decides which pairs are compared
and passes the same pairs to both; voided pairs are not model outcomes and
are removed before these are computed.

Each function also says what it cannot show: McNemar reports the smallest
p-value its number of discordant pairs could ever reach, and the bootstrap
refuses to produce an interval from fewer than :data:`MIN_PAIRS_FOR_INTERVAL`
pairs, where resampling a handful of values gives an interval that looks
precise and is not.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from statistics import NormalDist

import attrs

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_240_101
DEFAULT_CONFIDENCE = 0.95
# Below this many pairs a bootstrap "95 %" interval is mostly an artefact of the few
# values there are to resample (with 5 pairs only 126 distinct resamples exist).
MIN_PAIRS_FOR_INTERVAL = 6
BOOTSTRAP_METHOD = "bca"

_NORMAL = NormalDist()


@attrs.frozen
class RateInterval:
    """A proportion ``successes / trials`` with its Wilson score interval."""

    successes: int
    trials: int
    rate: float
    low: float
    high: float
    confidence: float


def wilson_interval(
    successes: int, trials: int, *, confidence: float = DEFAULT_CONFIDENCE
) -> RateInterval | None:
    """The Wilson score interval of a pass rate; None when there is no trial to rate.

    Wilson rather than the normal approximation because it stays inside [0, 1] and
    keeps a sensible width at 0 or n successes, which small benchmark runs hit often.
    """
    _check_confidence(confidence)
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        msg = f"successes must lie in 0..{trials}, got {successes}"
        raise ValueError(msg)
    z = _NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return RateInterval(
        successes=successes,
        trials=trials,
        rate=p,
        # At 0 or n successes the bounds are exactly 0 and 1; rounding must not move them.
        low=0.0 if successes == 0 else max(0.0, centre - half),
        high=1.0 if successes == trials else min(1.0, centre + half),
        confidence=confidence,
    )


@attrs.frozen
class McNemar:
    """The exact (binomial) McNemar test over discordant pairs.

    ``control_only`` counts pairs where only control passed, ``treatment_only``
    where only the treatment passed; concordant pairs carry no information.
    ``min_p_value`` is the smallest two-sided p-value that this many discordant
    pairs could give even if every one of them favoured the same arm: when it is
    above the reader's threshold, the test cannot show a difference at all.
    """

    pairs: int
    control_only: int
    treatment_only: int
    p_value: float
    min_p_value: float

    @property
    def discordant(self) -> int:
        """Pairs whose two arms disagree."""
        return self.control_only + self.treatment_only


def _two_sided_exact(k: int, n: int) -> float:
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def mcnemar_exact(outcomes: Sequence[tuple[bool, bool]]) -> McNemar:
    """Two-sided exact McNemar p-value for (control passed, treatment passed) pairs.

    With ``n`` discordant pairs and ``k`` the smaller discordant count,
    ``p = min(1, 2 * P[Binomial(n, 1/2) <= k])``; no discordant pair gives 1.
    """
    control_only = sum(1 for control, treatment in outcomes if control and not treatment)
    treatment_only = sum(1 for control, treatment in outcomes if treatment and not control)
    n = control_only + treatment_only
    return McNemar(
        pairs=len(outcomes),
        control_only=control_only,
        treatment_only=treatment_only,
        p_value=_two_sided_exact(min(control_only, treatment_only), n),
        min_p_value=_two_sided_exact(0, n),
    )


@attrs.frozen
class McNemarStratum:
    """One stratum's compared pairs (a task's, in a suite) and its discordant counts."""

    pairs: int
    control_only: int
    treatment_only: int


def mcnemar_stratified(strata: Sequence[McNemarStratum]) -> McNemar:
    """Exact McNemar over the compared pairs of several strata (the tasks of a suite).

    The matched unit is the pair: each pair is already its own matched set, so grouping
    pairs by stratum as well changes nothing, and the stratified (Mantel-Haenszel) test of
    matched pairs is McNemar's test on the summed discordant counts,
    ``b = sum b_s`` and ``c = sum c_s``. Concordant pairs carry no information in any
    stratum. Each stratum is checked: counts are never negative and its discordant pairs
    never outnumber its pairs.
    """
    for index, stratum in enumerate(strata):
        counts = (stratum.pairs, stratum.control_only, stratum.treatment_only)
        if min(counts) < 0 or stratum.control_only + stratum.treatment_only > stratum.pairs:
            msg = (
                f"stratum {index}: {stratum.control_only} + {stratum.treatment_only} "
                f"discordant of {stratum.pairs} pairs is not a stratum"
            )
            raise ValueError(msg)
    control_only = sum(s.control_only for s in strata)
    treatment_only = sum(s.treatment_only for s in strata)
    n = control_only + treatment_only
    return McNemar(
        pairs=sum(s.pairs for s in strata),
        control_only=control_only,
        treatment_only=treatment_only,
        p_value=_two_sided_exact(min(control_only, treatment_only), n),
        min_p_value=_two_sided_exact(0, n),
    )


@attrs.frozen
class BootstrapInterval:
    """A bias-corrected and accelerated (BCa) interval for the mean paired delta.

    ``degenerate`` is true when every delta is the same value: there is no spread,
    and the interval is that value.
    """

    mean: float
    low: float
    high: float
    pairs: int
    resamples: int
    seed: int
    confidence: float
    method: str
    degenerate: bool


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        msg = f"confidence must be between 0 and 1, got {confidence}"
        raise ValueError(msg)


def jackknife_acceleration(values: Sequence[float]) -> float:
    """The BCa acceleration of the mean, from its leave-one-out (jackknife) means.

    ``a = sum(d_i^3) / (6 * sum(d_i^2)^1.5)`` with ``d_i`` the jackknife mean's
    distance above the leave-one-out mean ``i``; 0 when the values have no spread.
    """
    n = len(values)
    total = sum(values)
    leave_one_out = [(total - value) / (n - 1) for value in values]
    centre = sum(leave_one_out) / n
    distances = [centre - mean for mean in leave_one_out]
    spread = sum(d * d for d in distances)
    if spread == 0:
        return 0.0
    return sum(d * d * d for d in distances) / (6 * math.pow(spread, 1.5))


def _bias_correction(means: Sequence[float], estimate: float) -> float:
    # Ties count half, and the proportion is kept off 0 and 1 so that the normal
    # quantile stays finite for strongly one-sided resamples.
    below = sum(1 for m in means if m < estimate) + 0.5 * sum(1 for m in means if m == estimate)
    resamples = len(means)
    proportion = min(max(below / resamples, 1 / (resamples + 1)), resamples / (resamples + 1))
    return _NORMAL.inv_cdf(proportion)


def _bca_quantile(z0: float, acceleration: float, z_alpha: float) -> float:
    shifted = z0 + z_alpha
    denominator = 1 - acceleration * shifted
    if denominator <= 0:
        # Extreme skew pushes the adjusted level past the end of the resamples.
        return 1.0 if shifted > 0 else 0.0
    return _NORMAL.cdf(z0 + shifted / denominator)


def _percentile(sorted_values: Sequence[float], quantile: float) -> float:
    index = min(len(sorted_values) - 1, max(0, math.floor(quantile * len(sorted_values))))
    return sorted_values[index]


def paired_bootstrap(
    deltas: Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    min_pairs: int = MIN_PAIRS_FOR_INTERVAL,
) -> BootstrapInterval | None:
    """Seeded BCa bootstrap of the mean of per-pair deltas (treatment - control).

    Returns None for fewer than ``min_pairs`` pairs (never fewer than two: one pair
    has no spread to resample). The same deltas and seed always give the same interval.
    """
    _check_confidence(confidence)
    n = len(deltas)
    if n < max(2, min_pairs):
        return None
    mean = sum(deltas) / n
    if min(deltas) == max(deltas):
        return BootstrapInterval(
            mean, mean, mean, n, resamples, seed, confidence, BOOTSTRAP_METHOD, degenerate=True
        )
    rng = random.Random(seed)  # noqa: S311 - reproducible resampling, not cryptography
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    z0 = _bias_correction(means, mean)
    acceleration = jackknife_acceleration(deltas)
    z_low = _NORMAL.inv_cdf((1 - confidence) / 2)
    low = _percentile(means, _bca_quantile(z0, acceleration, z_low))
    high = _percentile(means, _bca_quantile(z0, acceleration, -z_low))
    return BootstrapInterval(
        mean, low, high, n, resamples, seed, confidence, BOOTSTRAP_METHOD, degenerate=False
    )
