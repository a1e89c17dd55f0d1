"""What ran: every fact behind the numbers, the stand-ins named by what they said, and a
run whose provenance is incomplete refused by the report, naming what is missing."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from hpbench.plan import load_plan, write_run_json
from hpbench.report import build_report, render_summary
from hpbench.report.provenance import provider_endpoint
from hpbench.rundir import RunLayout

from ..evidence import IMAGE_ID, attempt, observed, write_plan
from .conftest import always_valid, make_run, snapshot


@pytest.fixture
def one_pair(tmp_path: Path) -> Path:
    return make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
    )


def _refused(run: Path, text: str) -> str:
    """The report's reasons name ``text`` as missing provenance; the summary says so."""
    report = build_report(run, always_valid)
    assert not report["outcome"]["ok"]
    assert any(text in item for item in report["provenance"]["missing"]), report["provenance"]
    assert any(r.startswith("provenance incomplete: ") for r in report["outcome"]["reasons"])
    summary = render_summary(report)
    assert "**Provenance incomplete**" in summary
    return summary


class TestComplete:
    def test_the_offline_demo_names_every_fact_and_every_stand_in(self, one_pair: Path) -> None:
        report = build_report(one_pair, always_valid)
        ran = report["provenance"]
        assert [] == ran["missing"]
        assert report["outcome"]["ok"]
        assert ("0.1.0", "d" * 40, "codex-cli 0.169.0", IMAGE_ID) == (
            ran["hpbench_version"],
            ran["hpbench_revision"],
            ran["codex_version"],
            ran["agent_image_id"],
        )
        assert [
            "control router: reference router (test equipment)",
            "hpatch router: reference router (test equipment)",
            "provider: scripted provider (test equipment)",
        ] == ran["stand_ins"]
        control = ran["routers"][0]
        assert ("control", "hpbench-router:local", IMAGE_ID) == (
            control["arm"],
            control["image"],
            control["image_id"],
        )
        assert ("hpbench-reference-router", "0.1.0") == (control["name"], control["version"])
        summary = render_summary(report)
        assert summary.index("## What ran") < summary.index("## Outcome")
        assert "hpbench-reference-router 0.1.0" in summary
        assert f"`sha256:{'9f' * 6}`" in summary
        assert "**reference router (test equipment)**" in summary
        assert "Stand-ins (test equipment" in summary

    def test_a_router_of_another_make_is_named_by_what_it_said(self, one_pair: Path) -> None:
        """A router image that is not the reference router is no stand-in, whatever it
        is tagged: only its self-reported name counts."""
        plan = load_plan(one_pair)
        acme = observed(plan.arms, identity={"name": "acme-router", "version": "2"})
        write_run_json(RunLayout(one_pair), attrs.evolve(plan, observed=acme))
        ran = build_report(one_pair, always_valid)["provenance"]
        assert [None, None] == [router["stand_in"] for router in ran["routers"]]
        assert ["provider: scripted provider (test equipment)"] == ran["stand_ins"]

    def test_a_dirty_checkout_is_shown_not_refused(self, tmp_path: Path) -> None:
        run = tmp_path / "run"
        run.mkdir()
        write_plan(run, hpbench_revision="e" * 40 + "-dirty")
        report = build_report(run, always_valid)
        assert "e" * 40 + "-dirty" == report["provenance"]["hpbench_revision"]
        assert f"`{'e' * 12} (with uncommitted changes)`" in render_summary(report)


class TestIncompleteIsRefused:
    def test_what_was_missing_before_the_run(self, tmp_path: Path) -> None:
        """Whatever `hpbench run provenance` found missing, the report refuses too."""
        run = tmp_path / "run"
        run.mkdir()
        missing = ("control router identity: --version did not print JSON",)
        write_plan(run, observed=attrs.evolve(observed(("control", "hpatch")), missing=missing))
        summary = _refused(run, "control router identity: --version did not print JSON")
        assert "--version did not print JSON" in summary

    def test_nothing_observed(self, tmp_path: Path) -> None:
        """A run.json without an observed section (the run stopped before it): refused,
        and every fact it would hold shows as unavailable."""
        run = tmp_path / "run"
        run.mkdir()
        write_plan(run, provenance=False)
        summary = _refused(run, "nothing was recorded before the run")
        assert "identity unavailable" in summary

    def test_not_a_git_checkout(self, tmp_path: Path) -> None:
        run = tmp_path / "run"
        run.mkdir()
        write_plan(run, hpbench_revision="")
        _refused(run, "hpbench git revision: the run was not planned from a git checkout")

    def test_no_valid_capture_leaves_the_mode_unknown(self, tmp_path: Path) -> None:
        """Mode and protocol come from what the router's snapshot says, never from the
        flags it was given: without a valid capture they are unknown."""
        run = tmp_path / "run"
        run.mkdir()
        write_plan(run)
        _refused(run, "control router mode and protocol: no single one in its valid captures")

    def test_hostile_identity_text_is_a_cell(self, tmp_path: Path) -> None:
        """What a router says about itself cannot break the table or smuggle markup."""
        hostile = {"name": "evil | ![x](http://x)", "version": "`1`"}
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
        )
        plan = load_plan(run)
        write_run_json(
            RunLayout(run), attrs.evolve(plan, observed=observed(plan.arms, identity=hostile))
        )
        summary = render_summary(build_report(run, always_valid))
        assert "evil \\| ![x](http://x) '1'" in summary


class TestProvider:
    @pytest.mark.parametrize(
        ("url", "shown"),
        [
            ("https://api.example.invalid/v1", "https://api.example.invalid"),
            ("https://api.example.invalid:8443/secret-path/v1", "https://api.example.invalid:8443"),
            ("http://[fd00::1]:9000/v1", "http://[fd00::1]:9000"),
        ],
    )
    def test_scheme_and_host_only(self, url: str, shown: str) -> None:
        assert shown == provider_endpoint(url)

    def test_a_real_run_shows_the_endpoint_and_detects_the_scripted_provider(
        self, tmp_path: Path
    ) -> None:
        """The report fixtures' captures carry an ordinary request id: no stand-in; one
        with the scripted provider's prefix names it."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
            offline=False,
        )
        ran = build_report(run, always_valid)["provenance"]
        assert ("https://responses.example", None) == (ran["provider"], ran["provider_stand_in"])
        records = run / "routers" / "1-hpatch" / "capture" / "records.jsonl"
        lines = [json.loads(line) for line in records.read_text().splitlines()]
        for line in lines:
            if line["kind"] == "provider":
                line["provider_request_id"] = "hpbench-scripted-req_1"
        records.write_text("".join(json.dumps(line) + "\n" for line in lines))
        ran = build_report(run, always_valid)["provenance"]
        assert "scripted provider (test equipment)" == ran["provider_stand_in"]
        assert "provider: scripted provider (test equipment)" in ran["stand_ins"]
        assert "/v1" not in render_summary(build_report(run, always_valid)).split("## Outcome")[0]
