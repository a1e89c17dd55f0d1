"""Kept captures: schema 6 is read; older and other versions are refused."""

from __future__ import annotations

import pytest

from hpbench.capture import codes, iter_records, load_snapshot, validate_capture
from hpbench.capture.models import ClientRecord, ExchangeRecord, ProviderRecord
from hpbench.errors import ContractError


@pytest.fixture
def data_dir(repo_root):
    return repo_root / "tests" / "data" / "capture"


class TestFixtures:
    @pytest.mark.parametrize("arm", ["hpatch", "control"])
    def test_reads_schema_6(self, data_dir, arm):
        """The kept schema-6 captures validate, Codex totals included."""
        root = data_dir / f"v6-{arm}"

        report = validate_capture(
            root / "capture", root / "metrics.json", arm=arm, codex_jsonl=[root / "codex.jsonl"]
        )

        assert report.ok, [str(f) for f in report.findings]

    def test_rejects_schema_5_records(self, data_dir):
        """Schema-5 records (and a snapshot vouching for them) are refused."""
        root = data_dir / "v5-records"

        report = validate_capture(root / "capture", root / "metrics.json", arm="hpatch")

        assert codes.SCHEMA_VERSION in report.codes()
        assert report.snapshot is None

    def test_rejects_v3_snapshot(self, data_dir):
        """hpatch.capture.metrics.v3 is refused."""
        root = data_dir / "v3-snapshot"

        with pytest.raises(ContractError) as caught:
            load_snapshot(root / "metrics.json")

        assert [codes.SCHEMA_VERSION] == [f.code for f in caught.value.findings]

    def test_rejects_v99_snapshot(self, data_dir, tmp_path):
        """A newer snapshot version is refused too."""
        text = (data_dir / "v6-hpatch" / "metrics.json").read_text()
        path = tmp_path / "metrics.json"
        path.write_text(text.replace("hpatch.capture.metrics.v4", "hpatch.capture.metrics.v99"))

        with pytest.raises(ContractError):
            load_snapshot(path)


class TestNotebookApi:
    def test_iter_records_yields_typed_records(self, data_dir):
        """iter_records gives attrs objects with their file and line."""
        records = list(iter_records(data_dir / "v6-hpatch" / "capture"))

        kinds = {type(record) for _, _, record in records}
        assert {ClientRecord, ProviderRecord, ExchangeRecord} == kinds
        assert list(range(1, len(records) + 1)) == [line for _, line, _ in records]

    def test_iter_records_refuses_a_bad_line(self, data_dir, tmp_path):
        """The first non-record stops iteration with a finding naming the line."""
        capture = tmp_path / "capture"
        capture.mkdir()
        good = (data_dir / "v6-hpatch" / "capture" / "records.jsonl").read_text()
        (capture / "records.jsonl").write_text(good + '{"kind": "client"}\n')

        with pytest.raises(ContractError) as caught:
            list(iter_records(capture))

        assert good.count("\n") + 1 == caught.value.findings[0].line

    def test_load_snapshot(self, data_dir):
        """load_snapshot gives the typed snapshot."""
        snapshot = load_snapshot(data_dir / "v6-hpatch" / "metrics.json")

        assert 5 == snapshot.requests.logical_requests
