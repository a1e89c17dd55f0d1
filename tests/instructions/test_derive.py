"""Instruction derivation: exact, checkable, and refused when a pin does not fit."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from hpbench._documents import document_json
from hpbench.errors import ContractError
from hpbench.instructions import (
    PinSet,
    StockInstructions,
    default_pins_path,
    delivered_matches,
    derive,
    extract_stock,
    load_pins,
    read_stock,
    write_instructions,
    write_stock,
)
from hpbench.instructions.derive import CONTRACT as HASHES_CONTRACT
from hpbench.instructions.derive import read_hashes
from hpbench.instructions.stock import CONTRACT as STOCK_CONTRACT

from ..conftest import HPBENCH, run

RG_LINE = "- When you search for text or files, you reach first for `rg`."
EXEC_LINE = "- Exercise caution when escaping text for exec_command calls."
ANCHOR = "# Using skills"

STOCK = f"""You are a coding agent.

# Rules for getting work done

{RG_LINE}
- Do not chain shell commands with separators.
{EXEC_LINE}
- Run tests appropriate to the change.

{ANCHOR}

A skill is a set of instructions.
"""


@pytest.fixture
def pins_dir(tmp_path: Path) -> Path:
    """Pins for the synthetic stock text above, beside a guidance and a rule file."""
    directory = tmp_path / "codex"
    directory.mkdir()
    (directory / "guidance.md").write_text("# Editing files\n\n- Edit with apply_patch.\n")
    (directory / "rule.md").write_text("Work offline.\n")
    (directory / "issues.md").write_text("Report each recovered chain once.\n")
    write_pins(directory)
    return directory


def write_pins(directory: Path, **overrides: str) -> Path:
    values = {
        "codex_version": "0.169.0",
        "model": "gpt-6-astra",
        "guidance": "guidance.md",
        "isolation_rule": "rule.md",
        "issue_reporting_rule": "issues.md",
        "install_before_line": ANCHOR,
        "remove_rg_preference_line": RG_LINE,
        "remove_exec_command_line": EXEC_LINE,
        **overrides,
    }
    lines = [
        "schema_version = 1",
        *(f"{key} = {json.dumps(value)}" for key, value in values.items()),
    ]
    path = directory / "pins.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def stock(
    text: str = STOCK, version: str = "0.169.0", model: str = "gpt-6-astra"
) -> StockInstructions:
    return StockInstructions(text, version, model)


def diff_changes(diff: str) -> tuple[list[str], list[str]]:
    lines = diff.splitlines()
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    return removed, added


class TestDerive:
    def test_diff_holds_only_guidance_and_two_removed_lines(self, pins_dir: Path) -> None:
        """The diff removes exactly the two pinned lines and adds exactly the guidance block."""
        derived = derive(stock(), load_pins(pins_dir / "pins.toml"))
        removed, added = diff_changes(derived.diff)
        assert [RG_LINE, EXEC_LINE] == removed
        # difflib may align the block's blank separator on either side; the lines are the same.
        assert sorted(["# Editing files", "", "- Edit with apply_patch.", ""]) == sorted(added)

    def test_every_other_line_is_kept(self, pins_dir: Path) -> None:
        """Removing the guidance and restoring the two lines gives back the control text."""
        derived = derive(stock(), load_pins(pins_dir / "pins.toml"))
        treatment = derived.treatment.replace("# Editing files\n\n- Edit with apply_patch.\n\n", "")
        rebuilt = treatment.replace("- Do not chain", f"{RG_LINE}\n- Do not chain").replace(
            "- Run tests", f"{EXEC_LINE}\n- Run tests"
        )
        assert derived.control == rebuilt

    def test_guidance_sits_before_anchor(self, pins_dir: Path) -> None:
        """The guidance block ends right before the anchor line."""
        derived = derive(stock(), load_pins(pins_dir / "pins.toml"))
        assert "- Edit with apply_patch.\n\n# Using skills\n" in derived.treatment

    def test_both_arms_end_with_the_same_rule(self, pins_dir: Path) -> None:
        """Control is the stock text plus the rule; treatment ends with the same rule."""
        derived = derive(stock(), load_pins(pins_dir / "pins.toml"))
        assert STOCK + "\nWork offline.\n" == derived.control
        assert derived.treatment.endswith("\n\nWork offline.\n")

    def test_issue_reporting_adds_its_rule_to_the_treatment_only(
        self, pins_dir: Path, tmp_path: Path
    ) -> None:
        """Spec 004: with issue reporting on, the treatment (whose routers offer
        report_issue) ends with the rule after the isolation rule; the control never gets
        it, and hashes.json names the rule's digest only when it was given."""
        pin_set = load_pins(pins_dir / "pins.toml")
        off, on = derive(stock(), pin_set), derive(stock(), pin_set, report_issue=True)
        assert off.control == on.control
        assert "Report each recovered chain" not in off.treatment + on.control
        assert on.treatment == off.treatment + "\nReport each recovered chain once.\n"
        assert (
            write_instructions(off, pin_set, tmp_path / "off").issue_reporting_rule_sha256 is None
        )
        hashes = write_instructions(on, pin_set, tmp_path / "on")
        digest = hashlib.sha256(b"Report each recovered chain once.\n").hexdigest()
        assert digest == hashes.issue_reporting_rule_sha256
        assert read_hashes(tmp_path / "on" / "hashes.json") == hashes

    def test_a_missing_issue_reporting_rule_file_is_refused_by_name(self, pins_dir: Path) -> None:
        (pins_dir / "issues.md").unlink()
        with pytest.raises(ContractError) as caught:
            load_pins(pins_dir / "pins.toml")
        assert ["$.issue_reporting_rule"] == [f.field for f in caught.value.findings]

    def test_stock_bytes_survive(self, pins_dir: Path) -> None:
        """Unusual bytes (trailing spaces, tabs, non-ASCII) in other lines are kept exactly."""
        odd = STOCK.replace("You are a coding agent.", "You are a coding agent.  \t— ünïcode")
        derived = derive(stock(odd), load_pins(pins_dir / "pins.toml"))
        assert "You are a coding agent.  \t— ünïcode\n" in derived.treatment


class TestRefusals:
    @pytest.mark.parametrize(
        "field", ["install_before_line", "remove_rg_preference_line", "remove_exec_command_line"]
    )
    def test_stale_pin(self, pins_dir: Path, field: str) -> None:
        """A pin that matches no line refuses, showing the pin."""
        write_pins(pins_dir, **{field: "- a line the stock text does not have"})
        with pytest.raises(ContractError) as caught:
            derive(stock(), load_pins(pins_dir / "pins.toml"))
        (finding,) = caught.value.findings
        assert f"$.{field}" == finding.field
        assert "matched 0" in finding.message
        assert "a line the stock text does not have" in finding.message

    def test_ambiguous_pin(self, pins_dir: Path) -> None:
        """A pin that matches two lines refuses."""
        doubled = STOCK.replace(EXEC_LINE, f"{EXEC_LINE}\n{EXEC_LINE}")
        with pytest.raises(ContractError) as caught:
            derive(stock(doubled), load_pins(pins_dir / "pins.toml"))
        assert "matched 2" in caught.value.findings[0].message

    def test_partial_line_is_not_a_match(self, pins_dir: Path) -> None:
        """Pins match whole lines only."""
        write_pins(pins_dir, remove_rg_preference_line="- When you search")
        with pytest.raises(ContractError):
            derive(stock(), load_pins(pins_dir / "pins.toml"))

    def test_other_cli_version(self, pins_dir: Path) -> None:
        """A stock text from another CLI version is never derived with these pins."""
        with pytest.raises(ContractError, match="stale pins"):
            derive(stock(version="0.170.0"), load_pins(pins_dir / "pins.toml"))

    def test_other_model(self, pins_dir: Path) -> None:
        """A stock text for another model is never derived with these pins."""
        with pytest.raises(ContractError, match="stale pins"):
            derive(stock(model="gpt-5.5"), load_pins(pins_dir / "pins.toml"))

    def test_same_line_pinned_twice(self, pins_dir: Path) -> None:
        """The anchor and a removed line must differ."""
        write_pins(pins_dir, install_before_line=RG_LINE)
        with pytest.raises(ContractError, match="do not fit"):
            derive(stock(), load_pins(pins_dir / "pins.toml"))

    def test_unknown_pin_key(self, pins_dir: Path) -> None:
        """Pins are a strict contract too."""
        path = pins_dir / "pins.toml"
        path.write_text(path.read_text() + 'extra = "x"\n')
        with pytest.raises(ContractError) as caught:
            load_pins(path)
        assert "extra" in caught.value.findings[0].message

    def test_missing_guidance_file(self, pins_dir: Path) -> None:
        """A pin set whose guidance file is missing is refused."""
        (pins_dir / "guidance.md").unlink()
        with pytest.raises(ContractError) as caught:
            load_pins(pins_dir / "pins.toml")
        assert "$.guidance" == caught.value.findings[0].field


class TestRetention:
    def test_writes_four_private_files(self, pins_dir: Path, tmp_path: Path) -> None:
        """control.md, treatment.md, treatment.diff and hashes.json, private, with digests."""
        pin_set = load_pins(pins_dir / "pins.toml")
        derived = derive(stock(), pin_set)
        out = tmp_path / "run" / "instructions"
        hashes = write_instructions(derived, pin_set, out)
        names = sorted(p.name for p in out.iterdir())
        assert ["control.md", "hashes.json", "treatment.diff", "treatment.md"] == names
        assert 0o700 == out.stat().st_mode & 0o777
        for path in out.iterdir():
            assert 0o600 == path.stat().st_mode & 0o777
        document = json.loads((out / "hashes.json").read_text())
        assert document_json(hashes) == document
        assert hashes == read_hashes(out / "hashes.json")
        assert ("0.169.0", "gpt-6-astra") == (document["codex_version"], document["model"])
        for name in ("control.md", "treatment.md", "treatment.diff"):
            digest = hashlib.sha256((out / name).read_bytes()).hexdigest()
            assert digest == document["files"][name]["sha256"]

    def test_stock_artifact_round_trip(self, tmp_path: Path) -> None:
        """A kept stock text reads back with its version, model and digest."""
        write_stock(stock(), tmp_path, source="request.json")
        again = read_stock(tmp_path)
        assert (STOCK, "0.169.0", "gpt-6-astra") == (again.text, again.codex_version, again.model)

    def test_tampered_stock_artifact(self, tmp_path: Path) -> None:
        """A stock text edited after capture no longer matches its digest and is refused."""
        write_stock(stock(), tmp_path, source="request.json")
        (tmp_path / "stock.md").write_text(STOCK + "extra\n")
        with pytest.raises(ContractError) as caught:
            read_stock(tmp_path)
        assert "stock.digest" == caught.value.findings[0].code


class TestDocumentContracts:
    """stock.json and hashes.json are their models' JSON and are read back strictly."""

    def _hashes(self, pins_dir: Path, tmp_path: Path) -> Path:
        pin_set = load_pins(pins_dir / "pins.toml")
        write_instructions(derive(stock(), pin_set), pin_set, tmp_path / "out")
        return tmp_path / "out" / "hashes.json"

    def test_documents_are_valid_under_their_schemas(
        self, pins_dir: Path, tmp_path: Path, repo_root: Path
    ) -> None:
        """Both written documents validate against the generated schemas; a stray key does not."""
        write_stock(stock(), tmp_path, source="request.json")
        documents = {
            STOCK_CONTRACT.schema_file: json.loads((tmp_path / "stock.json").read_text()),
            HASHES_CONTRACT.schema_file: json.loads(self._hashes(pins_dir, tmp_path).read_text()),
        }
        for name, document in documents.items():
            schema = json.loads((repo_root / "contrib" / "schemas" / name).read_text())
            validator = jsonschema.Draft202012Validator(schema)
            validator.validate(document)
            assert not validator.is_valid({**document, "note": "x"}), name

    def test_hashes_with_an_unknown_key_or_wrong_type(self, pins_dir: Path, tmp_path: Path) -> None:
        """A hashes.json with a key the contract lacks or a size that is text is refused."""
        path = self._hashes(pins_dir, tmp_path)
        document = json.loads(path.read_text())
        document["signed_by"] = "someone"
        document["files"]["control.md"]["bytes"] = "12"
        path.write_text(json.dumps(document))
        with pytest.raises(ContractError) as caught:
            read_hashes(path)
        fields = {f.field for f in caught.value.findings}
        assert "$" in fields
        assert any(f is not None and f.startswith("$.files") for f in fields)
        assert {"instructions.hashes"} == {f.code for f in caught.value.findings}

    def test_stock_meta_of_another_schema(self, tmp_path: Path) -> None:
        """stock.json of another schema or with an extra key is refused by field."""
        write_stock(stock(), tmp_path, source="request.json")
        meta = json.loads((tmp_path / "stock.json").read_text())
        (tmp_path / "stock.json").write_text(
            json.dumps({**meta, "schema": "hpbench.instructions.stock.v0", "extra": 1})
        )
        with pytest.raises(ContractError) as caught:
            read_stock(tmp_path)
        assert {"$.schema", "$"} == {f.field for f in caught.value.findings}
        assert {"stock.schema"} == {f.code for f in caught.value.findings}


class TestExtract:
    def _request(self, tmp_path: Path, items: list[object], model: str = "gpt-6-astra") -> Path:
        path = tmp_path / "request.json"
        path.write_text(json.dumps({"model": model, "input": items}))
        return path

    def test_skips_additional_tools_item(self, tmp_path: Path) -> None:
        """The developer-role additional_tools item is not the base instructions."""
        items = [
            {"type": "additional_tools", "role": "developer", "tools": []},
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": STOCK}],
            },
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "other"}],
            },
        ]
        assert STOCK == extract_stock(self._request(tmp_path, items), "0.169.0", "gpt-6-astra").text

    def test_refuses_other_model(self, tmp_path: Path) -> None:
        """A request for another model cannot be kept as this model's stock text."""
        items = [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "x"}],
            }
        ]
        with pytest.raises(ContractError) as caught:
            extract_stock(self._request(tmp_path, items, model="gpt-5.5"), "0.169.0", "gpt-6-astra")
        assert "$.model" == caught.value.findings[0].field

    def test_refuses_missing_developer_message(self, tmp_path: Path) -> None:
        """No developer message, no stock text."""
        items = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ]
        with pytest.raises(ContractError, match="base instructions"):
            extract_stock(self._request(tmp_path, items), "0.169.0", "gpt-6-astra")

    def test_refuses_multi_part_message(self, tmp_path: Path) -> None:
        """A developer message of several parts is ambiguous and refused."""
        parts = [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]
        items = [{"type": "message", "role": "developer", "content": parts}]
        with pytest.raises(ContractError) as caught:
            extract_stock(self._request(tmp_path, items), "0.169.0", "gpt-6-astra")
        assert "$.input[0].content" == caught.value.findings[0].field


class TestDelivery:
    def test_trailing_newline_is_the_only_allowed_difference(self, tmp_path: Path) -> None:
        """Codex strips one trailing newline; anything else is a different text."""
        path = tmp_path / "control.md"
        path.write_text("line one\nline two\n")
        assert delivered_matches("line one\nline two", path)
        assert not delivered_matches("line one\nline two\n", path)
        assert not delivered_matches("line one\nline  two", path)


class TestRepositoryPins:
    def test_repository_pins_load(self) -> None:
        """contrib/codex/pins.toml is valid and names the pinned CLI and default model."""
        pin_set = load_pins(default_pins_path())
        assert ("0.169.0", "gpt-6-astra") == (pin_set.pins.codex_version, pin_set.pins.model)
        assert pin_set.guidance_text.startswith("# Editing files\n")

    def test_task_prompt_repeats_the_rule(self, tasks_dir: Path) -> None:
        """Every bundled task's prompt repeats the offline-isolation rule verbatim."""
        rule = load_pins(default_pins_path()).isolation_rule_text.strip()
        for prompt in tasks_dir.glob("*/prompt.md"):
            assert rule in prompt.read_text(), prompt

    def test_pins_copy_is_independent(self, tmp_path: Path) -> None:
        """Pins resolve their files relative to the pins file, not the working directory."""
        copy = tmp_path / "codex"
        shutil.copytree(default_pins_path().parent, copy)
        assert isinstance(load_pins(copy / "pins.toml"), PinSet)


class TestPrepareCommand:
    def test_one_start_writes_what_bundled_then_derive_write(
        self, pins_dir: Path, tmp_path: Path
    ) -> None:
        """``instructions prepare`` (the run's one start) leaves byte for byte what
        ``bundled`` into stock/ and then ``derive`` leave."""
        catalog = tmp_path / "models.json"
        catalog.write_text(
            json.dumps({"models": [{"slug": "gpt-6-astra", "base_instructions": STOCK}]})
        )
        pins = str(pins_dir / "pins.toml")
        common = ["--codex-version", "0.169.0", "--model", "gpt-6-astra"]
        two = tmp_path / "two"
        for args in (
            ["bundled", str(catalog), *common, "--out", str(two / "stock")],
            ["derive", "--stock", str(two / "stock"), "--out", str(two), "--pins", pins],
        ):
            assert 0 == run([str(HPBENCH), "instructions", *args]).returncode
        one = tmp_path / "one"
        done = run(
            [
                str(HPBENCH),
                "instructions",
                "prepare",
                str(catalog),
                *common,
                "--out",
                str(one),
                "--pins",
                pins,
            ]
        )
        assert 0 == done.returncode, done.stderr
        files = sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
        assert all((two / name).read_bytes() == (one / name).read_bytes() for name in files)

    def test_a_stale_pin_stops_it(self, pins_dir: Path, tmp_path: Path) -> None:
        """A catalog text the pins do not fit is refused, and no derived file is written."""
        catalog = tmp_path / "models.json"
        text = STOCK.replace(RG_LINE, "- something else")
        catalog.write_text(
            json.dumps({"models": [{"slug": "gpt-6-astra", "base_instructions": text}]})
        )
        out = tmp_path / "out"
        done = run(
            [
                str(HPBENCH),
                "instructions",
                "prepare",
                str(catalog),
                "--codex-version",
                "0.169.0",
                "--model",
                "gpt-6-astra",
                "--out",
                str(out),
                "--pins",
                str(pins_dir / "pins.toml"),
            ]
        )
        assert 1 == done.returncode
        assert not (out / "control.md").exists()
