"""hpatch-only's import: the run's BASELINE checked against the run and kept as its
imported control; a mismatch, a run that imports nothing, or a tampered import refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench._documents import document_json
from hpbench.baseline import export_baseline, write_baseline
from hpbench.capture.models import RouterMode
from hpbench.errors import ContractError
from hpbench.imported import import_into, load_imported
from hpbench.plan import load_plan, plan_json
from hpbench.report import build_report, render_summary
from hpbench.report.captures import capture_check
from hpbench.results import merge_results
from hpbench.rundir import RunLayout

from ..evidence import write_plan
from ..report.test_report_build import _attempt
from .test_baseline import _hashes


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A finished control-only run whose control passed, with a valid capture."""
    run = tmp_path / "source"
    run.mkdir()
    write_plan(run, arms=("control",))
    _attempt(run, 2, "control", 1, RouterMode.PASSTHROUGH)
    _hashes(run)
    return run


def _importing(tmp_path: Path, baseline: Path, **overrides: object) -> Path:
    run = tmp_path / "importing"
    run.mkdir()
    write_plan(run, arms=("hpatch",), mode="hpatch-only", baseline=str(baseline), **overrides)
    _hashes(run)
    return run


class TestImportInto:
    def test_a_run_directory_is_exported_and_kept(self, tmp_path, source):
        run = _importing(tmp_path, source)
        baseline = import_into(run)
        assert (source.name, "control-only", 2) == (
            baseline.source_run_id,
            baseline.source_mode,
            baseline.control.repetition,
        )
        imported = load_imported(run)
        assert imported is not None
        # Placed in the run's one repetition, after the fresh attempt; its own identity
        # stays in the kept baseline.
        assert (1, 2, "1-control") == (
            imported.control.repetition,
            imported.control.pair_order,
            imported.control.key,
        )
        assert "imported from run source (control-only), repetition 2" == imported.label
        assert imported.metrics is not None
        # Never a new attempt of this run.
        assert not RunLayout(run).attempts.exists()

    def test_a_baseline_file_is_read(self, tmp_path, source):
        path = tmp_path / "published.json"
        write_baseline(export_baseline(source), path)
        run = _importing(tmp_path, path)
        assert "control-only" == import_into(run).source_mode

    def test_a_mismatch_is_refused_and_nothing_is_kept(self, tmp_path, source):
        run = _importing(tmp_path, source, effort="high")
        with pytest.raises(ContractError) as caught:
            import_into(run)
        assert ["$.effort"] == [f.field for f in caught.value.findings]
        assert not RunLayout(run).imported_baseline.exists()

    def test_a_run_that_imports_nothing_is_refused(self, tmp_path, source):
        run = tmp_path / "paired"
        run.mkdir()
        write_plan(run)
        with pytest.raises(ContractError, match="a paired run imports no control"):
            import_into(run)
        assert load_imported(run) is None


class TestLoadImported:
    def test_a_run_stopped_before_its_import_has_no_control(self, tmp_path, source):
        run = _importing(tmp_path, source)
        with pytest.raises(ContractError, match="stopped before its baseline was imported"):
            load_imported(run)

    def test_a_tampered_import_is_checked_again(self, tmp_path, source):
        """The kept file is evidence, not trust: a control altered to a failure, or to
        another model, after the import is refused when the report reads it."""
        run = _importing(tmp_path, source)
        import_into(run)
        path = RunLayout(run).imported_baseline
        document = json.loads(path.read_text())
        document["control"]["passed"] = False
        document["model"] = "gpt-5.5"
        path.write_text(json.dumps(document))
        with pytest.raises(ContractError) as caught:
            load_imported(run)
        assert {"$.control.passed", "$.model"} <= {f.field for f in caught.value.findings}

    def test_metrics_of_another_contract_are_context_only(self, tmp_path, source):
        run = _importing(tmp_path, source)
        baseline = import_into(run)
        older = document_json(baseline) | {"record_schema_version": 1}
        RunLayout(run).imported_baseline.write_text(json.dumps(older))
        imported = load_imported(run)
        assert imported is not None
        assert imported.metrics is None


class TestReport:
    """The report of an hpatch-only run: the imported control compared and labelled, never
    counted, captured or analysed as one of the run's attempts."""

    def _report(self, tmp_path: Path, source: Path, *, older: bool = False) -> dict[str, object]:
        run = _importing(tmp_path, source, treatment_model_protocol="native")
        baseline = import_into(run)
        if older:
            document = document_json(baseline) | {"record_schema_version": 1}
            RunLayout(run).imported_baseline.write_text(json.dumps(document))
        _attempt(run, 1, "hpatch", 1, RouterMode.HPATCH)
        merge_results(run)
        return build_report(run, capture_check(plan_json(load_plan(run))))

    def test_the_control_is_compared_with_its_label(self, tmp_path, source):
        report = self._report(tmp_path, source)
        assert report["outcome"] == {"ok": True, "reasons": []}
        assert ["1-hpatch"] == sorted(report["captures"])
        assert ["hpatch"] == sorted(report["commands"])
        correctness = report["correctness"]
        assert (1, 1) == (
            correctness["arms"]["control"]["passed"],
            correctness["arms"]["hpatch"]["passed"],
        )
        assert report["usage"]["deltas"] is not None
        assert "current" == report["imported"]["metrics"]
        summary = render_summary(report)
        assert "| control (imported) |" in summary
        assert "imported from run source (control-only), repetition 2; metrics: current" in summary

    def test_context_only_metrics_are_never_shown_as_current(self, tmp_path, source):
        """Metrics of another capture contract: the control's figures and every delta are
        unavailable, not zero; correctness still compares."""
        report = self._report(tmp_path, source, older=True)
        assert "context only" == report["imported"]["metrics"]
        usage = report["usage"]
        assert usage["arms"]["control"]["input_tokens"] is None
        assert usage["deltas"]["input_tokens"] is None
        assert 1 == report["correctness"]["arms"]["control"]["passed"]
        summary = render_summary(report)
        assert "metrics: context only" in summary
