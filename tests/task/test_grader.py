"""The kv-rangestream hidden grader, run with a local Go toolchain.

Qualification in the benchmark runs the same grader in the grader container;
here it runs on the host so the grader's own verdicts are proven: base fails
for the right reason, the oracle passes, and plausible wrong changes fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import Task, load_manifest

pytestmark = pytest.mark.go

REPO_ROOT = Path(__file__).resolve().parents[2]
ORACLE_STREAM = REPO_ROOT / "tasks/kv-rangestream/source/oracle/kv/rangestream.go"


@pytest.fixture(scope="module")
def task() -> Task:
    return load_manifest(REPO_ROOT / "tasks" / "kv-rangestream")


@pytest.fixture(scope="module")
def built(task: Task, tmp_path_factory: pytest.TempPathFactory) -> BuiltHistory:
    return build_history(task, tmp_path_factory.mktemp("task") / "repo")


def checkout(built: BuiltHistory, revision: str, out: Path) -> Path:
    subprocess.run(
        [
            "git",
            "-C",
            str(built.repository),
            "worktree",
            "add",
            "-q",
            "--detach",
            str(out),
            revision,
        ],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(out / ".git", ignore_errors=True)
    (out / ".git").unlink(missing_ok=True)
    return out


def grade(task: Task, workspace: Path) -> subprocess.CompletedProcess[str]:
    """Inject the hidden files into ``workspace`` and run the grader command offline."""
    for name, path in task.grader_file_paths():
        target = workspace / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    env = {
        **os.environ,
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOVCS": "*:off",
        "GOFLAGS": "-mod=mod",
    }
    return subprocess.run(
        list(task.manifest.grader.command),
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        timeout=task.manifest.grader.timeout_seconds,
        check=False,
    )


def failed_tests(result: subprocess.CompletedProcess[str]) -> set[str]:
    names = set()
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("Action") == "fail" and event.get("Test"):
                names.add(event["Test"].split("/")[0])
    return names


class TestQualification:
    def test_base_fails_with_discriminator(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """On base the grader fails, and its output names the missing method."""
        result = grade(task, checkout(built, built.base_revision, tmp_path / "base"))
        assert 0 != result.returncode
        assert task.manifest.grader.base_discriminator in result.stdout + result.stderr

    def test_oracle_passes(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """On the oracle every hidden test passes."""
        result = grade(task, checkout(built, built.oracle_revision, tmp_path / "oracle"))
        assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
        assert set() == failed_tests(result)

    def test_visible_tests_pass_on_base(self, built: BuiltHistory, tmp_path: Path) -> None:
        """The base compiles and its visible tests pass: the task starts from green."""
        workspace = checkout(built, built.base_revision, tmp_path / "base")
        result = subprocess.run(
            ["go", "test", "./..."], cwd=workspace, capture_output=True, text=True, check=False
        )
        assert 0 == result.returncode, result.stdout + result.stderr


def with_stream(built: BuiltHistory, tmp_path: Path, source: str) -> Path:
    workspace = checkout(built, built.base_revision, tmp_path / "attempt")
    (workspace / "kv" / "rangestream.go").write_text(source)
    return workspace


WHOLE_RANGE_AT_ONCE = """package kv

import "context"

// RangeStream sends the whole range as one response.
func (s *Store) RangeStream(
	ctx context.Context, req *RangeRequest, send func(*RangeResponse) error,
) error {
	resp, err := s.Range(ctx, req)
	if err != nil {
		return err
	}
	return send(resp)
}
"""

FIXED_BATCHES_OF_TEN = """package kv

import "context"

// RangeStream sends fixed batches of ten keys, ignoring MaxRequestBytes.
func (s *Store) RangeStream(
	ctx context.Context, req *RangeRequest, send func(*RangeResponse) error,
) error {
	resp, err := s.Range(ctx, req)
	if err != nil {
		return err
	}
	kvs := resp.Kvs
	for len(kvs) > 10 {
		if err := send(&RangeResponse{Kvs: kvs[:10], Revision: resp.Revision}); err != nil {
			return err
		}
		kvs = kvs[10:]
	}
	resp.Kvs = kvs
	return send(resp)
}
"""

UNPINNED_REVISION = """package kv

import "context"

// RangeStream re-reads the current revision for every response.
func (s *Store) RangeStream(
	ctx context.Context, req *RangeRequest, send func(*RangeResponse) error,
) error {
	var after []byte
	sent := 0
	for {
		r := *req
		if after != nil {
			r.Key = append(append([]byte(nil), after...), 0)
		}
		r.Limit = 5
		resp, err := s.Range(ctx, &r)
		if err != nil {
			return err
		}
		sent += len(resp.Kvs)
		if !resp.More {
			resp.Count = int64(sent)
			return send(resp)
		}
		resp.Count, resp.More = 0, false
		if err := send(resp); err != nil {
			return err
		}
		after = resp.Kvs[len(resp.Kvs)-1].Key
	}
}
"""


class TestRefusesWrongChanges:
    def test_no_op_change(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """An attempt that changes nothing fails, for the discriminator's reason."""
        workspace = checkout(built, built.base_revision, tmp_path / "noop")
        (workspace / "kv" / "store.go").write_text(
            (workspace / "kv" / "store.go").read_text() + "\n// looked at it\n"
        )
        result = grade(task, workspace)
        assert 0 != result.returncode
        assert task.manifest.grader.base_discriminator in result.stdout + result.stderr

    def test_whole_range_in_one_response(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """Correct data in a single response fails the first-response and chunking checks."""
        result = grade(task, with_stream(built, tmp_path, WHOLE_RANGE_AT_ONCE))
        assert 0 != result.returncode
        assert {"TestRangeStreamFirstResponse", "TestRangeStreamLaterChunking"} <= failed_tests(
            result
        )

    def test_fixed_batches_ignore_size_target(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """Batches of ten regardless of MaxRequestBytes fail later chunking."""
        result = grade(task, with_stream(built, tmp_path, FIXED_BATCHES_OF_TEN))
        assert 0 != result.returncode
        assert "TestRangeStreamLaterChunking" in failed_tests(result)

    def test_revision_not_pinned(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """Reading each chunk at the current revision fails revision pinning."""
        result = grade(task, with_stream(built, tmp_path, UNPINNED_REVISION))
        assert 0 != result.returncode
        assert "TestRangeStreamPinsRevision" in failed_tests(result)

    def test_oracle_stream_passes_in_isolation(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """Control for the doubles above: the oracle's files on base pass."""
        workspace = checkout(built, built.base_revision, tmp_path / "control")
        overlay = REPO_ROOT / "tasks/kv-rangestream/source/oracle"
        for path in overlay.rglob("*.go"):
            shutil.copyfile(path, workspace / path.relative_to(overlay))
        assert ORACLE_STREAM.is_file()
        result = grade(task, workspace)
        assert 0 == result.returncode, result.stdout[-2000:]
