"""What ran: the provenance of a run's measurements, and whether it is complete.

A number is only as good as knowing what produced it. Each scheduled arm's router is
named by its image reference, the engine's image id and the identity the image
itself reported (``--version``, docs/router-contract.md), with the mode and protocol
its captured snapshot says it ran in; Codex by its version in the agent image and that
image's id; the provider by scheme and host only (never a path, query or key); the task
by its fingerprint; hpbench by its version and git revision.

The facts come from the plan (``run.json``, whose ``observed`` section holds what the
engine and the images said before the run: :mod:`hpbench.provenance`) and from the
captures. Test equipment is named by what
it said: the reference router by its self-reported name, whatever its image is tagged;
the scripted provider in the offline demo, or wherever a capture shows its request ids.
Anything that cannot be established is listed in ``missing``, and the report refuses a
run whose provenance is incomplete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hpbench.capture.models import MetricsSnapshot, ProviderRecord
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.reference.identity import REFERENCE_ROUTER_NAME, SCRIPTED_REQUEST_ID_PREFIX

REFERENCE_ROUTER = "reference router (test equipment)"
SCRIPTED_PROVIDER = "scripted provider (test equipment)"
NOT_OBSERVED = "nothing was recorded before the run (hpbench run provenance)"


def provider_endpoint(provider: str) -> str:
    """A provider URL as scheme and host (and port): no path, query or credential."""
    parts = urlsplit(provider)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def scripted_provider_answered(capture_dirs: Iterable[Path]) -> bool:
    """Whether any capture holds a provider request id of the scripted provider's."""
    for directory in capture_dirs:
        if not directory.is_dir():
            continue
        try:
            for _, _, record in iter_records(directory):
                if isinstance(record, ProviderRecord) and (
                    record.provider_request_id or ""
                ).startswith(SCRIPTED_REQUEST_ID_PREFIX):
                    return True
        except (ContractError, OSError):
            continue  # an unreadable capture is refused by its own validation
    return False


def _ran_as(snapshots: Iterable[MetricsSnapshot]) -> tuple[str | None, str | None]:
    """The mode and protocol every snapshot of an arm agrees on (None when none or mixed)."""
    seen = {(s.router.mode.value, s.router.protocol.value) for s in snapshots}
    if len(seen) != 1:
        return None, None
    ((mode, protocol),) = seen
    return mode, protocol


def _router(
    observed: Mapping[str, Any], snapshots: Iterable[MetricsSnapshot], missing: list[str]
) -> dict[str, Any]:
    mode, protocol = _ran_as(snapshots)
    if mode is None:
        missing.append(
            f"{observed['arm']} router mode and protocol: no single one in its valid captures"
        )
    reference = observed["name"] == REFERENCE_ROUTER_NAME
    return {
        **observed,
        "mode": mode,
        "protocol": protocol,
        "stand_in": REFERENCE_ROUTER if reference else None,
    }


def provenance(
    run: Mapping[str, Any],
    valid: Mapping[str, MetricsSnapshot],
    capture_dirs: Iterable[Path],
) -> dict[str, Any]:
    """The report's ``provenance`` section: what ran, the stand-ins, and what is missing.

    ``valid`` holds the validated metrics snapshots by attempt key (``<rep>-<arm>``);
    ``capture_dirs`` every router capture of the run.
    """
    observed = run["observed"]
    missing: list[str] = []
    if observed is None:
        missing.append(NOT_OBSERVED)
        observed = {
            "routers": [
                {
                    "arm": arm,
                    "image": run[f"{arm}_router_image"],
                    "image_id": None,
                    "name": None,
                    "version": None,
                }
                for arm in run["arms"]
            ],
            "codex_version": None,
            "agent_image_id": None,
            "missing": [],
        }
    missing += observed["missing"]
    routers = [
        _router(
            router,
            [s for key, s in valid.items() if key.endswith(f"-{router['arm']}")],
            missing,
        )
        for router in observed["routers"]
    ]
    revision = run["hpbench_revision"] or None
    if revision is None:
        missing.append("hpbench git revision: the run was not planned from a git checkout")
    provider_stand_in: str | None = SCRIPTED_PROVIDER
    if run["offline_demo"]:
        endpoint = "scripted provider (offline demo)"
    else:
        endpoint = provider_endpoint(run["provider"])
        scripted = scripted_provider_answered(capture_dirs)
        provider_stand_in = SCRIPTED_PROVIDER if scripted else None
    stand_ins = sorted(
        {f"{r['arm']} router: {r['stand_in']}" for r in routers if r["stand_in"]}
        | ({f"provider: {provider_stand_in}"} if provider_stand_in else set())
    )
    return {
        "hpbench_version": run["hpbench_version"],
        "hpbench_revision": revision,
        "task_fingerprint": run["fingerprint"],
        "codex_version": observed["codex_version"],
        "agent_image_id": observed["agent_image_id"],
        "provider": endpoint,
        "provider_stand_in": provider_stand_in,
        "routers": routers,
        "stand_ins": stand_ins,
        "missing": missing,
    }
