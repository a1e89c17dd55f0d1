"""What the topology rules look at: plain, Docker-free views of containers and networks."""

from __future__ import annotations

import attrs


@attrs.frozen
class ContainerView:
    """One container of the project, as inspected.

    ``networks`` are Compose network keys (``control``, not
    ``<project>_control``); a network outside the project keeps its full
    name. ``listeners`` is the number of listening TCP sockets seen in the
    container's ``/proc/net/tcp*``, or None when it was not read.
    ``addresses`` are its IPv4 and global IPv6 addresses on every network.
    """

    service: str
    name: str
    running: bool
    networks: tuple[str, ...]
    network_mode: str
    published_ports: tuple[str, ...]
    mounts: tuple[str, ...]
    privileged: bool
    command: tuple[str, ...]
    listeners: int | None = None
    addresses: tuple[str, ...] = ()


@attrs.frozen
class NetworkView:
    """One network of the project: whether it is internal and which services it holds."""

    key: str
    name: str
    internal: bool
    services: tuple[str, ...]


@attrs.frozen
class TopologySnapshot:
    """Everything the rules need about one Compose project."""

    project: str
    containers: tuple[ContainerView, ...]
    networks: tuple[NetworkView, ...]

    def service(self, name: str) -> ContainerView | None:
        """The container of a service, if it runs in this project."""
        for container in self.containers:
            if container.service == name:
                return container
        return None

    def network(self, key: str) -> NetworkView | None:
        """A project network by its Compose key."""
        for network in self.networks:
            if network.key == key:
                return network
        return None
