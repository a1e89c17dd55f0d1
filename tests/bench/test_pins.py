"""The Codex version is pinned once: contrib/codex/pins.toml."""

from __future__ import annotations

from pathlib import Path

from hpbench.instructions.pins import default_pins_path, load_pins
from hpbench.settings import settings_from_env

REPO_ROOT = Path(__file__).resolve().parents[2]


def built_files() -> list[Path]:
    """What builds, provisions or runs the benchmark (tests and docs may quote versions)."""
    files = [REPO_ROOT / "Dockerfile", REPO_ROOT / "compose.yaml"]
    for tree in ("benchmarks", "hpbench"):
        files += [p for p in sorted((REPO_ROOT / tree).rglob("*")) if p.is_file()]
    return [p for p in files if "__pycache__" not in p.parts]


def test_the_version_stands_only_in_the_pin_file() -> None:
    """No build, provisioning or runtime file spells the pinned Codex version itself."""
    version = load_pins(default_pins_path()).pins.codex_version
    spelled = [
        str(path.relative_to(REPO_ROOT))
        for path in built_files()
        if version in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert [] == spelled


def test_settings_record_the_pinned_version() -> None:
    """run.json's codex_version is the pin."""
    assert (
        load_pins(default_pins_path()).pins.codex_version
        == settings_from_env("paired", {}).codex_version
    )
