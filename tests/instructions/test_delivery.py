"""Stock text from the bundled catalog, and delivery proven from provider records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hpbench.errors import ContractError
from hpbench.instructions.delivery import prove_delivery
from hpbench.instructions.stock import bundled_stock


def catalog(tmp_path: Path, models: object) -> Path:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": models}))
    return path


class TestBundled:
    def test_reads_the_slug(self, tmp_path: Path) -> None:
        """The named slug's base_instructions become the stock text, with version and model."""
        path = catalog(
            tmp_path,
            [
                {"slug": "gpt-5.5", "base_instructions": "other\n"},
                {"slug": "gpt-6-astra", "base_instructions": "astra text\n"},
            ],
        )
        stock = bundled_stock(path, "0.169.0", "gpt-6-astra")
        assert ("astra text\n", "0.169.0", "gpt-6-astra") == (
            stock.text,
            stock.codex_version,
            stock.model,
        )

    def test_unknown_slug(self, tmp_path: Path) -> None:
        """A model the catalog lacks has no stock text: refused, not guessed."""
        with pytest.raises(ContractError) as caught:
            bundled_stock(
                catalog(tmp_path, [{"slug": "gpt-5.5", "base_instructions": "x"}]),
                "0.169.0",
                "gpt-6-astra",
            )
        assert "stock.model" == caught.value.findings[0].code

    def test_empty_instructions(self, tmp_path: Path) -> None:
        """An entry without instructions is refused with its field."""
        with pytest.raises(ContractError) as caught:
            bundled_stock(
                catalog(tmp_path, [{"slug": "gpt-6-astra", "base_instructions": ""}]),
                "v",
                "gpt-6-astra",
            )
        assert "$.models[0].base_instructions" == caught.value.findings[0].field

    def test_not_a_catalog(self, tmp_path: Path) -> None:
        """A file that is not a catalog is refused."""
        path = tmp_path / "models.json"
        path.write_text("[1, 2]")
        with pytest.raises(ContractError):
            bundled_stock(path, "v", "m")


def records(tmp_path: Path, digests: list[tuple[str, str | None]], junk: bool = False) -> Path:
    path = tmp_path / "provider.jsonl"
    lines = [
        json.dumps({"seq": i, "script": script, "request": {"first_developer_sha256": digest}})
        for i, (script, digest) in enumerate(digests)
    ]
    if junk:
        lines.append("{not json")
    path.write_text("\n".join(lines) + "\n")
    return path


class TestDeliveryProof:
    @pytest.fixture
    def instructions(self, tmp_path: Path) -> tuple[Path, str]:
        path = tmp_path / "control.md"
        path.write_text("base text\n\nWork offline.\n")
        return path, hashlib.sha256(b"base text\n\nWork offline.").hexdigest()

    def test_every_request_carries_the_file(
        self, tmp_path: Path, instructions: tuple[Path, str]
    ) -> None:
        """All of the arm's requests carry the digest of the file minus its trailing newline."""
        path, digest = instructions
        proof = prove_delivery(
            records(tmp_path, [("control", digest), ("hpatch", "x"), ("control", digest)]),
            "control",
            path,
        )
        assert (True, 2, 2) == (proof.ok, proof.requests, proof.matching)

    def test_one_request_without_it(self, tmp_path: Path, instructions: tuple[Path, str]) -> None:
        """A single request with other instructions fails the proof."""
        path, digest = instructions
        proof = prove_delivery(
            records(tmp_path, [("control", digest), ("control", "0" * 64)]), "control", path
        )
        assert (False, 2, 1) == (proof.ok, proof.requests, proof.matching)

    def test_trailing_newline_counts(self, tmp_path: Path, instructions: tuple[Path, str]) -> None:
        """The digest of the file with its newline is not what Codex sends."""
        path, _ = instructions
        with_newline = hashlib.sha256(path.read_bytes()).hexdigest()
        assert not prove_delivery(
            records(tmp_path, [("control", with_newline)]), "control", path
        ).ok

    def test_no_requests_is_no_proof(self, tmp_path: Path, instructions: tuple[Path, str]) -> None:
        """An arm with no recorded request proves nothing."""
        path, digest = instructions
        assert not prove_delivery(records(tmp_path, [("hpatch", digest)]), "control", path).ok

    def test_unreadable_record(self, tmp_path: Path, instructions: tuple[Path, str]) -> None:
        """A corrupt record line makes the proof incomplete."""
        path, digest = instructions
        assert not prove_delivery(
            records(tmp_path, [("control", digest)], junk=True), "control", path
        ).ok

    def test_a_mentor_consultation_is_not_the_arms(
        self, tmp_path: Path, instructions: tuple[Path, str]
    ) -> None:
        """The router's Mentor consultation (recorded ``"mentor": true``) carries the
        mentor's instructions; it neither fails nor proves the arm's delivery."""
        path, digest = instructions
        lines = [
            {"script": "mentor", "mentor": True, "request": {"first_developer_sha256": "0" * 64}},
            {"script": "mentor", "request": {"first_developer_sha256": digest}},
        ]
        file = tmp_path / "provider.jsonl"
        file.write_text("".join(json.dumps(line) + "\n" for line in lines))
        proof = prove_delivery(file, "mentor", path)
        assert (True, 1, 1) == (proof.ok, proof.requests, proof.matching)
        file.write_text(json.dumps(lines[0]) + "\n")
        assert not prove_delivery(file, "mentor", path).ok
        # Only a true flag marks a consultation: a Codex request cannot shed its proof by
        # carrying a look-alike value.
        lines[1] = {**lines[1], "mentor": "yes", "request": {"first_developer_sha256": "1" * 64}}
        file.write_text("".join(json.dumps(line) + "\n" for line in lines))
        assert not prove_delivery(file, "mentor", path).ok
