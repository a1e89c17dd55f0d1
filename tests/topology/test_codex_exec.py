"""One short Codex exec per arm, through that arm's router, to the scripted provider.

The real pinned Codex CLI runs in each agent with its generated offline config;
the answer comes from the scripted provider on the egress network through the
arm's router, and each router's own capture (records + /api/metrics snapshot)
validates against that exec's JSONL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.docker
REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS = (
    "import urllib.request as u; "
    "print(u.urlopen('http://127.0.0.1:8080/api/metrics', timeout=5).read().decode())"
)


def _script(arm: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "name": f"hello-{arm}",
        "steps": [{"output": [{"type": "message", "text": f"Hello from {arm}."}]}],
    }


class TestCodexExecPerArm:
    def test_each_router_captures_its_arm(self, topology: Any, tmp_path: Path) -> None:
        """Both arms answer through their own router, and each capture validates."""
        scripts = Path(topology.env["HPBENCH_PROVIDER_SCRIPTS"])
        scripts.mkdir()
        # The provider serves one script per arm compose.yaml knows; this topology runs two.
        for arm in ("control", "hpatch", "native", "ctp", "mentor"):
            (scripts / f"{arm}.json").write_text(json.dumps(_script(arm)))
        topology.up("offline")

        isolation = topology.isolation()
        assert 0 == isolation.returncode, isolation.stderr
        for arm in ("control", "hpatch"):
            codex = topology.compose(
                "exec",
                "-T",
                # The offline demo's key, passed at exec as bench-attempt does: the
                # topology's containers hold no credential.
                "-e",
                "HPBENCH_API_KEY=offline",
                f"{arm}-agent",
                "codex",
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--strict-config",
                "-s",
                "danger-full-access",
                "Say hello.",
            )
            assert 0 == codex.returncode, codex.stderr[-2000:]
            assert f"Hello from {arm}." in codex.stdout
            jsonl = tmp_path / f"codex-{arm}.jsonl"
            jsonl.write_text(codex.stdout)

            metrics = topology.compose("exec", "-T", f"{arm}-router", "python3", "-c", METRICS)
            assert 0 == metrics.returncode, metrics.stderr
            snapshot = json.loads(metrics.stdout)
            assert snapshot["requests"]["logical_requests"] >= 1
            snapshot_file = tmp_path / f"metrics-{arm}.json"
            snapshot_file.write_text(metrics.stdout)

            records = tmp_path / f"capture-{arm}"
            copied = topology.compose("cp", f"{arm}-router:/capture", str(records))
            assert 0 == copied.returncode, copied.stderr
            flags = ["--expect-mode", "hpatch", "--expect-protocol", "native"]
            validated = topology.hpbench(
                "capture",
                "validate",
                "--arm",
                arm,
                "--records",
                str(records),
                "--snapshot",
                str(snapshot_file),
                "--codex-jsonl",
                str(jsonl),
                *(flags if arm == "hpatch" else []),
            )
            assert 0 == validated.returncode, validated.stdout + validated.stderr
