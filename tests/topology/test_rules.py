"""The structural rules on plain snapshots: no Docker needed."""

from __future__ import annotations

import attrs
import pytest

from hpbench.topology import ContainerView, NetworkView, TopologySnapshot, check_topology
from hpbench.topology.whales import count_listeners

PROJECT = "hpbench-test"


def _container(service: str, networks: tuple[str, ...], **changes: object) -> ContainerView:
    command: tuple[str, ...] = ("sleep", "infinity")
    listeners = None
    if service.endswith("-router"):
        command = ("python3", "-m", "router", "--listen", "0.0.0.0:8080")
        command += ("--capture-output", "/capture")
        listeners = 1
    view = ContainerView(
        service=service,
        name=f"{PROJECT}-{service}-1",
        running=True,
        networks=networks,
        network_mode=f"{PROJECT}_{networks[0]}",
        published_ports=(),
        mounts=(),
        privileged=False,
        command=command,
        listeners=listeners,
    )
    return attrs.evolve(view, **changes)


def sound() -> TopologySnapshot:
    """The topology compose.yaml describes."""
    return TopologySnapshot(
        project=PROJECT,
        containers=(
            _container("control-agent", ("control",)),
            _container("hpatch-agent", ("hpatch",)),
            _container("control-router", ("control", "egress")),
            _container("hpatch-router", ("egress", "hpatch")),
            _container("sentinel", ("egress",)),
            _container("provider", ("egress",)),
        ),
        networks=(
            NetworkView("control", f"{PROJECT}_control", True, ("control-agent", "control-router")),
            NetworkView("hpatch", f"{PROJECT}_hpatch", True, ("hpatch-agent", "hpatch-router")),
            NetworkView(
                "egress",
                f"{PROJECT}_egress",
                True,
                ("control-router", "hpatch-router", "provider", "sentinel"),
            ),
        ),
    )


def _replace(snap: TopologySnapshot, view: ContainerView) -> TopologySnapshot:
    containers = tuple(view if c.service == view.service else c for c in snap.containers)
    return attrs.evolve(snap, containers=containers)


def _codes(snap: TopologySnapshot) -> list[str]:
    return [f.code for f in check_topology(snap)]


class TestCheckTopology:
    def test_sound(self) -> None:
        """The intended topology breaks no rule."""
        assert [] == check_topology(sound())

    def test_agent_on_two_networks(self) -> None:
        """An agent also attached to the other arm's network is named."""
        snap = sound()
        agent = attrs.evolve(snap.service("control-agent"), networks=("control", "hpatch"))
        findings = check_topology(_replace(snap, agent))
        assert ["topology.agent.networks"] == [f.code for f in findings]
        assert "control-agent" in findings[0].message

    def test_host_network(self) -> None:
        """Host networking is refused."""
        snap = sound()
        agent = attrs.evolve(snap.service("hpatch-agent"), network_mode="host", networks=())
        assert {"topology.network_mode", "topology.agent.networks"} == set(
            _codes(_replace(snap, agent))
        )

    def test_network_not_internal_and_extra_member(self) -> None:
        """An arm network must be internal and hold only its agent and router."""
        snap = sound()
        control = NetworkView(
            "control", f"{PROJECT}_control", False, ("control-agent", "control-router", "sentinel")
        )
        snap = attrs.evolve(snap, networks=(control, *snap.networks[1:]))
        assert ["topology.network.internal", "topology.network.members"] == _codes(snap)

    def test_published_port_socket_and_privilege(self) -> None:
        """Published ports, engine sockets and privileged mode are each named."""
        snap = sound()
        router = attrs.evolve(
            snap.service("control-router"),
            published_ports=("0.0.0.0:8080->8080/tcp",),
            mounts=("/var/run/docker.sock:/var/run/docker.sock",),
            privileged=True,
        )
        assert [
            "topology.ports.published",
            "topology.mount.socket",
            "topology.privileged",
        ] == _codes(_replace(snap, router))

    @pytest.mark.parametrize(
        ("command", "listeners"),
        [
            (("router", "--listen", "a:1", "--listen", "b:2", "--capture-output", "/c"), 1),
            (("router", "--listen", "a:1"), 1),
            (("router", "--listen=a:1", "--capture-output=/c"), 2),
            (("router", "--listen=a:1", "--capture-output=/c"), None),
        ],
    )
    def test_router_one_listener(self, command: tuple[str, ...], listeners: int | None) -> None:
        """A router needs exactly one --listen, one --capture-output and one listening socket."""
        snap = sound()
        router = attrs.evolve(snap.service("hpatch-router"), command=command, listeners=listeners)
        codes = _codes(_replace(snap, router))
        assert codes
        assert set(codes) <= {"topology.router.flags", "topology.router.listeners"}

    def test_capturer_service_and_missing_router(self) -> None:
        """An extra service (a capturer) and a missing router are both findings."""
        snap = sound()
        containers = tuple(c for c in snap.containers if c.service != "hpatch-router")
        containers += (_container("capturer", ("egress",)),)
        codes = _codes(attrs.evolve(snap, containers=containers))
        assert "topology.service.missing" in codes
        assert "topology.service.unexpected" in codes


class TestCountListeners:
    def test_engine_dns_is_not_counted(self) -> None:
        """Only the router's own listener counts; 127.0.0.11 belongs to the engine."""
        text = (
            "  sl  local_address rem_address   st\n"
            "   0: 0B00007F:A1B2 00000000:0000 0A\n"
            "   1: 00000000:1F90 00000000:0000 0A\n"
            "   2: 0100007F:1F90 0100007F:C350 01\n"
        )
        assert 1 == count_listeners(text)
