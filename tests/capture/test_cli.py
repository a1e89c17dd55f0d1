"""``hpbench capture validate``."""

from __future__ import annotations

import json

from hpbench._cli.main import main


def _args(capture, *extra):
    return [
        "capture",
        "validate",
        "--arm",
        capture.arm,
        "--records",
        str(capture.records),
        "--snapshot",
        str(capture.snapshot_path),
        *extra,
    ]


class TestValidateCommand:
    def test_valid_prints_totals(self, capture, capsys):
        """A valid capture exits 0 with its totals."""
        code = main(_args(capture, "--codex-jsonl", *map(str, capture.codex)))

        out = capsys.readouterr().out
        assert 0 == code
        assert "capture valid" in out
        assert "provider attempts" in out
        assert "request savings" in out

    def test_models_are_held_to_the_configuration(self, capture, capsys):
        """--expect-model holds root attempts to it (and children to a proof): the
        synthetic capture's model passes, another is refused by name."""
        codex = ["--codex-jsonl", *map(str, capture.codex)]
        assert 0 == main(_args(capture, *codex, "--expect-model", "gpt-6-astra"))
        capsys.readouterr()

        code = main(_args(capture, *codex, "--expect-model", "gpt-5.5"))

        out = capsys.readouterr().out
        assert 1 == code
        assert "[capture.models.parent]" in out

    def test_child_and_mentor_models_need_the_parent_model(self, capture, capsys):
        assert 2 == main(_args(capture, "--mentor-model", "gpt-6-mentor"))
        assert "--expect-model" in capsys.readouterr().err

    def test_valid_json(self, capture, capsys):
        """--json prints the report as one object."""
        code = main(_args(capture, "--json"))

        report = json.loads(capsys.readouterr().out)
        assert 0 == code
        assert (True, "hpatch (hpatch/native)") == (report["ok"], report["label"])
        assert 12 == report["summary"]["requests"]["logical_requests"]

    def test_invalid_exits_1_with_every_finding(self, capture, capsys):
        """An invalid capture exits 1 and lists its findings with file and line."""
        capture.edit(0, lambda r: r.update(schema_version=5))

        code = main(_args(capture))

        out = capsys.readouterr().out
        assert 1 == code
        assert "capture invalid" in out
        assert f"{capture.record_file}:1: $.schema_version" in out
        assert "[capture.schema_version]" in out

    def test_invalid_json(self, capture, capsys):
        """--json on an invalid capture still prints the report, and exits 1."""
        code = main([*_args(capture, "--json")[:3], "control", *_args(capture, "--json")[4:]])

        report = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert report["label"] is None
        assert {"capture.binding"} == {f["code"] for f in report["findings"]}

    def test_contradiction_is_a_usage_error(self, capture, capsys):
        """--arm control with --expect-mode hpatch exits 2."""
        args = _args(capture, "--expect-mode", "hpatch")
        args[3] = "control"

        assert 2 == main(args)
        assert "control arm" in capsys.readouterr().err
