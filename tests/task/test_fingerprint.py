"""The task content fingerprint: every byte counts, metadata does not."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hpbench.task.fingerprint import fingerprint_inputs, task_fingerprint
from hpbench.task.manifest import load_manifest


def _fingerprint(task_dir: Path) -> str:
    return task_fingerprint(load_manifest(task_dir))


class TestFingerprint:
    def test_covers_manifest_prompt_and_hidden_files(self, task_copy: Path) -> None:
        """The inputs are exactly the manifest, the prompt and each hidden grader file."""
        names = [name for name, _ in fingerprint_inputs(load_manifest(task_copy))]
        assert ["hidden/kv/rangestream_hidden_test.go", "prompt.md", "task.toml"] == names

    @pytest.mark.parametrize(
        "relative", ["task.toml", "prompt.md", "hidden/kv/rangestream_hidden_test.go"]
    )
    @pytest.mark.parametrize("where", ["first line", "middle", "last byte"])
    def test_any_byte_changes_it(self, task_copy: Path, relative: str, where: str) -> None:
        """Changing one byte anywhere in any input changes the fingerprint.

        Bytes are replaced inside comments, strings or prose so the manifest
        stays loadable: a refused manifest would prove nothing here.
        """
        before = _fingerprint(task_copy)
        path = task_copy / relative
        data = bytearray(path.read_bytes())
        if where == "first line":
            index = 3
        elif where == "middle":
            index = data.index(b"Streaming") + 2 if relative == "task.toml" else len(data) // 2
        else:
            index = len(data) - 1
        data[index] = ord("y") if data[index] != ord("y") else ord("z")
        if where == "last byte":
            data[index] = ord(" ")
        path.write_bytes(bytes(data))
        assert before != _fingerprint(task_copy)

    def test_appending_a_byte_changes_it(self, task_copy: Path) -> None:
        """Length counts: a trailing newline makes a different task."""
        before = _fingerprint(task_copy)
        prompt = task_copy / "prompt.md"
        prompt.write_bytes(prompt.read_bytes() + b"\n")
        assert before != _fingerprint(task_copy)

    def test_metadata_does_not(self, task_copy: Path, tmp_path: Path) -> None:
        """mtimes, permissions and directory order leave it unchanged."""
        before = _fingerprint(task_copy)
        for path in task_copy.rglob("*"):
            if path.is_file():
                os.utime(path, (1, 1))
                path.chmod(0o600)
        other = tmp_path / "elsewhere" / "kv-rangestream"
        # Copy files in reverse order so directory entries are created differently.
        for path in sorted(task_copy.rglob("*"), reverse=True):
            target = other / path.relative_to(task_copy)
            if path.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        assert before == _fingerprint(task_copy)
        assert before == _fingerprint(other)

    def test_unrelated_files_do_not(self, task_copy: Path) -> None:
        """Files the fingerprint does not cover (the bundled sources) leave it unchanged.

        Source changes are caught instead by the revision check of every build.
        """
        before = _fingerprint(task_copy)
        (task_copy / "NOTES.txt").write_text("scratch")
        assert before == _fingerprint(task_copy)

    def test_bundled_task_is_stable(self, tasks_dir: Path, tmp_path: Path) -> None:
        """Two copies of the bundled task agree."""
        copy = tmp_path / "kv-rangestream"
        shutil.copytree(tasks_dir / "kv-rangestream", copy)
        assert _fingerprint(tasks_dir / "kv-rangestream") == _fingerprint(copy)
        assert _fingerprint(copy).startswith("sha256:")
        assert 71 == len(_fingerprint(copy))
