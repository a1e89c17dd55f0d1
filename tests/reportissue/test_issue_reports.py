"""Issue reports (spec 004): the diagnose hook, the runner's strict collection, the run's
collection and the report's section. Every refusal is fed the bad thing it refuses."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from hpbench.issuereports import model as m
from hpbench.issuereports.collect import collect, consolidated_text, read_reports
from hpbench.report.issues import issue_reports_section

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "contrib" / "diagnose-hook" / "hpbench-diagnose-hook"
REPORT = {"title": "hpatch rejected a context line", "markdown": "It said *why*.\n\n- fixed"}


def _hook(directory: Path, data: bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    environment = {"PATH": os.environ["PATH"], m.HOOK_DIRECTORY_VARIABLE: str(directory), **env}
    return subprocess.run(
        [str(HOOK)], input=data, env=environment, capture_output=True, timeout=30, check=False
    )


def _encoded(report: dict[str, Any]) -> bytes:
    return json.dumps(report, ensure_ascii=False).encode()


class TestDiagnoseHook:
    def test_publishes_the_bytes_unchanged_privately_under_a_published_name(
        self, tmp_path: Path
    ) -> None:
        directory = tmp_path / "capture" / "issue-reports"
        data = _encoded(REPORT)
        assert 0 == _hook(directory, data).returncode
        (published,) = directory.iterdir()
        assert m.REPORT_NAME.fullmatch(published.name)
        assert data == published.read_bytes()
        assert 0o600 == published.stat().st_mode & 0o777
        assert 0o700 == directory.stat().st_mode & 0o777

    def test_an_empty_report_is_refused_and_leaves_nothing(self, tmp_path: Path) -> None:
        directory = tmp_path / "issue-reports"
        result = _hook(directory, b"")
        assert 0 != result.returncode
        assert b"empty report" in result.stderr
        assert [] == list(directory.iterdir())

    def test_without_its_directory_it_refuses_by_name(self, tmp_path: Path) -> None:
        result = subprocess.run(
            [str(HOOK)],
            input=b"{}",
            env={"PATH": os.environ["PATH"]},
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert 0 != result.returncode
        assert m.HOOK_DIRECTORY_VARIABLE.encode() in result.stderr

    def test_concurrent_reports_never_share_or_replace_a_file(self, tmp_path: Path) -> None:
        """Reports published at once (same second) each get their own file, whole."""
        directory = tmp_path / "issue-reports"
        reports = [_encoded({**REPORT, "title": f"report {n}"}) for n in range(24)]
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda data: _hook(directory, data), reports))
        assert all(result.returncode == 0 for result in results)
        published = sorted(path.read_bytes() for path in directory.iterdir())
        assert sorted(reports) == published
        collected, findings = read_reports(directory)
        assert [] == findings
        assert 24 == len(collected)


def _publish(directory: Path, name: str, data: bytes, mode: int = 0o600) -> Path:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)
    path = directory / name
    path.write_bytes(data)
    path.chmod(mode)
    return path


NAME_1 = "report-20261204T100000Z-aaaaaaaaaa.json"
NAME_2 = "report-20261204T100001Z-AAAAAAAAAA.json"


class TestCollect:
    def test_consolidates_exact_strings_in_publication_order_and_nothing_else(
        self, tmp_path: Path
    ) -> None:
        directory = tmp_path / "capture" / "issue-reports"
        second = {"title": "ünïcode — second", "markdown": "`code`\r\nline"}
        _publish(directory, NAME_2, _encoded(second))
        _publish(directory, NAME_1, _encoded(REPORT))
        out = tmp_path / "issue-reports.jsonl"
        collected = collect(directory, out)
        assert collected.ok and out == collected.written
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [
            {"schema": m.CONSOLIDATED_SCHEMA, **REPORT},
            {"schema": m.CONSOLIDATED_SCHEMA, **second},
        ] == lines
        assert 0o600 == out.stat().st_mode & 0o777

    def test_no_directory_is_no_report_and_an_empty_collection_is_kept(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "capture").mkdir()
        out = tmp_path / "issue-reports.jsonl"
        collected = collect(tmp_path / "capture" / "issue-reports", out)
        assert collected.ok and () == collected.reports
        assert "" == out.read_text()

    def test_no_capture_at_all_is_refused(self, tmp_path: Path) -> None:
        collected = collect(tmp_path / "capture" / "issue-reports", tmp_path / "out.jsonl")
        assert [m.CODE_MISSING] == [f.code for f in collected.findings]
        assert collected.written is None

    def test_never_overwrites_a_collection(self, tmp_path: Path) -> None:
        directory = tmp_path / "capture" / "issue-reports"
        _publish(directory, NAME_1, _encoded(REPORT))
        out = tmp_path / "issue-reports.jsonl"
        out.write_text("earlier\n")
        collected = collect(directory, out)
        assert [m.CODE_OVERWRITE] == [f.code for f in collected.findings]
        assert "earlier\n" == out.read_text()

    @pytest.mark.parametrize(
        ("data", "code", "field"),
        [
            (b'{"title": "t"', m.CODE_JSON, None),
            (b"\xff\xfe", m.CODE_ENCODING, None),
            (b'{"title": "a", "title": "b", "markdown": ""}', m.CODE_JSON, None),
            (b"[]", m.CODE_SCHEMA, "$"),
            (b'{"title": "t"}', m.CODE_SCHEMA, "$.markdown"),
            (b'{"title": 3, "markdown": ""}', m.CODE_SCHEMA, "$.title"),
            # Identity added by whoever wrote it is refused by name, never carried on.
            (b'{"title": "t", "markdown": "", "session": "s1"}', m.CODE_SCHEMA, "$"),
            (b'{"title": " ", "markdown": ""}', m.CODE_SCHEMA, "$.title"),
            (b'{"title": "a\\nb", "markdown": ""}', m.CODE_SCHEMA, "$.title"),
            (b'{"title": "' + b"x" * 201 + b'", "markdown": ""}', m.CODE_SCHEMA, "$.title"),
            (b'{"title": "t", "markdown": "\\ud800"}', m.CODE_ENCODING, "$.markdown"),
            (
                b'{"title": "t", "markdown": "' + b"x" * m.MAX_REPORT_BYTES + b'"}',
                m.CODE_SIZE,
                None,
            ),
        ],
    )
    def test_a_bad_report_is_refused_by_file_and_field(
        self, tmp_path: Path, data: bytes, code: str, field: str | None
    ) -> None:
        directory = tmp_path / "capture" / "issue-reports"
        _publish(directory, NAME_1, _encoded(REPORT))
        bad = _publish(directory, NAME_2, data)
        out = tmp_path / "issue-reports.jsonl"
        collected = collect(directory, out)
        assert [(code, str(bad), field)] == [(f.code, f.file, f.field) for f in collected.findings]
        # Nothing is consolidated as if it were fine.
        assert collected.written is None and not out.exists()

    def test_an_added_identity_is_named(self, tmp_path: Path) -> None:
        directory = tmp_path / "issue-reports"
        _publish(directory, NAME_1, _encoded({**REPORT, "thread_id": "t-1"}))
        _, findings = read_reports(directory)
        assert ["unknown field(s): thread_id"] == [f.message for f in findings]

    def test_a_leftover_or_misnamed_file_is_refused(self, tmp_path: Path) -> None:
        directory = tmp_path / "issue-reports"
        _publish(directory, NAME_1, _encoded(REPORT))
        _publish(directory, ".report.Ab3dEf9hIj", b'{"title": "half')
        _publish(directory, "notes.json", _encoded(REPORT))
        reports, findings = read_reports(directory)
        assert [m.CODE_LEFTOVER, m.CODE_LEFTOVER] == [f.code for f in findings]
        assert 1 == len(reports)

    def test_permissions_are_checked(self, tmp_path: Path) -> None:
        directory = tmp_path / "issue-reports"
        readable = _publish(directory, NAME_1, _encoded(REPORT), mode=0o644)
        directory.chmod(0o755)
        _, findings = read_reports(directory)
        assert {(m.CODE_PERMISSIONS, str(directory)), (m.CODE_PERMISSIONS, str(readable))} == {
            (f.code, f.file) for f in findings
        }

    def test_a_symlinked_report_is_never_followed(self, tmp_path: Path) -> None:
        """A report that is a link could make the runner read (and consolidate) any file."""
        secret = tmp_path / "secret.json"
        secret.write_bytes(_encoded({"title": "host secret", "markdown": "sk-..."}))
        directory = tmp_path / "issue-reports"
        directory.mkdir(mode=0o700)
        (directory / NAME_1).symlink_to(secret)
        reports, findings = read_reports(directory)
        assert [] == reports
        assert [(m.CODE_FILE, "the report is a symlink")] == [(f.code, f.message) for f in findings]

    def test_a_symlinked_directory_is_never_followed(self, tmp_path: Path) -> None:
        elsewhere = tmp_path / "elsewhere"
        _publish(elsewhere, NAME_1, _encoded(REPORT))
        (tmp_path / "issue-reports").symlink_to(elsewhere)
        reports, findings = read_reports(tmp_path / "issue-reports")
        assert [] == reports
        assert [m.CODE_FILE] == [f.code for f in findings]

    def test_consolidated_lines_hold_no_identity(self) -> None:
        text = consolidated_text([m.HookReport(**REPORT)])
        assert {"schema", "title", "markdown"} == set(json.loads(text))


class TestReportSection:
    def _run_dir(self, tmp_path: Path, attempts: list[dict[str, Any]]) -> Path:
        document = {"schema": m.COLLECTION_SCHEMA, "attempts": attempts}
        (tmp_path / "issue-reports.json").write_text(json.dumps(document))
        return tmp_path

    def test_off_is_no_section_and_no_reason(self, tmp_path: Path) -> None:
        assert (None, []) == issue_reports_section(tmp_path, {"report_issue": False})

    def test_counts_are_summed(self, tmp_path: Path) -> None:
        attempt = {"repetition": 1, "arm": "hpatch", "file": "x", "findings": [], "calls": 2}
        run_dir = self._run_dir(
            tmp_path, [{**attempt, "collected": 2}, {**attempt, "arm": "ctp", "collected": 1}]
        )
        section, reasons = issue_reports_section(run_dir, {"report_issue": True})
        assert section is not None and [] == reasons
        assert (3, 4) == (section["collected"], section["calls"])

    def test_an_unknown_call_count_is_unknown_not_zero(self, tmp_path: Path) -> None:
        attempt = {"repetition": 1, "arm": "hpatch", "file": "x", "findings": [], "collected": 1}
        run_dir = self._run_dir(
            tmp_path, [{**attempt, "calls": 1}, {**attempt, "arm": "ctp", "calls": None}]
        )
        section, _ = issue_reports_section(run_dir, {"report_issue": True})
        assert section is not None and (2, None) == (section["collected"], section["calls"])

    def test_refused_reports_fail_the_run_and_count_nothing(self, tmp_path: Path) -> None:
        run_dir = self._run_dir(
            tmp_path,
            [
                {
                    "repetition": 1,
                    "arm": "hpatch",
                    "collected": None,
                    "calls": 1,
                    "file": None,
                    "findings": ["x"],
                }
            ],
        )
        section, reasons = issue_reports_section(run_dir, {"report_issue": True})
        assert section is not None and section["collected"] is None
        assert ["issue reports of 1-hpatch refused: 1 finding(s)"] == reasons

    def test_on_without_a_collection_fails_the_run(self, tmp_path: Path) -> None:
        section, reasons = issue_reports_section(tmp_path, {"report_issue": True})
        assert section == {"collected": None, "calls": None, "attempts": []}
        assert 1 == len(reasons) and "no readable collection" in reasons[0]

    def test_a_collection_with_unknown_keys_is_refused(self, tmp_path: Path) -> None:
        attempt = {"repetition": 1, "arm": "hpatch", "collected": 1, "calls": 1, "file": "x"}
        run_dir = self._run_dir(tmp_path, [{**attempt, "findings": [], "thread": "t-1"}])
        _, reasons = issue_reports_section(run_dir, {"report_issue": True})
        assert 1 == len(reasons) and "no readable collection" in reasons[0]
