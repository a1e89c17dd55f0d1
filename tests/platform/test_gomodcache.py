"""The benchmark-owned module rejection, on hand-made and on real Go module caches."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpbench._cli.main import main
from hpbench.gomodcache import (
    escape_module_path,
    matches_prefix,
    owned_module_findings,
    unescape_module_path,
)


def _touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


class TestEscaping:
    def test_upper_case_becomes_bang(self) -> None:
        """Upper-case letters are escaped the way the module cache stores them."""
        assert "github.com/!burnt!sushi/toml" == escape_module_path("github.com/BurntSushi/toml")

    def test_round_trip(self) -> None:
        """Unescaping undoes escaping."""
        path = "example.com/Some/Mixed-Case.Path"
        assert path == unescape_module_path(escape_module_path(path))


class TestMatchesPrefix:
    @pytest.mark.parametrize(
        ("module", "expected"),
        [
            ("kvstore.example/kv", True),
            ("kvstore.example/kv/v2", True),
            ("kvstore.example/kv/client/v3", True),
            ("kvstore.example/kvx", False),
            ("kvstore.example", False),
        ],
    )
    def test_path_element_boundary(self, module: str, expected: bool) -> None:
        """A prefix owns itself and what lies under it, at a '/' boundary only."""
        assert expected == matches_prefix(module, "kvstore.example/kv")


class TestOwnedModuleFindings:
    def test_clean_cache(self, tmp_path: Path) -> None:
        """A cache holding only foreign modules is accepted."""
        _touch(tmp_path / "cache/download/example.test/dep/@v/v1.0.0.zip")
        (tmp_path / "example.test/dep@v1.0.0").mkdir(parents=True)
        assert [] == owned_module_findings(tmp_path, ["kvstore.example/kv"])

    def test_downloadable_copy(self, tmp_path: Path) -> None:
        """A zip the cache could serve as a proxy is one finding naming module and version."""
        for suffix in ("zip", "mod", "info"):
            _touch(tmp_path / f"cache/download/kvstore.example/kv/v2/@v/v2.0.0.{suffix}")
        findings = owned_module_findings(tmp_path, ["kvstore.example/kv"])
        assert ["gomodcache.owned.download"] == [f.code for f in findings]
        assert "kvstore.example/kv/v2@v2.0.0" in findings[0].message

    def test_extracted_tree(self, tmp_path: Path) -> None:
        """An extracted source tree is found even with escaped upper-case letters."""
        (tmp_path / "kvstore.example/!k!v@v1.2.3").mkdir(parents=True)
        findings = owned_module_findings(tmp_path, ["kvstore.example/KV"])
        assert ["gomodcache.owned.source"] == [f.code for f in findings]
        assert "kvstore.example/KV@v1.2.3" in findings[0].message

    def test_similar_name_is_not_owned(self, tmp_path: Path) -> None:
        """kvstore.example/kvx is not under kvstore.example/kv."""
        _touch(tmp_path / "cache/download/kvstore.example/kvx/@v/v1.0.0.zip")
        assert [] == owned_module_findings(tmp_path, ["kvstore.example/kv"])

    def test_vcs_clone(self, tmp_path: Path) -> None:
        """A version-control clone whose config names the prefix is refused."""
        _touch(
            tmp_path / "cache/vcs/0123abcd/config",
            '[remote "origin"]\n\turl = https://kvstore.example/kv\n',
        )
        findings = owned_module_findings(tmp_path, ["kvstore.example/kv"])
        assert ["gomodcache.owned.vcs"] == [f.code for f in findings]

    def test_missing_cache(self, tmp_path: Path) -> None:
        """A cache that does not exist is never accepted."""
        findings = owned_module_findings(tmp_path / "absent", ["kvstore.example/kv"])
        assert ["gomodcache.missing"] == [f.code for f in findings]


class TestCheckCommand:
    def test_task_prefixes_and_exit_code(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`gomodcache check --task` takes the manifest's prefixes and exits 1 naming the copy."""
        (tmp_path / "kvstore.example/kv@v0.0.0-oracle").mkdir(parents=True)
        code = main(["gomodcache", "check", str(tmp_path), "--task", "kv-rangestream"])
        out = capsys.readouterr().out
        assert 1 == code
        assert "kvstore.example/kv@v0.0.0-oracle" in out

    def test_clean_exit_zero(self, tmp_path: Path) -> None:
        """A clean cache exits 0."""
        assert 0 == main(["gomodcache", "check", str(tmp_path), "--prefix", "kvstore.example/kv"])


def _go(cwd: Path, cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": os.environ["PATH"],
        "HOME": str(cache.parent),
        "GOMODCACHE": str(cache),
        "GOCACHE": str(cache.parent / "gocache"),
        "GOFLAGS": "-mod=mod -modcacherw",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOVCS": "*:off",
        "GONOSUMDB": "*",
    }
    return subprocess.run(
        ["go", *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.go
class TestRealGoCache:
    def test_owned_dependency_is_rejected(
        self, tmp_path: Path, go_proxy: Any, consumer: Any
    ) -> None:
        """A cache filled from a file proxy that serves an owned module is rejected."""
        go_proxy.add("example.test/dep", "v1.0.0")
        go_proxy.add("kvstore.example/kv/v2", "v2.0.0")
        app = consumer(
            tmp_path / "app", {"example.test/dep": "v1.0.0", "kvstore.example/kv/v2": "v2.0.0"}
        )
        cache = tmp_path / "gomodcache"
        done = _go(app, cache, "mod", "download", "all", GOPROXY=go_proxy.url)
        assert 0 == done.returncode, done.stderr
        findings = owned_module_findings(cache, ["kvstore.example/kv"])
        assert {"gomodcache.owned.download", "gomodcache.owned.source"} == {
            f.code for f in findings
        }
        assert all("kvstore.example/kv/v2@v2.0.0" in f.message for f in findings)

    def test_clean_cache_serves_offline(self, tmp_path: Path, go_proxy: Any, consumer: Any) -> None:
        """A foreign-only cache is accepted and then resolves with GOPROXY=off."""
        go_proxy.add("example.test/dep", "v1.0.0")
        app = consumer(tmp_path / "app", {"example.test/dep": "v1.0.0"})
        cache = tmp_path / "gomodcache"
        assert 0 == _go(app, cache, "mod", "download", "all", GOPROXY=go_proxy.url).returncode
        assert [] == owned_module_findings(cache, ["kvstore.example/kv"])
        offline = _go(app, cache, "build", "./...", GOPROXY="off")
        assert 0 == offline.returncode, offline.stderr

    def test_missing_module_fails_with_proxy_off(self, tmp_path: Path, consumer: Any) -> None:
        """With GOPROXY=off a module absent from the cache fails instead of being fetched."""
        app = consumer(tmp_path / "app", {"example.test/absent": "v1.0.0"})
        cache = tmp_path / "gomodcache"
        cache.mkdir()
        done = _go(app, cache, "mod", "download", "all", GOPROXY="off")
        assert 0 != done.returncode
        assert "GOPROXY=off" in done.stderr
        shutil.rmtree(cache, ignore_errors=True)
