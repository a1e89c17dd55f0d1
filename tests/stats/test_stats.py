"""Exact McNemar and the seeded paired bootstrap against known values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hpbench.stats import mcnemar_exact, paired_bootstrap


def pairs(
    control_only: int, treatment_only: int, both: int = 0, neither: int = 0
) -> list[tuple[bool, bool]]:
    return (
        [(True, False)] * control_only
        + [(False, True)] * treatment_only
        + [(True, True)] * both
        + [(False, False)] * neither
    )


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

    def test_no_discordant_pairs(self) -> None:
        """Concordant pairs only: nothing to test, p = 1."""
        assert 1.0 == mcnemar_exact(pairs(0, 0, both=5)).p_value

    @given(st.integers(0, 40), st.integers(0, 40))
    def test_symmetric_and_bounded(self, b: int, c: int) -> None:
        """Swapping the arms keeps p; p lies in (0, 1]."""
        p = mcnemar_exact(pairs(b, c)).p_value
        assert p == mcnemar_exact(pairs(c, b)).p_value
        assert 0 < p <= 1


class TestBootstrap:
    def test_deterministic_with_seed(self) -> None:
        """The same deltas and seed give the same interval; another seed may not."""
        deltas = [-120.0, -80.0, 15.0, -60.0, -200.0, 30.0]
        first = paired_bootstrap(deltas, seed=7)
        assert first == paired_bootstrap(deltas, seed=7)
        assert first is not None
        assert first.low <= first.mean <= first.high

    def test_known_interval_for_constant_deltas(self) -> None:
        """Identical deltas have a degenerate interval at that value."""
        result = paired_bootstrap([-50.0, -50.0, -50.0])
        assert result is not None
        assert (-50.0, -50.0, -50.0) == (result.mean, result.low, result.high)

    def test_two_values(self) -> None:
        """With deltas 0 and 10 the resampled means are 0, 5 or 10; the 95% interval spans 0..10."""
        result = paired_bootstrap([0.0, 10.0], resamples=4000, seed=1)
        assert result is not None
        assert (5.0, 0.0, 10.0) == (result.mean, result.low, result.high)

    def test_negative_stays_negative(self) -> None:
        """Savings that are all negative give an interval entirely below zero."""
        result = paired_bootstrap([-3.0, -1.0, -2.0, -5.0])
        assert result is not None
        assert result.high < 0

    def test_single_pair_has_no_interval(self) -> None:
        """One pair cannot be resampled meaningfully."""
        assert paired_bootstrap([12.0]) is None

    def test_rejects_bad_confidence(self) -> None:
        """Confidence must be a proportion."""
        with pytest.raises(ValueError, match="confidence"):
            paired_bootstrap([1.0, 2.0], confidence=95)
