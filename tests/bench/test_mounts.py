"""Neutral mount paths (bench-lib.sh): what agents mount names nothing, and comes back.

A container's /proc/self/mountinfo shows each bind mount's source path, so the
workspace, Codex config, instructions and module cache live in random
directories under a per-run root, with symlinks in the run directory. When the
run ends, ``release_mounts`` moves each directory back behind its link. It may
only touch the links ``neutral_path`` made: an agent that learned the root's
path from its own mountinfo and planted a link to it in its workspace must not
get anything moved.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LIB = REPO_ROOT / "benchmarks" / "libexec" / "bench-lib.sh"


def lib(script: str, *args: str, base: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with bench-lib.sh sourced; ``$1``… are ``args``."""
    return subprocess.run(
        ["bash", "-c", f'set -euo pipefail; source "{LIB}"; {script}', "lib", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT), "HPBENCH_MOUNT_BASE": str(base)},
        timeout=30,
    )


def test_neutral_path_names_nothing_and_release_brings_it_back(tmp_path: Path) -> None:
    """The real path is <base>/<random>/<random>/m; the run directory links to it; after
    release the link is the directory again and the root is gone."""
    base = tmp_path / "base"
    base.mkdir()
    run_dir = tmp_path / "20261203T000000Z-paired-abcdef"
    link = run_dir / "reps" / "1" / "workspaces" / "control"
    run_dir.mkdir()
    made = lib(
        'p="$(neutral_path "$1" "$2")"; mkdir "$p"; echo hi >"$p/f"; echo "$p"',
        str(run_dir),
        str(link),
        base=base,
    )
    assert 0 == made.returncode, made.stderr
    real = Path(made.stdout.strip())
    relative = real.relative_to(base)
    assert 3 == len(relative.parts) and "m" == relative.parts[-1]
    for word in ("paired", "abcdef", "control", "workspaces", "reps", str(tmp_path.name)):
        assert word not in str(relative)
    assert link.is_symlink() and real == link.resolve()

    released = lib('release_mounts "$1"; release_mounts "$1"', str(run_dir), base=base)
    assert 0 == released.returncode, released.stderr
    assert link.is_dir() and not link.is_symlink()
    assert "hi\n" == (link / "f").read_text()
    assert [] == list(base.iterdir())
    assert not (run_dir / ".mounts").exists()


def test_neutral_copy_is_a_readable_file_under_a_neutral_name(tmp_path: Path) -> None:
    """Instructions are mounted as instructions.md, never as treatment.md."""
    base = tmp_path / "base"
    base.mkdir()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    source = tmp_path / "treatment.md"
    source.write_text("be careful\n")
    source.chmod(0o600)
    made = lib('neutral_copy "$1" "$2" instructions.md', str(run_dir), str(source), base=base)
    copy = Path(made.stdout.strip())
    assert "instructions.md" == copy.name
    assert "treatment" not in str(copy)
    assert 0o644 == copy.stat().st_mode & 0o777
    assert "be careful\n" == copy.read_text()


def test_a_planted_link_into_the_root_is_never_released(tmp_path: Path) -> None:
    """Two neutral directories (the arms' workspaces); in one, the agent plants a link to
    the other's real path. Release moves each workspace back behind its own link only:
    nothing lands inside the agent's workspace and the planted link stays a link."""
    base = tmp_path / "base"
    base.mkdir()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    made = lib(
        'a="$(neutral_path "$1" "$1/ws/a")"; b="$(neutral_path "$1" "$1/ws/b")";'
        ' mkdir "$a" "$b"; echo secret >"$b/secret"; ln -s "$b" "$a/planted"; echo "$b"',
        str(run_dir),
        base=base,
    )
    assert 0 == made.returncode, made.stderr
    other = made.stdout.strip()
    released = lib('release_mounts "$1"', str(run_dir), base=base)
    assert 0 == released.returncode, released.stderr
    planted = run_dir / "ws" / "a" / "planted"
    assert planted.is_symlink() and other == str(planted.readlink())
    assert "secret\n" == (run_dir / "ws" / "b" / "secret").read_text()
    assert ["planted"] == sorted(p.name for p in (run_dir / "ws" / "a").iterdir())
