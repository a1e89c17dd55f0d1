"""The host firewall that closes each agent's network to the host itself.

An internal Docker network still routes to the host: the host holds the
network's gateway address on the bridge and accepts what arrives there, so a
host service bound to 0.0.0.0 was open to every agent. ``bench-firewall``
puts REJECT rules for each agent network's bridge at the top of the host's
INPUT chain, ``bench-isolation`` installs them and proves them from each agent
against a listener of its own, and ``bench-down`` removes them
(docs/network-containment.md). The listener these tests start is their own,
and every probe aims only at this project's gateways and at 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpbench.reference.harness import HostListener

from .conftest import LIBEXEC, Topology, run

pytestmark = pytest.mark.docker
AGENTS = ("control-agent", "hpatch-agent")
FIREWALL = str(LIBEXEC / "bench-firewall")


@pytest.fixture
def listener() -> Iterator[HostListener]:
    """A host listener of the test's own that answers on 127.0.0.1 (its silence means something)."""
    served = HostListener()
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=3) as connection:
            assert connection.recv(64).startswith(b"HTTP/1.0 200")
        yield served
    finally:
        served.close()


def gateways(topology: Topology, service: str) -> list[str]:
    """The gateway address of every network the service's container is on: the host's address."""
    done = run(
        [
            "docker",
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{.Gateway}} {{end}}",
            topology.container(service),
        ]
    )
    assert 0 == done.returncode, done.stderr
    found = done.stdout.split()
    assert found, f"{service} has no gateway"
    return found


def reaches(topology: Topology, service: str, address: str, port: int) -> bool:
    """Whether a TCP connection from the service's container to ADDRESS:PORT is accepted."""
    done = run(
        [
            "docker",
            "exec",
            topology.container(service),
            "timeout",
            "3",
            "bash",
            "-c",
            'exec 3<>"/dev/tcp/$0/$1"',
            address,
            str(port),
        ]
    )
    return done.returncode == 0


def project_rules(project: str) -> list[str]:
    """Every INPUT rule (IPv4 and IPv6) that carries the project's comment."""
    comment = re.compile(rf'--comment "?hpbench:{re.escape(project)}"?(\s|$)')
    rules = []
    for tool in ("iptables", "ip6tables"):
        if shutil.which(tool) is None:
            continue
        done = run([tool, "-w", "-S", "INPUT"])
        assert 0 == done.returncode, done.stderr
        rules += [f"{tool} {line}" for line in done.stdout.splitlines() if comment.search(line)]
    return rules


def _failed(done: subprocess.CompletedProcess[str]) -> list[str]:
    marker = "isolation proof failed: "
    return [line.split(marker, 1)[1] for line in done.stderr.splitlines() if marker in line]


class TestOnAStockTopology:
    """One topology for the module: each test installs or removes what it needs."""

    def test_no_agent_reaches_a_host_listener(
        self, stock_topology: Topology, listener: HostListener
    ) -> None:
        """After bench-isolation, a listener on 0.0.0.0 is not reached by either agent at
        its network's gateway (before the firewall, both reached it)."""
        done = stock_topology.isolation()
        assert 0 == done.returncode, done.stderr
        for agent in AGENTS:
            assert f"isolation proof held: {agent}: host.address (" in done.stderr
            for address in gateways(stock_topology, agent):
                assert not reaches(stock_topology, agent, address, listener.port), (
                    f"{agent} reached the host at {address}:{listener.port}"
                )
        assert 1 == len(listener.peers)  # the fixture's own check on 127.0.0.1

    def test_without_the_rules_the_host_is_reached_and_isolation_fails(
        self, stock_topology: Topology, listener: HostListener, tmp_path: Path
    ) -> None:
        """With the rules gone the agent reaches the host (the hole), and bench-isolation
        with an iptables that installs nothing fails by naming host.address."""
        assert 0 == stock_topology.firewall("remove").returncode
        try:
            address = gateways(stock_topology, "control-agent")[0]
            assert reaches(stock_topology, "control-agent", address, listener.port)
            assert 2 == len(listener.peers)

            # An iptables and ip6tables that accept every command and change nothing.
            fake = tmp_path / "bin"
            fake.mkdir()
            for tool in ("iptables", "ip6tables"):
                (fake / tool).write_text("#!/bin/sh\nexit 0\n")
                (fake / tool).chmod(0o755)
            done = stock_topology.isolation(env={"PATH": f"{fake}:{os.environ['PATH']}"})
            failed = _failed(done)
            assert 1 == done.returncode
            for agent in AGENTS:
                for gateway in gateways(stock_topology, agent):
                    proof = f"{agent}: host.address ({gateway})"
                    assert any(f.startswith(proof) for f in failed), failed
            assert all("host.address" in f for f in failed), failed
            assert "no arm may start" in done.stderr
            assert [] == project_rules(stock_topology.project)
        finally:
            assert 0 == stock_topology.firewall("install").returncode

    def test_check_names_a_missing_rule(self, stock_topology: Topology) -> None:
        """check passes with the rules in place and names each missing one without them."""
        assert 0 == stock_topology.firewall("install").returncode
        assert 0 == stock_topology.firewall("check").returncode
        assert 0 == stock_topology.firewall("remove").returncode
        try:
            done = stock_topology.firewall("check")
            assert 1 == done.returncode
            assert "missing rule: iptables INPUT -i br-" in done.stderr
            assert "-p tcp" in done.stderr
            assert f"firewall of {stock_topology.project} is incomplete" in done.stderr
        finally:
            assert 0 == stock_topology.firewall("install").returncode

    def test_install_is_idempotent_and_remove_twice_is_fine(self, stock_topology: Topology) -> None:
        """Two rules per agent bridge and family, whatever the number of installs; two
        removes both succeed and leave nothing."""
        assert 0 == stock_topology.firewall("install").returncode
        once = project_rules(stock_topology.project)
        assert 0 == stock_topology.firewall("install").returncode
        assert once == project_rules(stock_topology.project)
        families = 2 if shutil.which("ip6tables") and Path("/proc/net/if_inet6").exists() else 1
        assert 2 * len(AGENTS) * families == len(once), once
        assert all("-j REJECT" in rule for rule in once)
        assert 0 == stock_topology.firewall("remove").returncode
        assert 0 == stock_topology.firewall("remove").returncode
        assert [] == project_rules(stock_topology.project)

    def test_bench_down_leaves_no_rule(self, stock_topology: Topology) -> None:
        """bench-down takes the topology and its rules away (this test runs last here)."""
        assert 0 == stock_topology.firewall("install").returncode
        assert project_rules(stock_topology.project)
        done = stock_topology.down()
        assert 0 == done.returncode, done.stderr
        assert [] == project_rules(stock_topology.project)


class TestWithoutATopology:
    def test_install_without_networks_fails_by_name(self) -> None:
        """A project with no agent network cannot be closed, and says so."""
        project = f"hpbench-test-{uuid.uuid4().hex[:10]}"
        done = run([FIREWALL, "install", project])
        assert 1 == done.returncode
        assert f"project {project} has no network with an agent attached" in done.stderr
        assert [] == project_rules(project)

    def test_install_without_root_fails(self) -> None:
        """Without root, install refuses clearly instead of proving nothing."""
        if os.geteuid() != 0:
            pytest.skip("needs root to drop it")
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = run([*nobody, FIREWALL, "install", "hpbench-test-nobody"])
        assert 1 == done.returncode
        assert "install needs root" in done.stderr

    def test_install_without_iptables_fails(self, tmp_path: Path) -> None:
        """Without iptables, install names the missing tool and its fix."""
        (tmp_path / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
        done = run([FIREWALL, "install", "hpbench-test-none"], env={"PATH": str(tmp_path)})
        assert 1 == done.returncode
        assert "iptables is missing" in done.stderr
        assert "apt-get install iptables" in done.stderr

    def test_a_name_outside_composes_alphabet_is_refused(self) -> None:
        """The name goes into rule comments and a pattern: only Compose's alphabet."""
        done = run([FIREWALL, "remove", "hpbench.*"])
        assert 1 == done.returncode
        assert "is not a Compose project name" in done.stderr

    def test_bench_down_removes_rules_of_a_project_that_never_came_up(self) -> None:
        """Rules a crashed run left (its networks long gone) go with bench-down, and a
        project whose name merely starts with this one keeps its own."""
        project = f"hpbench-test-{uuid.uuid4().hex[:10]}"
        tools = [t for t in ("iptables", "ip6tables") if shutil.which(t)]
        try:
            for tool in tools:
                for name in (project, f"{project}-r1"):
                    rule = ["-i", "hpbtest0", "-m", "comment", "--comment", f"hpbench:{name}"]
                    done = run([tool, "-w", "-I", "INPUT", "1", *rule, "-j", "REJECT"])
                    assert 0 == done.returncode, done.stderr
            done = run([str(LIBEXEC / "bench-down"), project])
            assert 0 == done.returncode, done.stderr
            assert [] == project_rules(project)
            assert len(tools) == len(project_rules(f"{project}-r1"))
        finally:
            run([FIREWALL, "remove", project])
            run([FIREWALL, "remove", f"{project}-r1"])
        assert [] == project_rules(f"{project}-r1")
