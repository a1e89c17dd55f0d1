"""Read-only proofs about a running hpbench Compose topology.

:func:`inspect_project` reads a project's containers and networks through
python-on-whales (inspect calls, plus reading ``/proc/net`` inside each
router); :func:`check_topology` turns that snapshot into findings without
touching Docker, so the rules are testable on plain data.
"""

from hpbench.topology.model import ContainerView, NetworkView, TopologySnapshot
from hpbench.topology.rules import AGENT_NETWORK, ROUTER_NETWORKS, check_topology
from hpbench.topology.whales import inspect_project, verify_project

__all__ = [
    "AGENT_NETWORK",
    "ROUTER_NETWORKS",
    "ContainerView",
    "NetworkView",
    "TopologySnapshot",
    "check_topology",
    "inspect_project",
    "verify_project",
]
