"""The structural isolation rules (spec 004 on Docker networks, spec 002 on routers).

- each agent is attached only to its arm's network, never host networking;
- each arm network is internal and holds only that arm's agent and router;
- each router is on its arm network and the egress network, and nothing else;
- the sentinel (and the scripted provider, when present) are on egress only;
- no container publishes a port, mounts a Docker socket or runs privileged;
- each router runs one process with exactly one ``--listen`` and one
  ``--capture-output``, and has exactly one listening socket;
- no service exists beyond the known ones (no capturer, no proxy), and an arm the mode
  does not schedule has no service at all (control-only runs no treatment router,
  ctp-only no control).
"""

from __future__ import annotations

from collections.abc import Iterator

from hpbench.findings import Finding
from hpbench.rundir import Arm
from hpbench.topology.model import ContainerView, TopologySnapshot

# Every arm a mode may schedule (hpbench.modes); a run names the ones it schedules.
ARMS = tuple(arm.value for arm in Arm)
# The arms of a paired run: what a check assumes when it is not told the run's arms.
PAIRED_ARMS = (Arm.CONTROL.value, Arm.HPATCH.value)
AGENT_NETWORK = {f"{arm}-agent": arm for arm in ARMS}
ROUTER_NETWORKS = {f"{arm}-router": (arm, "egress") for arm in ARMS}
EGRESS_ONLY = ("sentinel", "provider")
REQUIRED_SERVICES = (*AGENT_NETWORK, *ROUTER_NETWORKS, "sentinel")
KNOWN_SERVICES = frozenset((*REQUIRED_SERVICES, "provider"))
_SOCKET_NAMES = ("docker.sock", "containerd.sock", "podman.sock")


def _finding(code: str, field: str, message: str, project: str) -> Finding:
    return Finding(code=code, message=message, file=f"compose project {project}", field=field)


def _expected_networks(service: str) -> tuple[str, ...] | None:
    if service in AGENT_NETWORK:
        return (AGENT_NETWORK[service],)
    if service in ROUTER_NETWORKS:
        return ROUTER_NETWORKS[service]
    if service in EGRESS_ONLY:
        return ("egress",)
    return None


def _socket_mounts(container: ContainerView) -> list[str]:
    found = []
    for mount in container.mounts:
        source, _, destination = mount.partition(":")
        for path in (source, destination):
            if path.endswith(_SOCKET_NAMES) or path.rstrip("/") in ("/var/run", "/run"):
                found.append(mount)
                break
    return found


def _arm_of(service: str) -> str | None:
    arm, _, role = service.partition("-")
    return arm if arm in ARMS and role in ("agent", "router") else None


def _container_rules(
    snap: TopologySnapshot, c: ContainerView, arms: tuple[str, ...]
) -> Iterator[Finding]:
    p = snap.project
    where = f"$.services.{c.service}"
    arm = _arm_of(c.service)
    if arm is not None and arm not in arms:
        yield _finding(
            "topology.service.unscheduled",
            where,
            f"{c.service} runs, but this run schedules only {', '.join(arms)}",
            p,
        )
    if c.service not in KNOWN_SERVICES:
        yield _finding(
            "topology.service.unexpected",
            where,
            f"service {c.service} ({c.name}) is not part of the hpbench topology "
            "(no capturer, proxy or extra listener may run)",
            p,
        )
        return
    if not c.running:
        yield _finding("topology.service.stopped", where, f"{c.name} is not running", p)
    wanted = _expected_networks(c.service)
    if c.network_mode in ("host", "none") or c.network_mode.startswith("container:"):
        yield _finding(
            "topology.network_mode",
            f"{where}.network_mode",
            f"{c.service} uses network mode {c.network_mode!r}",
            p,
        )
    if wanted is not None and sorted(c.networks) != sorted(wanted):
        code = "topology.agent.networks" if c.service in AGENT_NETWORK else "topology.networks"
        yield _finding(
            code,
            f"{where}.networks",
            f"{c.service} is attached to {sorted(c.networks)}; it must be attached "
            f"only to {sorted(wanted)}",
            p,
        )
    if c.published_ports:
        yield _finding(
            "topology.ports.published",
            f"{where}.ports",
            f"{c.service} publishes {', '.join(c.published_ports)} on the host",
            p,
        )
    for mount in _socket_mounts(c):
        yield _finding(
            "topology.mount.socket",
            f"{where}.volumes",
            f"{c.service} mounts an engine socket ({mount})",
            p,
        )
    if c.privileged:
        yield _finding(
            "topology.privileged", f"{where}.privileged", f"{c.service} is privileged", p
        )
    if c.service in ROUTER_NETWORKS:
        yield from _router_rules(snap, c)


def _router_rules(snap: TopologySnapshot, c: ContainerView) -> Iterator[Finding]:
    where = f"$.services.{c.service}.command"
    for flag in ("--listen", "--capture-output"):
        count = sum(1 for arg in c.command if arg == flag or arg.startswith(flag + "="))
        if count != 1:
            yield _finding(
                "topology.router.flags",
                where,
                f"{c.service} has {count} {flag} flags; exactly one is required",
                snap.project,
            )
    if c.listeners is None:
        yield _finding(
            "topology.router.listeners",
            f"$.services.{c.service}",
            f"{c.service}: its listening sockets could not be counted",
            snap.project,
        )
    elif c.listeners != 1:
        yield _finding(
            "topology.router.listeners",
            f"$.services.{c.service}",
            f"{c.service} has {c.listeners} listening sockets; exactly one is allowed",
            snap.project,
        )


def _network_rules(snap: TopologySnapshot, arms: tuple[str, ...]) -> Iterator[Finding]:
    p = snap.project
    for arm in arms:
        network = snap.network(arm)
        where = f"$.networks.{arm}"
        if network is None:
            yield _finding("topology.network.missing", where, f"network {arm} does not exist", p)
            continue
        if not network.internal:
            yield _finding(
                "topology.network.internal",
                f"{where}.internal",
                f"network {network.name} is not internal",
                p,
            )
        members = sorted(network.services)
        wanted = sorted((f"{arm}-agent", f"{arm}-router"))
        if members != wanted:
            yield _finding(
                "topology.network.members",
                where,
                f"network {network.name} holds {members}; it must hold only {wanted}",
                p,
            )


def check_topology(snap: TopologySnapshot, arms: tuple[str, ...] = PAIRED_ARMS) -> list[Finding]:
    """Every structural isolation rule ``snap`` breaks for a run of ``arms``; empty when
    it is sound."""
    findings: list[Finding] = []
    required = [s for s in REQUIRED_SERVICES if _arm_of(s) in (*arms, None)]
    for service in required:
        if snap.service(service) is None:
            findings.append(
                _finding(
                    "topology.service.missing",
                    f"$.services.{service}",
                    f"service {service} has no container",
                    snap.project,
                )
            )
    for container in snap.containers:
        findings.extend(_container_rules(snap, container, arms))
    findings.extend(_network_rules(snap, arms))
    return findings
