"""A hostile agent, driven through the real Codex CLI, against the box it runs in.

Each scenario is a replay script the scripted provider plays to the pinned
Codex in the agent container, so every payload is run the way a model's
command would be: ``/bin/bash -lc`` as the agent user in /workspace. The
scripts are written per test because their payloads name places on this host
(a marker file, a victim file, a listener's port) that must stay untouched.
Steps that carry ``expect_exit_code`` make the provider end the turn unless the
command reported that status, so a payload that did not run, or a check
inside the agent that found a leak, fails the run visibly.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hpbench.reference.harness import HostListener

from .conftest import bench, leftovers, results

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "tasks" / "kv-rangestream" / "replay"


# How long Codex waits for a scripted command (it answers as soon as the command ends):
# long enough for `go vet`/`go test` to finish on a machine busy with other runs, so a
# scripted agent's exit-code check never fails only because the machine was loaded.
COMMAND_WAIT_MS = 120_000


def command(cmd: str, *, expect: int | None = 0, yield_ms: int = COMMAND_WAIT_MS) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "exec_command", "cmd": cmd, "yield_time_ms": yield_ms}
    if expect is not None:
        item["expect_exit_code"] = expect
    return {"output": [item]}


def demo_steps(arm: str) -> list[dict[str, Any]]:
    """The offline demo's steps for ``arm``: the oracle change, go test (expected to pass)."""
    steps: list[dict[str, Any]] = json.loads((DEMO / f"{arm}.json").read_text())["steps"]
    return steps


# The first edit of a demo script: an apply_patch (control) or an Hpatch call (treatment,
# routed by the reference router in --mode hpatch).
EDIT_ITEMS = frozenset({"apply_patch", "hpatch"})


def oracle_tail(arm: str = "control") -> list[dict[str, Any]]:
    """From the demo's first edit on: the edits, the checks and the final message."""
    steps = demo_steps(arm)
    first = next(
        index
        for index, step in enumerate(steps)
        if any(item["type"] in EDIT_ITEMS for item in step["output"])
    )
    return steps[first:]


def write_scripts(
    directory: Path, control: list[dict[str, Any]], hpatch: list[dict[str, Any]]
) -> Path:
    directory.mkdir(parents=True)
    for arm, steps in (("control", control), ("hpatch", hpatch)):
        script = {"schema_version": 1, "name": f"hostile-{arm}", "turn_state": True, "steps": steps}
        (directory / f"{arm}.json").write_text(json.dumps(script, indent=2))
    return directory


@pytest.fixture
def listener() -> Iterator[HostListener]:
    server = HostListener()
    try:
        yield server
    finally:
        server.close()


def attempt(run_dir: Path, arm: str) -> dict[str, Any]:
    (found,) = [a for a in results(run_dir) if a["arm"] == arm]
    return found


class TestHostileRepository:
    def test_git_payloads_never_run_and_the_box_names_nothing(
        self, runs_dir: Path, tmp_path: Path, listener: HostListener
    ) -> None:
        """The agent arms every git hook it can (fsmonitor, clean/smudge filters, a pager,
        an external diff, hooks, an includeIf) to write marker files on the host, checks
        from inside that its mounts, environment and host files name neither the checkout
        nor the runs directory nor another arm, fails to reach a host listener on its
        network's gateway, then makes the oracle change. No marker appears, the listener
        is never reached, and the attempt is judged normally: it passes."""
        markers = tmp_path / "markers"
        markers.mkdir()
        names = ("fsmonitor", "pager", "diff", "clean", "smudge", "ssh", "include", "hook")
        touch = {name: shlex.quote(f"touch {markers / name}") for name in names}
        hook_names = (
            "post-index-change",
            "pre-commit",
            "post-checkout",
            "reference-transaction",
            "fsmonitor-watchman",
        )
        hooks = " ".join(
            f"printf '#!/bin/sh\\n%s\\n' {touch['hook']} > .git/hooks/{hook}"
            f" && chmod +x .git/hooks/{hook} &&"
            for hook in hook_names
        )
        arm_git = (
            f"git config core.fsmonitor {touch['fsmonitor']} && "
            f"git config core.pager {touch['pager']} && "
            f"git config diff.external {touch['diff']} && "
            f"git config filter.pwn.clean {touch['clean']} && "
            f"git config filter.pwn.smudge {touch['smudge']} && "
            "git config filter.pwn.required true && "
            f"git config core.sshCommand {touch['ssh']} && "
            "printf '[core]\\n\\tfsmonitor = %s\\n' "
            f"{touch['include']} > .git/evil.cfg && "
            "git config includeIf.gitdir:/.path evil.cfg && "
            "printf '* filter=pwn diff=pwn\\n' > .git/info/attributes && "
            f"{hooks} "
            "git config --list --local | grep -c touch"
        )
        forbidden = [str(REPO_ROOT), str(runs_dir), str(tmp_path), "hpatch", "treatment", "oracle"]
        patterns = " ".join(f"-e {shlex.quote(text)}" for text in forbidden)
        # grep exits 1 when it finds nothing; 0 (a leak) and 2 (a file missing) both fail.
        look_around = (
            f"{{ grep -F {patterns} /proc/self/mountinfo /etc/hosts /etc/hostname /etc/resolv.conf;"
            " test $? -eq 1; }"
            f" && {{ tr '\\0' '\\n' </proc/self/environ | grep -F {patterns}; test $? -eq 1; }}"
            ' && test "$(id -u)" = 1000 && ! touch /usr/local/bin/x 2>/dev/null'
        )
        reach_host = (
            "ip=$(hostname -I | cut -d' ' -f1) && gateway=${ip%.*}.1 && "
            f'! timeout 3 bash -c "exec 3<>/dev/tcp/$gateway/{listener.port}"'
        )
        control = [command(arm_git), command(look_around), command(reach_host), *oracle_tail()]
        scenario = write_scripts(tmp_path / "scenario", control, demo_steps("hpatch"))

        result, run_dir = bench("control-only", runs_dir, HPBENCH_REPLAY_DIR=str(scenario))

        assert [] == sorted(path.name for path in markers.iterdir())
        assert [] == listener.peers
        assert 0 == result.returncode, result.stderr[-4000:]
        found = attempt(run_dir, "control")
        assert (True, "none") == (found["passed"], found["failure_class"])
        assert ["kv/kv.go", "kv/rangestream.go", "kv/store.go"] == found["changed_paths"]
        assert [] == leftovers(run_dir)

    def test_symlinks_at_hidden_paths_reach_nothing(self, runs_dir: Path, tmp_path: Path) -> None:
        """The agent plants a symlink at the hidden test's path to a file on the host, one to
        a host directory, and one to /. Grading writes nothing through them: the victims
        are untouched, the planted paths are named as unauthorized changes, and the
        attempt is judged (not voided) with its grader evidence kept."""
        victim = tmp_path / "victim.txt"
        victim.write_text("untouched\n")
        victim_dir = tmp_path / "victim-dir"
        victim_dir.mkdir()
        plant = (
            f"ln -s {shlex.quote(str(victim))} kv/rangestream_hidden_test.go && "
            f"ln -s {shlex.quote(str(victim_dir))} kv/escape && ln -s / rootlink"
        )
        control = [command(plant), {"output": [{"type": "message", "text": "Done."}]}]
        scenario = write_scripts(tmp_path / "scenario", control, demo_steps("hpatch"))

        result, run_dir = bench("control-only", runs_dir, HPBENCH_REPLAY_DIR=str(scenario))

        assert "untouched\n" == victim.read_text()
        assert [] == list(victim_dir.iterdir())
        assert 0 != result.returncode
        found = attempt(run_dir, "control")
        assert "unauthorized-path" == found["failure_class"]
        assert {"kv/escape", "kv/rangestream_hidden_test.go", "rootlink"} <= set(
            found["unauthorized_paths"]
        )  # type: ignore[arg-type]
        assert (run_dir / "attempts/1-control/grader/grader.exit").is_file()
        assert [] == leftovers(run_dir)


class TestFairShares:
    def test_a_memory_hog_and_a_fork_bomb_fail_only_their_own_attempt(
        self, runs_dir: Path, tmp_path: Path
    ) -> None:
        """Under AGENT_MEMORY=512m and AGENT_PIDS=128, control hogs memory and forks without
        end; its attempt fails as resource-limit with the counters kept as evidence, the
        caps it ran under are the ones set, and hpatch's attempt passes, graded under the
        GRADER_* caps that were set."""
        hog = "x=$(head -c 2000M /dev/zero | tr '\\0' a); echo ${#x}"
        bomb = "for i in $(seq 400); do (sleep 8 &) 2>/dev/null; done; echo spawned"
        control = [
            command(hog, expect=None),
            command(bomb, expect=None, yield_ms=3_000),
            {"output": [{"type": "message", "text": "Done."}]},
        ]
        scenario = write_scripts(tmp_path / "scenario", control, demo_steps("hpatch"))

        result, run_dir = bench(
            "paired",
            runs_dir,
            HPBENCH_REPLAY_DIR=str(scenario),
            AGENT_MEMORY="512m",
            AGENT_PIDS="128",
            GRADER_MEMORY="768m",
            GRADER_PIDS="256",
        )

        assert 0 != result.returncode
        hogging = attempt(run_dir, "control")
        assert "resource-limit" == hogging["failure_class"], hogging
        limits = hogging["agent_limits"]
        assert (512 << 20, 128) == (limits["memory_limit_bytes"], limits["pids_limit"])  # type: ignore[index]
        assert limits["oom_kills"] >= 1 and limits["pids_limit_hits"] >= 1  # type: ignore[index]
        assert (run_dir / "attempts/1-control/agent-limits.txt").is_file()
        fair = attempt(run_dir, "hpatch")
        assert (True, "none") == (fair["passed"], fair["failure_class"])
        # The grader's caps reach its container as set.
        state = (run_dir / "attempts/1-hpatch/grader/grader.state").read_text().splitlines()
        assert {"memory=768m", "pids=256", "outcome=exited"} <= set(state)
        assert [] == leftovers(run_dir)
