"""Paired statistics for the summary: exact McNemar and a seeded paired bootstrap.

Both work on pairs (one control and one treatment attempt of the same
repetition). Pairs voided by an infrastructure failure are removed by the
caller before these are computed: they are not model outcomes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import attrs

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_240_101


@attrs.frozen
class McNemar:
    """The exact (binomial) McNemar test over discordant pairs.

    ``control_only`` counts pairs where only control passed, ``treatment_only``
    where only the treatment passed; concordant pairs carry no information.
    """

    control_only: int
    treatment_only: int
    p_value: float

    @property
    def discordant(self) -> int:
        """Pairs whose two arms disagree."""
        return self.control_only + self.treatment_only


def mcnemar_exact(outcomes: Sequence[tuple[bool, bool]]) -> McNemar:
    """Two-sided exact McNemar p-value for (control passed, treatment passed) pairs.

    With ``n`` discordant pairs and ``k`` the smaller discordant count,
    ``p = min(1, 2 * P[Binomial(n, 1/2) <= k])``; no discordant pair gives 1.
    """
    control_only = sum(1 for control, treatment in outcomes if control and not treatment)
    treatment_only = sum(1 for control, treatment in outcomes if treatment and not control)
    n = control_only + treatment_only
    if n == 0:
        return McNemar(control_only, treatment_only, 1.0)
    k = min(control_only, treatment_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return McNemar(control_only, treatment_only, min(1.0, 2 * tail))


@attrs.frozen
class BootstrapInterval:
    """A percentile interval for the mean paired delta."""

    mean: float
    low: float
    high: float
    pairs: int
    resamples: int
    seed: int
    confidence: float


def paired_bootstrap(
    deltas: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> BootstrapInterval | None:
    """Seeded percentile bootstrap of the mean of per-pair deltas (treatment - control).

    Returns None for fewer than two pairs: one pair has no spread to resample.
    The same deltas and seed always give the same interval.
    """
    if len(deltas) < 2:
        return None
    if not 0 < confidence < 1:
        msg = f"confidence must be between 0 and 1, got {confidence}"
        raise ValueError(msg)
    rng = random.Random(seed)  # noqa: S311 - reproducible resampling, not cryptography
    n = len(deltas)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    alpha = (1 - confidence) / 2
    low_index = max(0, math.floor(alpha * resamples))
    high_index = min(resamples - 1, math.ceil((1 - alpha) * resamples) - 1)
    return BootstrapInterval(
        mean=sum(deltas) / n,
        low=means[low_index],
        high=means[high_index],
        pairs=n,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
