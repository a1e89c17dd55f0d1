"""The stratified McNemar test a suite pools its tasks with, against hand-computed values."""

from __future__ import annotations

import pytest

from hpbench.stats import McNemarStratum, mcnemar_exact, mcnemar_stratified


class TestStratifiedMcNemar:
    @pytest.mark.parametrize(
        ("strata", "b", "c", "p"),
        [
            # b = 0, c = 3 + 2 = 5: p = 2 * (1/2)^5 = 1/16.
            ([(4, 0, 3), (3, 0, 2)], 0, 5, 0.0625),
            # b = 1, c = 6, n = 7: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 16 / 128.
            ([(6, 1, 2), (5, 0, 4)], 1, 6, 0.125),
            # b = 3, c = 4, n = 7: 2 * (1 + 7 + 21 + 35) / 128 = 1, capped at 1.
            ([(2, 1, 0), (3, 0, 3), (5, 2, 1)], 3, 4, 1.0),
            # b = 0, c = 10: 2 / 1024.
            ([(5, 0, 5), (5, 0, 5)], 0, 10, 2 / 1024),
        ],
    )
    def test_sums_the_strata(
        self, strata: list[tuple[int, int, int]], b: int, c: int, p: float
    ) -> None:
        """The pooled counts are the strata's sums, and p is the exact binomial of them."""
        test = mcnemar_stratified([McNemarStratum(*s) for s in strata])
        assert (b, c, b + c) == (test.control_only, test.treatment_only, test.discordant)
        assert sum(s[0] for s in strata) == test.pairs
        assert p == pytest.approx(test.p_value, abs=1e-12)
        # Every discordant pair in favour of one arm: 2 / 2^n.
        assert 2 / 2 ** (b + c) == pytest.approx(test.min_p_value, abs=1e-12)

    def test_one_stratum_is_plain_mcnemar(self) -> None:
        """One task's stratum gives the very test its own report computes."""
        outcomes = [(True, False)] * 2 + [(False, True)] * 5 + [(True, True)] * 3
        assert mcnemar_exact(outcomes) == mcnemar_stratified([McNemarStratum(10, 2, 5)])

    def test_concordant_strata_give_one(self) -> None:
        """Strata whose pairs all agree: nothing to test, p = 1 and the floor is 1."""
        test = mcnemar_stratified([McNemarStratum(1, 0, 0), McNemarStratum(1, 0, 0)])
        assert (2, 0, 1.0, 1.0) == (test.pairs, test.discordant, test.p_value, test.min_p_value)

    @pytest.mark.parametrize(
        "stratum",
        [McNemarStratum(2, 2, 1), McNemarStratum(3, -1, 0), McNemarStratum(-1, 0, 0)],
    )
    def test_refuses_an_impossible_stratum(self, stratum: McNemarStratum) -> None:
        """More discordant pairs than pairs, or a negative count, is no stratum."""
        with pytest.raises(ValueError, match="stratum 1"):
            mcnemar_stratified([McNemarStratum(1, 0, 1), stratum])
