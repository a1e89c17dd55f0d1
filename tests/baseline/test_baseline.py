"""Published baselines: export only a passing, validated control; import only into a run
that matches it on every field, each mismatch refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from hpbench._cli.main import main
from hpbench._documents import document_json
from hpbench.baseline import (
    ImportTarget,
    current_metrics,
    export_baseline,
    import_problems,
    import_target,
    read_baseline,
    write_baseline,
)
from hpbench.capture.models import RouterMode
from hpbench.errors import ContractError
from hpbench.rundir import RunLayout

from ..evidence import write_plan
from ..report.test_report_build import _attempt

STOCK = "5" * 64


def _hashes(run: Path) -> None:
    directory = RunLayout(run).instructions_dir
    directory.mkdir(parents=True, exist_ok=True)
    retained = {"bytes": 1, "sha256": "0" * 64}
    hashes = {
        "schema": "hpbench.instructions.v1",
        "codex_version": "0.169.0",
        "model": "gpt-6-astra",
        "stock_sha256": STOCK,
        "pins_sha256": "1" * 64,
        "guidance_sha256": "2" * 64,
        "isolation_rule_sha256": "3" * 64,
        "files": dict.fromkeys(("control.md", "treatment.md", "treatment.diff"), retained),
    }
    (directory / "hashes.json").write_text(json.dumps(hashes))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A finished paired run whose control passed, with a valid capture."""
    run = tmp_path / "source"
    run.mkdir()
    write_plan(run)
    _attempt(run, 1, "control", 1, RouterMode.PASSTHROUGH)
    _attempt(run, 1, "hpatch", 2, RouterMode.HPATCH)
    _hashes(run)
    return run


@pytest.fixture
def target(tmp_path: Path) -> ImportTarget:
    """An hpatch-only run of the same task, content, instructions, Codex, model and effort."""
    run = tmp_path / "importing"
    run.mkdir()
    write_plan(run, arms=("hpatch",))
    _hashes(run)
    return import_target(run)


class TestExport:
    def test_a_passing_control_round_trips(self, source, tmp_path, target):
        path = tmp_path / "baseline.json"
        write_baseline(export_baseline(source), path)
        baseline = read_baseline(path)
        assert (1, True, STOCK) == (
            baseline.control.repetition,
            baseline.control.passed,
            baseline.stock_instructions_sha256,
        )
        assert [] == import_problems(baseline, target, source=str(path))
        assert current_metrics(baseline, source=str(path)) is not None

    def test_no_passing_control_is_no_baseline(self, source):
        result = source / "attempts" / "1-control" / "result.json"
        data = json.loads(result.read_text())
        data.update(passed=False, failure_class="hidden-tests-failed")
        result.write_text(json.dumps(data))
        with pytest.raises(ContractError) as caught:
            export_baseline(source)
        assert "$.control.passed" == caught.value.findings[0].field

    def test_an_invalid_capture_is_no_baseline(self, source):
        metrics = source / "routers" / "1-control" / "metrics.json"
        data = json.loads(metrics.read_text())
        data["usage"]["input_tokens"] += 1
        metrics.write_text(json.dumps(data))
        with pytest.raises(ContractError) as caught:
            export_baseline(source)
        assert "capture.reconcile.usage" in {f.code for f in caught.value.findings}

    def test_an_existing_file_is_never_replaced(self, source, tmp_path):
        path = tmp_path / "baseline.json"
        path.write_text("kept")
        with pytest.raises(ContractError, match="refusing to replace"):
            write_baseline(export_baseline(source), path)
        assert "kept" == path.read_text()


MISMATCHES = [
    ("task_id", "other-task"),
    ("task_fingerprint", "sha256:other"),
    ("stock_instructions_sha256", "6" * 64),
    ("codex_version", "0.170.0"),
    ("model", "gpt-5.5"),
    ("effort", "high"),
]


class TestImport:
    @pytest.mark.parametrize(("field", "value"), MISMATCHES, ids=[m[0] for m in MISMATCHES])
    def test_each_mismatch_is_refused_by_name(self, source, target, field, value):
        baseline = export_baseline(source)
        problems = import_problems(baseline, attrs.evolve(target, **{field: value}), source="b")
        assert [f"$.{field}"] == [p.field for p in problems]

    @pytest.mark.parametrize("field", ["task_fingerprint", "stock_instructions_sha256"])
    def test_missing_content_evidence_refuses_import(self, source, target, field):
        baseline = attrs.evolve(export_baseline(source), **{field: None})
        problems = {p.field: p.message for p in import_problems(baseline, target, source="b")}
        assert "missing content evidence" in problems[f"$.{field}"]

    def test_a_demo_baseline_never_stands_in_for_a_real_control(self, source, target):
        problems = import_problems(
            export_baseline(source), attrs.evolve(target, offline_demo=False), source="b"
        )
        assert ["$.offline_demo"] == [p.field for p in problems]

    def test_a_failed_or_foreign_control_is_refused(self, source, target):
        baseline = export_baseline(source)
        control = attrs.evolve(baseline.control, passed=False, arm="hpatch", model="gpt-5.5")
        problems = import_problems(attrs.evolve(baseline, control=control), target, source="b")
        assert {"$.control.arm", "$.control.passed", "$.control.model"} == {
            p.field for p in problems
        }

    def test_metrics_of_another_contract_are_context_only(self, source, target):
        baseline = attrs.evolve(
            export_baseline(source), snapshot_schema="hpatch.capture.metrics.v3"
        )
        assert [] == import_problems(baseline, target, source="b")
        assert current_metrics(baseline, source="b") is None

    def test_tampered_current_metrics_are_refused(self, source, target):
        baseline = export_baseline(source)
        metrics = {**baseline.metrics, "surprise": 1}
        problems = import_problems(attrs.evolve(baseline, metrics=metrics), target, source="b")
        assert ["$.metrics"] == [p.field for p in problems]

    def test_an_unknown_field_is_named(self, source, tmp_path):
        data = document_json(export_baseline(source))
        data["extra"] = True
        path = tmp_path / "baseline.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ContractError) as caught:
            read_baseline(path)
        assert "extra" in str(caught.value.findings[0])


class TestCommands:
    def test_export_then_check(self, source, tmp_path, capsys):
        path = tmp_path / "baseline.json"
        assert 0 == main(["baseline", "export", str(source), "--out", str(path)])
        importing = tmp_path / "importing"
        importing.mkdir()
        write_plan(importing, arms=("hpatch",))
        _hashes(importing)
        assert 0 == main(["baseline", "check", str(path), "--run", str(importing)])
        assert "importable (current metrics)" in capsys.readouterr().out
        write_plan(importing, arms=("hpatch",), model="gpt-5.5")
        assert 1 == main(["baseline", "check", str(path), "--run", str(importing)])
        assert "$.model" in capsys.readouterr().err
