"""Read a running Compose project through python-on-whales, without changing anything."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from python_on_whales import DockerClient, DockerException
from python_on_whales.components.container.cli_wrapper import Container

from hpbench.errors import PrerequisiteError
from hpbench.findings import Finding
from hpbench.topology.model import ContainerView, NetworkView, TopologySnapshot
from hpbench.topology.rules import PAIRED_ARMS, ROUTER_NETWORKS, check_topology

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
NETWORK_LABEL = "com.docker.compose.network"
_TCP_LISTEN = "0A"
# Docker's embedded DNS resolver listens on 127.0.0.11 inside every container on a
# user-defined network; it belongs to the engine, not to the process in the container.
_ENGINE_DNS = "0B00007F:"


def _published(container: Container) -> tuple[str, ...]:
    ports: list[str] = []
    for port, bindings in (container.host_config.port_bindings or {}).items():
        ports.extend(f"{b.host_ip or ''}:{b.host_port}->{port}" for b in bindings or [])
    for port, bindings in (container.network_settings.ports or {}).items():
        ports.extend(
            f"{b.get('HostIp', '')}:{b.get('HostPort')}->{port}"
            for b in bindings or []
            if isinstance(b, dict)
        )
    if container.host_config.publish_all_ports:
        ports.append("all exposed ports (-P)")
    return tuple(sorted(set(ports)))


def _mounts(container: Container) -> tuple[str, ...]:
    return tuple(
        f"{m.source or m.name or ''}:{m.destination or ''}" for m in container.mounts or []
    )


def _addresses(container: Container) -> tuple[str, ...]:
    found: list[str] = []
    for network in (container.network_settings.networks or {}).values():
        found.extend(a for a in (network.ip_address, network.global_ipv6_address) if a)
    return tuple(found)


def count_listeners(proc_net: str) -> int:
    """Listening TCP sockets in ``/proc/net/tcp`` and ``/proc/net/tcp6`` text.

    The engine's embedded DNS listener (127.0.0.11) is not counted.
    """
    count = 0
    for line in proc_net.splitlines():
        fields = line.split()
        if (
            len(fields) > 3
            and fields[0].endswith(":")
            and fields[3] == _TCP_LISTEN
            and not fields[1].startswith(_ENGINE_DNS)
        ):
            count += 1
    return count


def _listeners(client: DockerClient, container: Container) -> int | None:
    # A router is a plug-in image that need not hold a shell or `cat`: its network
    # namespace's sockets are read on the host through its process (/proc/PID/net), and
    # only where that is not allowed, from inside.
    pid = container.state.pid
    if pid:
        try:
            return count_listeners(
                "".join(Path(f"/proc/{pid}/net/{name}").read_text() for name in ("tcp", "tcp6"))
            )
        except OSError:
            pass
    try:
        text = client.container.execute(
            container, ["cat", "/proc/net/tcp", "/proc/net/tcp6"], tty=False
        )
    except DockerException:
        return None
    return count_listeners(str(text or ""))


def _network_keys(client: DockerClient, project: str) -> dict[str, str]:
    networks = client.network.list(filters={"label": f"{PROJECT_LABEL}={project}"})
    return {n.name: (n.labels or {}).get(NETWORK_LABEL, n.name) for n in networks}


def inspect_project(project: str, client: DockerClient | None = None) -> TopologySnapshot:
    """A snapshot of every container and network of one Compose project.

    Raises:
        PrerequisiteError: when the Docker engine cannot be asked.
    """
    client = client or DockerClient()
    try:
        containers = client.container.list(
            all=True, filters={"label": f"{PROJECT_LABEL}={project}"}
        )
        keys = _network_keys(client, project)
        views: list[ContainerView] = []
        names: dict[str, str] = {}
        for c in containers:
            service = (c.config.labels or {}).get(SERVICE_LABEL, c.name)
            names[c.id] = service
            running = bool(c.state.running)
            views.append(
                ContainerView(
                    service=service,
                    name=c.name,
                    running=running,
                    networks=tuple(
                        sorted(keys.get(n, n) for n in (c.network_settings.networks or {}))
                    ),
                    network_mode=c.host_config.network_mode or "",
                    published_ports=_published(c),
                    mounts=_mounts(c),
                    privileged=bool(c.host_config.privileged),
                    command=tuple(c.config.cmd or ()),
                    listeners=(
                        _listeners(client, c) if running and service in ROUTER_NETWORKS else None
                    ),
                    addresses=_addresses(c),
                )
            )
        networks = []
        for name, key in sorted(keys.items()):
            inspected = client.network.inspect(name)
            members = (inspected.containers or {}).keys()
            networks.append(
                NetworkView(
                    key=key,
                    name=name,
                    internal=bool(inspected.internal),
                    services=tuple(sorted(names.get(m, m) for m in members)),
                )
            )
    except DockerException as exc:
        msg = f"cannot inspect compose project {project}: {exc}"
        raise PrerequisiteError(msg, "start the Docker engine: benchmarks/provision.sh") from exc
    return TopologySnapshot(
        project=project,
        containers=tuple(sorted(views, key=lambda v: v.service)),
        networks=tuple(networks),
    )


def verify_project(
    project: str, client: DockerClient | None = None, arms: tuple[str, ...] = PAIRED_ARMS
) -> list[Finding]:
    """Inspect a running project and return every isolation rule broken for ``arms``."""
    return check_topology(inspect_project(project, client), arms)


def service_names(snapshot: TopologySnapshot) -> Iterable[str]:
    """The services that have a container (for messages)."""
    return (c.service for c in snapshot.containers)
