"""The isolation proofs a running topology owes, as data the shell runs without parsing.

``bench-isolation`` proves a topology from three places: the structure (the
rules of :mod:`hpbench.topology.rules`, judged here), the host (a listener of
its own must answer on every host address an agent will probe) and each
container (probes and checks run by ``in-container/proofs``). This module
turns one inspected snapshot, the firewall's agent attachments and the host
listener's port into each place's exact list of proofs; the shell hands each
list to the proofs script unread and matches the verdicts against it.

Every line crossing between them is tab-separated. A probe line is
``KIND<TAB>PROOF<TAB>HOST<TAB>PORT<TAB>PATH`` (KIND ``reach`` or ``block``) or
``check<TAB>PROOF<TAB>CHECK``; a verdict line is ``ok<TAB>PROOF`` or
``FAIL<TAB>PROOF<TAB>WHY``, whoever prints it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path

import attrs

from hpbench.errors import HpbenchError
from hpbench.topology.model import TopologySnapshot
from hpbench.topology.rules import ARMS, PAIRED_ARMS, check_topology

SERVICE_PORT = 8080  # every service of the topology listens here (compose.yaml)
SENTINEL = "sentinel"
STRUCTURE_PROOF = "topology.verify"
# What in-container/proofs checks in an agent besides probing (its `check` lines).
AGENT_CHECKS = ("mcp.none", "apps.disabled", "go.login-shell", "go.offline")
HOST_SOURCE = "host"


@attrs.frozen
class Probe:
    """One proof asked of one place: a probe (``reach``/``block``) or a named check."""

    kind: str
    proof: str
    host: str = ""
    port: int = 0
    path: str = ""

    def line(self) -> str:
        """The probe as the proofs script reads it."""
        if self.kind == "check":
            return f"check\t{self.proof}\t{self.host}"
        return f"{self.kind}\t{self.proof}\t{self.host}\t{self.port}\t{self.path}"


@attrs.frozen
class Verdict:
    """One proof's outcome; ``why`` is empty when it held."""

    proof: str
    why: str = ""

    def line(self) -> str:
        """The verdict line every proof source prints."""
        if not self.why:
            return f"ok\t{self.proof}"
        return f"FAIL\t{self.proof}\t{' '.join(self.why.split())}"


@attrs.frozen
class Attachment:
    """An agent's attachment to one network, as ``bench-firewall attachments`` prints it.

    ``addresses`` are the host's addresses on that network (the gateway, and
    the bridge's IPv6 link-local address once the bridge is up); ``mac`` is the
    agent's MAC address there, the zone a link-local probe from inside needs.
    """

    service: str
    network: str
    bridge: str
    mac: str
    addresses: tuple[str, ...]


class AttachmentsError(HpbenchError):
    """A line of ``bench-firewall attachments`` output that is not one."""


def parse_attachments(text: str) -> list[Attachment]:
    """Read ``service|network|bridge|mac|address...`` lines, refusing any other line."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("|")
        if len(fields) != 5 or not all(fields[:3]):
            msg = f"attachments line {number} is not service|network|bridge|mac|addresses: {line!r}"
            raise AttachmentsError(msg)
        addresses = tuple(fields[4].split())
        for address in addresses:
            try:
                ipaddress.ip_address(address)
            except ValueError as exc:
                msg = f"attachments line {number}: {address!r} is not an IP address"
                raise AttachmentsError(msg) from exc
        found.append(Attachment(fields[0], fields[1], fields[2], fields[3], addresses))
    return found


def _link_local(address: str) -> bool:
    return ipaddress.ip_address(address).is_link_local


@attrs.frozen
class ProofPlan:
    """Every place's proofs: the structure's verdicts, the host's and each container's probes."""

    structure: tuple[Verdict, ...]
    host: tuple[Probe, ...]
    containers: dict[str, tuple[Probe, ...]]

    def write(self, directory: Path) -> None:
        """``structure.verdicts``, ``host.probes`` and ``<service>.probes`` in ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        _write_lines(directory / "structure.verdicts", [v.line() for v in self.structure])
        _write_lines(directory / f"{HOST_SOURCE}.probes", [p.line() for p in self.host])
        for service, probes in self.containers.items():
            _write_lines(directory / f"{service}.probes", [p.line() for p in probes])


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def structure_verdicts(
    snapshot: TopologySnapshot, arms: tuple[str, ...] = PAIRED_ARMS
) -> tuple[Verdict, ...]:
    """One FAIL per broken structural rule, named by its code; one ok when none is broken."""
    findings = check_topology(snapshot, arms)
    if not findings:
        return (Verdict(STRUCTURE_PROOF),)
    return tuple(Verdict(STRUCTURE_PROOF, f"{f.code} at {f.field}: {f.message}") for f in findings)


def _addresses(snapshot: TopologySnapshot, service: str) -> tuple[str, ...]:
    container = snapshot.service(service)
    return container.addresses if container is not None and container.running else ()


def host_probes(attachments: list[Attachment], host_port: int) -> tuple[Probe, ...]:
    """The host's own listener must answer on 127.0.0.1 and on every address an agent
    probes (from the host, a link-local address is reached through its bridge)."""
    probes = [Probe("reach", "host.listener (127.0.0.1)", "127.0.0.1", host_port, "/")]
    seen = set()
    for attachment in attachments:
        for address in attachment.addresses:
            if address in seen:
                continue
            seen.add(address)
            host = f"{address}%{attachment.bridge}" if _link_local(address) else address
            probes.append(Probe("reach", f"host.listener ({address})", host, host_port, "/"))
    return tuple(probes)


def agent_probes(
    snapshot: TopologySnapshot,
    arm: str,
    attachments: list[Attachment],
    host_port: int | None,
    provider: tuple[str, int] | None = None,
    *,
    arms: tuple[str, ...] = (),
) -> tuple[Probe, ...]:
    """What ``<arm>-agent`` must reach (its router) and must not (the other arms' routers,
    the sentinel, a real run's provider, the host's listener at each host address on its
    networks), then its checks. ``arms`` are the run's arms; a one-arm run still proves
    the name of another arm's router unreachable."""
    agent = f"{arm}-agent"
    others = [a for a in arms if a != arm] or [next(a for a in ARMS if a != arm)]
    router = f"{arm}-router"
    port = SERVICE_PORT
    other_routers = [f"{other}-router" for other in others]
    probes = [
        Probe("reach", f"{agent}: router.reachable ({router})", router, port, "/api/metrics"),
        *(
            Probe(
                "block",
                f"{agent}: other-router.name ({other_router})",
                other_router,
                port,
                "/api/metrics",
            )
            for other_router in other_routers
        ),
        Probe("block", f"{agent}: sentinel.name", "sentinel", port, "/"),
    ]
    for other_router in other_routers:
        for address in _addresses(snapshot, other_router):
            proof = f"{agent}: other-router.address ({other_router} at {address})"
            probes.append(Probe("block", proof, address, port, "/"))
    for address in _addresses(snapshot, "sentinel"):
        probes.append(Probe("block", f"{agent}: sentinel.address ({address})", address, port, "/"))
    if provider is not None:
        # Only its router may talk to the provider: the agent must not, even with the key.
        host, provider_port = provider
        proof = f"{agent}: provider.address ({host}:{provider_port})"
        probes.append(Probe("block", proof, host, provider_port, "/"))
    if host_port is not None:
        for attachment in attachments:
            if attachment.service != agent:
                continue
            for address in attachment.addresses:
                # Inside, a link-local address needs the agent's interface on that
                # link as its zone; only its MAC address is known out here.
                zoned = _link_local(address) and attachment.mac
                host = f"{address}%{attachment.mac}" if zoned else address
                proof = f"{agent}: host.address ({address})"
                probes.append(Probe("block", proof, host, host_port, "/"))
    probes.extend(Probe("check", f"{agent}: {check}", check) for check in AGENT_CHECKS)
    return tuple(probes)


def _egress_probes(snapshot: TopologySnapshot) -> Iterator[tuple[str, tuple[Probe, ...]]]:
    # From the sentinel, hpbench's own container on the routers' egress network: a router
    # is a plug-in image that need not hold a shell to probe from.
    if snapshot.service("provider") is None:
        return
    proof = f"{SENTINEL}: provider.reachable"
    yield SENTINEL, (Probe("reach", proof, "provider", SERVICE_PORT, "/healthz"),)


def plan_proofs(
    snapshot: TopologySnapshot,
    attachments: list[Attachment],
    host_port: int | None,
    arms: tuple[str, ...] = PAIRED_ARMS,
    provider: tuple[str, int] | None = None,
) -> ProofPlan:
    """Every proof ``bench-isolation`` must see hold for a run of ``arms`` in ``snapshot``.

    Without a host port (the listener did not start, which the shell reports
    itself) the host proves nothing and no agent probes host addresses. A real run's
    ``provider`` (host, port) is probed, and must be unreachable, from each agent.
    """
    containers = {
        f"{arm}-agent": agent_probes(snapshot, arm, attachments, host_port, provider, arms=arms)
        for arm in arms
    }
    containers.update(_egress_probes(snapshot))
    return ProofPlan(
        structure=structure_verdicts(snapshot, arms),
        host=host_probes(attachments, host_port) if host_port is not None else (),
        containers=containers,
    )
