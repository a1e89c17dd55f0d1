"""A real run's credential and CA bundle: where each comes from, and every bad one refused
by name without its value ever appearing in a finding or the settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest

from hpbench.errors import ContractError
from hpbench.settings import settings_from_env

KEY = "sk-hpbench-fake-7c1d9e0b5a"
REAL = {"PROVIDER": "https://models.example.invalid/v1", "HPATCH_ROUTER_IMAGE": "example/r:1"}


def _auth(tmp_path: Path, document: object, mode: int = 0o644) -> Path:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps(document))
    path.chmod(mode)
    return path


def _refusal(env: dict[str, str]) -> ContractError:
    with pytest.raises(ContractError) as caught:
        settings_from_env("paired", env)
    text = str(caught.value) + "".join(str(f) for f in caught.value.findings)
    assert KEY not in text
    return caught.value


class TestSources:
    def test_offline_has_none(self) -> None:
        settings = settings_from_env("paired", {})
        assert ("none", "", "") == (
            settings.credential,
            settings.auth_file,
            settings.provider_ca_bundle,
        )

    @pytest.mark.parametrize("name", ["HPBENCH_API_KEY", "OPENAI_API_KEY"])
    def test_a_key_variable_is_named_never_kept(self, name: str) -> None:
        settings = settings_from_env("paired", {**REAL, name: KEY})
        assert name == settings.credential
        assert KEY not in json.dumps(attrs.asdict(settings))

    def test_hpbench_key_comes_first(self) -> None:
        env = {**REAL, "OPENAI_API_KEY": "other", "HPBENCH_API_KEY": KEY}
        assert "HPBENCH_API_KEY" == settings_from_env("paired", env).credential

    def test_an_api_key_auth_file(self, tmp_path: Path) -> None:
        path = _auth(tmp_path, {"OPENAI_API_KEY": KEY})
        settings = settings_from_env("paired", {**REAL, "CODEX_AUTH_FILE": str(path)})
        assert ("CODEX_AUTH_FILE", str(path.resolve())) == (
            settings.credential,
            settings.auth_file,
        )
        assert KEY not in json.dumps(attrs.asdict(settings))

    def test_replay_ignores_a_key(self) -> None:
        """PROVIDER=replay with a key set: the offline demo sends the key nowhere."""
        settings = settings_from_env("paired", {"PROVIDER": "replay", "HPBENCH_API_KEY": KEY})
        assert (True, "none") == (settings.offline_demo, settings.credential)


class TestRefused:
    @pytest.mark.parametrize(
        ("document", "text"),
        [
            ({"OPENAI_API_KEY": ""}, "holds no OPENAI_API_KEY"),
            ({"OPENAI_API_KEY": None, "tokens": {"id_token": KEY}}, "holds no OPENAI_API_KEY"),
            ({"OPENAI_API_KEY": KEY, "tokens": {"access_token": KEY}}, "ChatGPT login"),
            ([KEY], "not a JSON object"),
        ],
    )
    def test_a_bad_auth_file_is_refused_without_its_content(
        self, tmp_path: Path, document: object, text: str
    ) -> None:
        path = _auth(tmp_path, document)
        error = _refusal({**REAL, "CODEX_AUTH_FILE": str(path)})
        [finding] = error.findings
        assert ("CODEX_AUTH_FILE", True) == (finding.field, text in finding.message)

    def test_an_auth_file_that_is_not_json_or_absent(self, tmp_path: Path) -> None:
        path = tmp_path / "auth.json"
        path.write_text(f"OPENAI_API_KEY={KEY}\n")
        assert "not JSON" in _refusal({**REAL, "CODEX_AUTH_FILE": str(path)}).findings[0].message
        missing = {**REAL, "CODEX_AUTH_FILE": str(tmp_path / "none.json")}
        assert "no such file" in _refusal(missing).findings[0].message

    @pytest.mark.skipif(os.geteuid() == 1000, reason="the agents' uid owns the file")
    def test_an_auth_file_the_agents_cannot_read_is_refused(self, tmp_path: Path) -> None:
        """It is bind-mounted as it is, and the agents' Codex runs as uid 1000."""
        path = _auth(tmp_path, {"OPENAI_API_KEY": KEY}, mode=0o600)
        [finding] = _refusal({**REAL, "CODEX_AUTH_FILE": str(path)}).findings
        assert "uid 1000" in finding.message
        os.chown(path, 1000, -1) if os.geteuid() == 0 else path.chmod(0o644)
        assert (
            "CODEX_AUTH_FILE"
            == settings_from_env("paired", {**REAL, "CODEX_AUTH_FILE": str(path)}).credential
        )

    def test_two_credentials_are_refused(self, tmp_path: Path) -> None:
        path = _auth(tmp_path, {"OPENAI_API_KEY": KEY})
        error = _refusal({**REAL, "CODEX_AUTH_FILE": str(path), "OPENAI_API_KEY": KEY})
        assert ["CODEX_AUTH_FILE"] == [finding.field for finding in error.findings]
        assert "give one credential" in error.findings[0].message

    @pytest.mark.parametrize(
        "url",
        [
            f"https://user:{KEY}@models.example.invalid/v1",
            f"https://models.example.invalid/v1?key={KEY}",
            "https://models.example.invalid/v1#frag",
        ],
    )
    def test_a_provider_url_carrying_a_secret_is_refused_without_quoting_it(self, url: str) -> None:
        """run.json keeps the URL, so a secret in it would be written down."""
        error = _refusal({**REAL, "PROVIDER": url, "HPBENCH_API_KEY": "k"})
        messages = [f.message for f in error.findings if f.field == "PROVIDER"]
        assert any("credentials, a query or a fragment" in m for m in messages)
        assert all(KEY not in m for m in messages)


class TestCaBundle:
    def test_a_pem_bundle_is_kept_by_path(self, tmp_path: Path) -> None:
        bundle = tmp_path / "ca.pem"
        bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        env = {**REAL, "HPBENCH_API_KEY": KEY, "PROVIDER_CA_BUNDLE": str(bundle)}
        assert str(bundle.resolve()) == settings_from_env("paired", env).provider_ca_bundle

    @pytest.mark.parametrize(
        ("content", "text"), [(None, "cannot read it"), ("not a cert\n", "no PEM certificate")]
    )
    def test_a_bad_bundle_is_refused(self, tmp_path: Path, content: str | None, text: str) -> None:
        bundle = tmp_path / "ca.pem"
        if content is not None:
            bundle.write_text(content)
        env = {**REAL, "HPBENCH_API_KEY": KEY, "PROVIDER_CA_BUNDLE": str(bundle)}
        [finding] = _refusal(env).findings
        assert ("PROVIDER_CA_BUNDLE", True) == (finding.field, text in finding.message)

    def test_the_offline_demo_refuses_a_bundle(self, tmp_path: Path) -> None:
        bundle = tmp_path / "ca.pem"
        bundle.write_text("-----BEGIN CERTIFICATE-----\n")
        [finding] = _refusal({"PROVIDER_CA_BUNDLE": str(bundle)}).findings
        assert "PROVIDER_CA_BUNDLE" == finding.field
