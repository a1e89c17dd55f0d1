"""Edit rounds in report.json's commands section and in summary.md's "Edit rounds" tables."""

from __future__ import annotations

from pathlib import Path

from hpbench.codex.testing import StreamBuilder
from hpbench.report import build_report, render_summary

from .conftest import always_valid, make_run, paired_attempts, snapshot

HEADER = (
    "| attempt | rounds | completed file changes | failed file changes | changes per round "
    "| commands between rounds | rounds followed by a test/build |"
)


def _run(tmp_path: Path) -> Path:
    return make_run(
        tmp_path,
        paired_attempts([(True, True)]),
        {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 300)},
    )


def _write_stream(run: Path, key: str, builder: StreamBuilder) -> None:
    (run / "attempts" / key / "codex.jsonl").write_text(builder.text())


def _table(summary: str, arm: str) -> list[str]:
    """The rows of ``arm``'s edit-round table, header included."""
    lines = summary.splitlines()
    start = lines.index("### Edit rounds")
    at = lines.index(f"{arm}:", start) + 2
    rows = []
    while at < len(lines) and lines[at].startswith("|"):
        rows.append(lines[at])
        at += 1
    return rows


class TestEditRounds:
    def test_report_and_summary_row(self, tmp_path: Path) -> None:
        """Two rounds, each followed by a test, with a failed change in the second: the
        figures in report.json and the exact row of the arm's table."""
        run = _run(tmp_path)
        builder = StreamBuilder().start().patch(["a.go"]).command("go test ./...")
        builder.reasoning("again").patch(["b.go"], status="failed").patch(["b.go", "c.go"])
        builder.patch(["c.go"]).command("go test ./...").message("done").complete()
        _write_stream(run, "1-hpatch", builder)
        report = build_report(run, always_valid)
        assert {
            "1-hpatch": {
                "rounds": 2,
                "file_changes": 3,
                "failed_file_changes": 1,
                "changes_per_round": [1, 2],
                "commands_between_rounds": 1,
                "commands_after_last_round": 1,
                "rounds_followed_by_test": 2,
            }
        } == report["commands"]["hpatch"]["edit_rounds"]
        assert [
            HEADER,
            "|---|---|---|---|---|---|---|",
            "| 1-hpatch | 2 | 3 | 1 | 1, 2 | 1 | 2 |",
        ] == (_table(render_summary(report), "hpatch"))

    def test_no_edits_is_zero_rounds(self, tmp_path: Path) -> None:
        """An analysed stream with no file change has 0 rounds and an empty list."""
        run = _run(tmp_path)
        _write_stream(run, "1-control", StreamBuilder().start().command("ls").complete())
        report = build_report(run, always_valid)
        rounds = report["commands"]["control"]["edit_rounds"]["1-control"]
        assert (0, [], 0) == (rounds["rounds"], rounds["changes_per_round"], rounds["file_changes"])
        assert (
            "| 1-control | 0 | 0 | 0 | none | 0 | 0 |"
            == _table(render_summary(report), "control")[2]
        )

    def test_absent_jsonl_is_unavailable(self, tmp_path: Path) -> None:
        """No Codex JSONL: the attempt's rounds are null and every cell says unavailable."""
        run = _run(tmp_path)
        (run / "attempts" / "1-hpatch" / "codex.jsonl").unlink()
        report = build_report(run, always_valid)
        assert {"1-hpatch": None} == report["commands"]["hpatch"]["edit_rounds"]
        row = _table(render_summary(report), "hpatch")[2]
        assert "| 1-hpatch | " + " | ".join(["unavailable"] * 6) + " |" == row

    def test_unreadable_jsonl_is_unavailable(self, tmp_path: Path) -> None:
        """A JSONL that cannot be read at all (a directory in its place) is unavailable."""
        run = _run(tmp_path)
        stream = run / "attempts" / "1-control" / "codex.jsonl"
        stream.unlink()
        stream.mkdir()
        report = build_report(run, always_valid)
        assert None is report["commands"]["control"]["edit_rounds"]["1-control"]
        assert "| 1-control | unavailable |" in _table(render_summary(report), "control")[2]

    def test_says_what_the_items_are(self, tmp_path: Path) -> None:
        """The section says the rounds are client file_change items, not routed calls."""
        summary = render_summary(build_report(_run(tmp_path), always_valid))
        assert (
            "These are the client-side `file_change` items as Codex executed them (failed ones "
            "included), which are not the same as routed Hpatch calls: those are in the Hpatch "
            "section."
        ) in summary

    def test_arm_without_attempts(self, tmp_path: Path) -> None:
        """An arm with no attempt prints one unavailable row rather than an empty table."""
        run = make_run(tmp_path, paired_attempts([(True, True)])[:1], {})
        report = build_report(run, always_valid)
        assert {} == report["commands"]["hpatch"]["edit_rounds"]
        row = _table(render_summary(report), "hpatch")[2]
        assert "| (no attempt) | " + " | ".join(["unavailable"] * 6) + " |" == row
