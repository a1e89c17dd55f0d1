"""Wilson intervals, exact McNemar and the seeded BCa bootstrap against known values."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hpbench.stats import (
    MIN_PAIRS_FOR_INTERVAL,
    jackknife_acceleration,
    mcnemar_exact,
    paired_bootstrap,
    wilson_interval,
)


def pairs(
    control_only: int, treatment_only: int, both: int = 0, neither: int = 0
) -> list[tuple[bool, bool]]:
    return (
        [(True, False)] * control_only
        + [(False, True)] * treatment_only
        + [(True, True)] * both
        + [(False, False)] * neither
    )


class TestWilson:
    @pytest.mark.parametrize(
        ("successes", "trials", "low", "high"),
        [
            (0, 10, 0.0, 0.277533),  # textbook values (Newcombe 1998, z = 1.959964)
            (10, 10, 0.722467, 1.0),
            (5, 10, 0.236590, 0.763410),
            (1, 1, 0.206543, 1.0),
            (81, 263, 0.255289, 0.366210),
        ],
    )
    def test_known_values(self, successes: int, trials: int, low: float, high: float) -> None:
        """Wilson's score interval at 95 %."""
        interval = wilson_interval(successes, trials)
        assert interval is not None
        assert low == pytest.approx(interval.low, abs=1e-5)
        assert high == pytest.approx(interval.high, abs=1e-5)
        assert successes / trials == interval.rate

    def test_no_trial_has_no_rate(self) -> None:
        """No graded attempt: no rate, never 0 %."""
        assert wilson_interval(0, 0) is None

    def test_rejects_impossible_counts(self) -> None:
        """More passes than attempts is a caller error."""
        with pytest.raises(ValueError, match="successes"):
            wilson_interval(3, 2)

    @given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
    def test_contains_the_rate(self, counts: tuple[int, int]) -> None:
        """The interval lies in [0, 1] and contains the observed rate."""
        interval = wilson_interval(*counts)
        assert interval is not None
        assert 0.0 <= interval.low <= interval.rate <= interval.high <= 1.0


class TestMcNemar:
    @pytest.mark.parametrize(
        ("control_only", "treatment_only", "expected"),
        [
            (1, 6, 0.125),  # 2 * (1 + 7) / 2**7
            (0, 5, 0.0625),  # 2 / 2**5
            (3, 3, 1.0),
            (2, 8, 0.109375),  # 2 * (1 + 10 + 45) / 2**10
            (0, 1, 1.0),
            (10, 0, 0.001953125),  # 2 / 2**10
        ],
    )
    def test_known_values(self, control_only: int, treatment_only: int, expected: float) -> None:
        """Textbook exact two-sided values."""
        result = mcnemar_exact(pairs(control_only, treatment_only, both=4, neither=2))
        assert expected == pytest.approx(result.p_value, abs=1e-12)
        assert (control_only, treatment_only) == (result.control_only, result.treatment_only)
        assert control_only + treatment_only + 6 == result.pairs

    @pytest.mark.parametrize(
        ("discordant", "floor"),
        [(0, 1.0), (1, 1.0), (2, 0.5), (3, 0.25), (5, 0.0625), (6, 0.03125)],
    )
    def test_smallest_reachable_p(self, discordant: int, floor: float) -> None:
        """n discordant pairs can never give p below 2 / 2**n: five cannot reach 0.05."""
        result = mcnemar_exact(pairs(discordant, 0, both=3))
        assert floor == result.min_p_value
        assert result.p_value >= result.min_p_value

    def test_all_pairs_concordant(self) -> None:
        """Concordant pairs only: nothing to test, p = 1 and no p could be smaller."""
        result = mcnemar_exact(pairs(0, 0, both=5, neither=2))
        assert (1.0, 1.0, 0) == (result.p_value, result.min_p_value, result.discordant)

    @given(st.integers(0, 40), st.integers(0, 40))
    def test_symmetric_and_bounded(self, b: int, c: int) -> None:
        """Swapping the arms keeps p; p lies in (0, 1] and never below its floor."""
        result = mcnemar_exact(pairs(b, c))
        assert result.p_value == mcnemar_exact(pairs(c, b)).p_value
        assert 0 < result.min_p_value <= result.p_value <= 1


class TestBootstrap:
    deltas = (-120.0, -80.0, 15.0, -60.0, -200.0, 30.0)

    def test_deterministic_with_seed(self) -> None:
        """The same deltas and seed give the same interval."""
        first = paired_bootstrap(self.deltas, seed=7)
        assert first == paired_bootstrap(self.deltas, seed=7)
        assert first is not None
        assert first.low <= first.mean <= first.high
        assert ("bca", False, 6) == (first.method, first.degenerate, first.pairs)

    @pytest.mark.parametrize("count", range(MIN_PAIRS_FOR_INTERVAL))
    def test_too_few_pairs_give_no_interval(self, count: int) -> None:
        """Below the minimum number of pairs there is no interval at all."""
        assert paired_bootstrap(self.deltas[:count]) is None

    def test_one_pair_never_has_an_interval(self) -> None:
        """Even a caller that lowers the minimum gets nothing from one pair."""
        assert paired_bootstrap([12.0], min_pairs=1) is None

    def test_constant_deltas_are_degenerate(self) -> None:
        """Identical deltas have no spread: the interval is that value, flagged degenerate."""
        result = paired_bootstrap([-50.0] * 8)
        assert result is not None
        assert (-50.0, -50.0, -50.0, True) == (
            result.mean,
            result.low,
            result.high,
            result.degenerate,
        )

    def test_negative_stays_negative(self) -> None:
        """Deltas that are all negative give an interval entirely below zero."""
        result = paired_bootstrap([-3.0, -1.0, -2.0, -5.0, -4.0, -2.5])
        assert result is not None
        assert result.high < 0

    def test_skew_moves_the_interval(self) -> None:
        """One large outlier makes the interval reach further on its side than the other."""
        skewed = [1.0] * 11 + [100.0]
        result = paired_bootstrap(skewed)
        assert result is not None
        assert result.high - result.mean > result.mean - result.low

    def test_acceleration_known_value(self) -> None:
        """The jackknife acceleration of the mean: 0 for symmetric data, signed by skew."""
        assert 0.0 == jackknife_acceleration([1.0, 2.0, 3.0])
        assert 0.0 == jackknife_acceleration([4.0, 4.0, 4.0])
        # Values 0, 0, 3: leave-one-out means 1.5, 1.5, 0, centre 1; d = -0.5, -0.5, 1.
        expected = (-0.125 - 0.125 + 1) / (6 * 1.5**1.5)
        assert expected == pytest.approx(jackknife_acceleration([0.0, 0.0, 3.0]))

    def test_coverage_near_nominal(self) -> None:
        """On normal deltas the 95 % interval covers the true mean about 95 % of the time."""
        rng = random.Random(3)  # noqa: S311 - a reproducible sample, not cryptography
        trials = 120
        covered = 0
        for trial in range(trials):
            sample = [rng.gauss(-10.0, 5.0) for _ in range(15)]
            interval = paired_bootstrap(sample, resamples=1000, seed=trial)
            assert interval is not None
            covered += interval.low <= -10.0 <= interval.high
        assert 0.85 <= covered / trials <= 1.0

    def test_rejects_bad_confidence(self) -> None:
        """Confidence must be a proportion."""
        with pytest.raises(ValueError, match="confidence"):
            paired_bootstrap(self.deltas, confidence=95)
