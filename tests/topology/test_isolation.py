"""Isolation proofs on a real topology: they pass when sound and fail, by name, when not.

Each fault is injected alone (an override file or a config), so each test shows
that one proof catches it; ``bench-isolation`` then exits 1 with
"isolation proof failed: <service>: <proof>: <why>" and "no arm may start".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.docker
REPO_ROOT = Path(__file__).resolve().parents[2]


def _failed(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [
        line.split("isolation proof failed: ", 1)[1]
        for line in done.stderr.splitlines()
        if "isolation proof failed: " in line
    ]


def _held(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [
        line.split("isolation proof held: ", 1)[1]
        for line in done.stderr.splitlines()
        if "isolation proof held: " in line
    ]


class TestSoundTopology:
    def test_every_proof_holds(self, topology: Any) -> None:
        """A stock topology passes the structural proof and every probe from both agents."""
        topology.up()
        hpbench = str(REPO_ROOT / ".venv/bin/hpbench")
        structural = subprocess.run(
            [hpbench, "topology", "verify", "--project", topology.project, "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == structural.returncode, structural.stdout + structural.stderr
        assert {"ok": True, "findings": []}.items() <= json.loads(structural.stdout).items()
        done = topology.isolation()
        assert 0 == done.returncode, done.stderr
        assert [] == _failed(done)
        assert "isolation proven" in done.stderr
        held = _held(done)
        for agent in ("control-agent", "hpatch-agent"):
            # Go as Codex runs it: a login shell finds go, and the module proof uses one.
            assert f"{agent}: go.login-shell" in held
            assert f"{agent}: go.offline" in held
            assert any(p.startswith(f"{agent}: host.address (") for p in held), held
        assert "host.listener (127.0.0.1)" in held


class TestFaultsAreCaught:
    def test_agent_on_the_other_network(self, topology: Any) -> None:
        """control-agent attached to hpatch's network: structure and reachability both fail."""
        topology.override(
            "other-network.yaml", "services:\n  control-agent:\n    networks: [control, hpatch]\n"
        )
        topology.up()
        done = topology.isolation()
        failed = _failed(done)
        assert 1 == done.returncode
        assert any("topology.agent.networks" in f and "control-agent" in f for f in failed)
        assert any(f.startswith("control-agent: other-router.name") for f in failed)
        assert "no arm may start" in done.stderr

    def test_sentinel_reachable(self, topology: Any) -> None:
        """control-agent attached to egress reaches the sentinel: the sentinel proof fails."""
        topology.override(
            "egress.yaml", "services:\n  control-agent:\n    networks: [control, egress]\n"
        )
        topology.up()
        failed = _failed(topology.isolation())
        assert any(f.startswith("control-agent: sentinel.name") for f in failed)
        assert any(f.startswith("control-agent: sentinel.address") for f in failed)
        assert not any(f.startswith("hpatch-agent: sentinel") for f in failed)

    def test_mcp_server_configured(self, topology: Any) -> None:
        """An MCP server in hpatch's Codex config fails the mcp.none proof for that agent."""
        config = topology.config("hpatch")
        config.write_text(
            config.read_text() + '\n[mcp_servers.echo]\ncommand = "true"\nargs = []\n'
        )
        topology.up()
        failed = _failed(topology.isolation())
        assert [f for f in failed if "mcp.none" in f]
        assert all(f.startswith("hpatch-agent: mcp.none") for f in failed), failed

    def test_apps_enabled(self, topology: Any) -> None:
        """A config that leaves the apps feature on fails the apps.disabled proof."""
        config = topology.config("control")
        text = config.read_text()
        assert "apps = false" in text
        config.write_text(text.replace("apps = false", "apps = true"))
        topology.up()
        failed = _failed(topology.isolation())
        assert ["control-agent: apps.disabled: codex features list shows apps true"] == failed

    def test_missing_module_with_proxy_off(self, topology: Any) -> None:
        """A workspace needing a module the read-only cache lacks fails go.offline."""
        (topology.workspace("control") / "go.mod").write_text(
            "module example.test/ws\n\ngo 1.19\n\nrequire example.test/absent v1.0.0\n"
        )
        topology.up()
        failed = _failed(topology.isolation())
        assert 1 == len(failed), failed
        assert failed[0].startswith("control-agent: go.offline")
        assert "GOPROXY=off" in failed[0]

    def test_go_missing_from_a_login_shell(self, topology: Any) -> None:
        """An agent whose login shell's PATH has no go (as before the image linked go into
        /usr/local/bin) fails go.login-shell and go.offline, though go is on the image's
        PATH: Codex runs every command as /bin/bash -lc."""
        profile = topology.root / "profile"
        profile.write_text('PATH="/usr/bin:/bin"\nexport PATH\n')
        profile.chmod(0o644)
        topology.override(
            "login-path.yaml",
            f"services:\n  hpatch-agent:\n    volumes:\n      - {profile}:/etc/profile:ro\n",
        )
        topology.up()
        failed = _failed(topology.isolation())
        assert 2 == len(failed), failed
        assert failed[0].startswith("hpatch-agent: go.login-shell: /bin/bash -lc ")
        assert "PATH=/usr/bin:/bin" in failed[0]
        assert failed[1].startswith("hpatch-agent: go.offline: /bin/bash -lc 'go mod download all'")

    def test_proofs_that_cannot_run_are_named(self, topology: Any) -> None:
        """An agent with nowhere to write (a read-only root, as always, and no /tmp) cannot
        run its probes: each expected proof is named as having no verdict instead of
        passing by silence."""
        topology.override("read-only.yaml", "services:\n  hpatch-agent:\n    tmpfs: !reset []\n")
        topology.up()
        done = topology.isolation()
        failed = _failed(done)
        assert 1 == done.returncode
        assert "hpatch-agent: router.reachable (hpatch-router): no verdict" in "\n".join(failed)
        assert any(f.startswith("hpatch-agent: sentinel.name: no verdict") for f in failed)
        assert not any(f.startswith("control-agent") for f in failed), failed


class TestReadiness:
    def test_a_service_that_never_listens_is_named(self, topology: Any) -> None:
        """A running sentinel that does not listen: bench-ready gives up and names it."""
        mute = "services:\n  sentinel:\n    entrypoint: [sleep, infinity]\n"
        topology.override("mute.yaml", mute)
        topology.up(ready=False)
        done = topology.ready("3")
        assert 1 == done.returncode
        assert "sentinel:8080/ did not answer 200 within 3 s (last: no connection)" in done.stderr
        assert "is not ready" in done.stderr

    def test_a_router_that_never_listens_is_named(self, topology: Any) -> None:
        """Readiness is asked from the sentinel (nothing runs inside a router): a running
        router that does not listen is named by its service and path."""
        mute = "services:\n  hpatch-router:\n    entrypoint: [sleep, infinity]\n    command: []\n"
        topology.override("mute-router.yaml", mute)
        topology.up(ready=False)
        done = topology.ready("3")
        assert 1 == done.returncode
        assert "hpatch-router:8080/api/metrics did not answer 200 within 3 s" in done.stderr

    def test_a_stopped_service_is_named(self, topology: Any) -> None:
        """A router that is not running is named with its state."""
        topology.up()
        stopped = subprocess.run(
            ["docker", "stop", "-t", "1", f"{topology.project}-hpatch-router-1"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == stopped.returncode, stopped.stderr
        done = topology.ready("5")
        assert 1 == done.returncode
        assert "not ready: hpatch-router is exited" in done.stderr

    def test_bad_limit_is_refused(self, topology: Any) -> None:
        """The limit is a positive number of seconds."""
        done = topology.ready("0")
        assert 1 == done.returncode
        assert "SECONDS must be a positive integer, got 0" in done.stderr
