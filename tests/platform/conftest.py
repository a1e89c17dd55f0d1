"""Fixtures for the platform tests: a local file-based Go module proxy.

Offline tests never reach a real module proxy: they lay out their own
``GOPROXY=file://…`` tree (``<escaped module>/@v/{list,V.info,V.mod,V.zip}``)
from modules they write on the spot.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from hpbench.gomodcache import escape_module_path

from ..conftest import run


class GoProxy:
    """A file-based Go module proxy under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def url(self) -> str:
        """The ``GOPROXY`` value that serves this tree."""
        return self.root.as_uri()

    def add(self, module: str, version: str, files: Mapping[str, str] | None = None) -> None:
        """Publish ``module@version``; by default one package exporting ``Value``."""
        if files is None:
            files = {"m.go": f'package m\n\n// Value names the module.\nconst Value = "{module}"\n'}
        directory = self.root / escape_module_path(module) / "@v"
        directory.mkdir(parents=True, exist_ok=True)
        go_mod = files.get("go.mod", f"module {module}\n\ngo 1.19\n")
        (directory / f"{version}.mod").write_text(go_mod)
        (directory / f"{version}.info").write_text(
            json.dumps({"Version": version, "Time": "2024-01-01T00:00:00Z"})
        )
        with zipfile.ZipFile(directory / f"{version}.zip", "w") as archive:
            archive.writestr(f"{module}@{version}/go.mod", go_mod)
            for name, text in files.items():
                if name != "go.mod":
                    archive.writestr(f"{module}@{version}/{name}", text)
        listing = directory / "list"
        versions = set(listing.read_text().split()) if listing.exists() else set()
        listing.write_text("".join(f"{v}\n" for v in sorted(versions | {version})))


def write_consumer(directory: Path, requires: Mapping[str, str]) -> Path:
    """A main module at ``directory`` that imports each required module's package."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["module consumer.test/app", "", "go 1.19", ""]
    if requires:
        lines += ["require (", *(f"\t{m} {v}" for m, v in sorted(requires.items())), ")", ""]
    (directory / "go.mod").write_text("\n".join(lines))
    imports = "".join(f'\t_ "{m}"\n' for m in sorted(requires))
    body = f"import (\n{imports})\n\n" if imports else ""
    (directory / "main.go").write_text(f"package main\n\n{body}func main() {{}}\n")
    return directory


@pytest.fixture
def go_proxy(tmp_path: Path) -> GoProxy:
    """An empty file-based Go module proxy."""
    root = tmp_path / "goproxy"
    root.mkdir()
    return GoProxy(root)


@pytest.fixture
def consumer() -> object:
    """``consumer(dir, {module: version})`` writes a main module requiring those modules."""
    return write_consumer


@pytest.fixture
def bench() -> object:
    """``bench(command, env)``: run a command from the checkout, never raising."""
    return run
