"""Bundled tasks built into real, deterministic git history."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hpbench.errors import ContractError, HpbenchError
from hpbench.task.history import build_history
from hpbench.task.manifest import load_manifest


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


class TestBuildHistory:
    def test_builds_declared_revisions(self, tasks_dir: Path, tmp_path: Path) -> None:
        """The built commits are the manifest's base and oracle revisions."""
        task = load_manifest(tasks_dir / "kv-rangestream")
        built = build_history(task, tmp_path / "repo")
        assert task.manifest.source.base_revision == built.base_revision
        assert task.manifest.source.oracle_revision == built.oracle_revision
        assert built.oracle_revision == _git(built.repository, "rev-parse", "HEAD")
        assert built.base_revision == _git(built.repository, "rev-parse", "HEAD~1")
        assert "" == _git(built.repository, "status", "--porcelain")

    def test_oracle_changes_only_allowed_paths(self, tasks_dir: Path, tmp_path: Path) -> None:
        """The oracle's diff touches exactly the manifest's allowed paths."""
        task = load_manifest(tasks_dir / "kv-rangestream")
        built = build_history(task, tmp_path / "repo")
        changed = _git(
            built.repository, "diff", "--name-only", built.base_revision, built.oracle_revision
        ).splitlines()
        assert sorted(task.manifest.paths.allowed) == sorted(changed)

    def test_independent_of_permissions_and_umask(self, task_copy: Path, tmp_path: Path) -> None:
        """Modes and mtimes of the bundled files do not change the commits."""
        for path in task_copy.rglob("*"):
            if path.is_file():
                path.chmod(0o755)
                os.utime(path, (5, 5))
        old_umask = os.umask(0o077)
        try:
            built = build_history(load_manifest(task_copy), tmp_path / "repo")
        finally:
            os.umask(old_umask)
        modes = {
            line.split()[0] for line in _git(built.repository, "ls-tree", "-r", "HEAD").splitlines()
        }
        assert {"100644"} == modes

    def test_ignores_user_git_config(
        self, tasks_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A user's signing, autocrlf or identity settings cannot change the build."""
        config = tmp_path / "gitconfig"
        config.write_text(
            "[core]\n autocrlf = true\n[user]\n name = Someone\n[commit]\n gpgsign = true\n"
        )
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
        monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
        built = build_history(load_manifest(tasks_dir / "kv-rangestream"), tmp_path / "repo")
        assert "41ee2551ed96ac427e0639e109df93532989d6fe" == built.oracle_revision

    def test_changed_source_is_a_revision_mismatch(self, task_copy: Path, tmp_path: Path) -> None:
        """Editing a bundled file without updating the manifest is an error naming the field."""
        store = task_copy / "source" / "base" / "kv" / "store.go"
        store.write_text(store.read_text() + "\n// drift\n")
        with pytest.raises(ContractError) as caught:
            build_history(load_manifest(task_copy), tmp_path / "repo")
        fields = {f.field for f in caught.value.findings}
        assert {"$.source.base_revision", "$.source.oracle_revision"} == fields

    def test_oracle_only_change_keeps_base(self, task_copy: Path, tmp_path: Path) -> None:
        """Editing only the oracle overlay moves only the oracle revision."""
        overlay = task_copy / "source" / "oracle" / "kv" / "rangestream.go"
        overlay.write_text(overlay.read_text() + "\n// drift\n")
        with pytest.raises(ContractError) as caught:
            build_history(load_manifest(task_copy), tmp_path / "repo")
        assert ["$.source.oracle_revision"] == [f.field for f in caught.value.findings]

    def test_relative_output_path(
        self, tasks_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--out relative to the working directory builds there, not one level deeper."""
        monkeypatch.chdir(tmp_path)
        built = build_history(load_manifest(tasks_dir / "kv-rangestream"), Path("repo"))
        assert tmp_path / "repo" == built.repository
        assert (tmp_path / "repo" / ".git").is_dir()

    def test_refuses_non_empty_output(self, tasks_dir: Path, tmp_path: Path) -> None:
        """An existing, non-empty directory is never built into."""
        out = tmp_path / "repo"
        out.mkdir()
        (out / "keep").write_text("x")
        with pytest.raises(HpbenchError, match="non-empty"):
            build_history(load_manifest(tasks_dir / "kv-rangestream"), out)

    def test_refuses_symlinks(self, task_copy: Path, tmp_path: Path) -> None:
        """A symbolic link in the bundled tree is refused."""
        (task_copy / "source" / "base" / "link").symlink_to("/etc/hostname")
        with pytest.raises(HpbenchError, match="symbolic link"):
            build_history(load_manifest(task_copy), tmp_path / "repo")

    def test_deletion_of_missing_file(self, task_copy: Path, tmp_path: Path) -> None:
        """Deleting a file the base lacks is an inconsistent oracle change."""
        manifest = task_copy / "task.toml"
        manifest.write_text(
            manifest.read_text().replace(
                'oracle = "source/oracle"',
                'oracle = "source/oracle"\noracle_deletions = ["nope.go"]',
            )
        )
        with pytest.raises(ContractError) as caught:
            build_history(load_manifest(task_copy), tmp_path / "repo")
        assert "$.source.oracle_deletions[0]" == caught.value.findings[0].field

    def test_empty_oracle_change(self, task_copy: Path, tmp_path: Path) -> None:
        """An oracle overlay identical to the base is refused."""
        overlay = task_copy / "source" / "oracle"
        for path in list(overlay.rglob("*.go")):
            path.unlink()
        base_file = task_copy / "source" / "base" / "kv" / "kv.go"
        (overlay / "kv" / "kv.go").write_bytes(base_file.read_bytes())
        with pytest.raises(HpbenchError, match="changes nothing"):
            build_history(load_manifest(task_copy), tmp_path / "repo")
