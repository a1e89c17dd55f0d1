"""What ran: the provenance of a run's measurements, and whether it is complete.

A number is only as good as knowing what produced it. Each scheduled arm's router is
named by its image reference, the engine's image id and the identity the image
itself reported (``--version``, docs/router-contract.md), with the mode and protocol
its captured snapshot says it ran in; Codex by its version in the agent image and that
image's id; the provider by scheme and host only (never a path, query or key); the task
by its fingerprint; hpbench by its version and git revision.

The facts come from the plan (``run.json``), from ``provenance/`` (bench-provenance
asks the engine and the images) and from the captures. Test equipment is named by what
it said: the reference router by its self-reported name, whatever its image is tagged;
the scripted provider in the offline demo, or wherever a capture shows its request ids.
Anything that cannot be established is listed in ``missing``, and the report refuses a
run whose provenance is incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hpbench.capture.models import MetricsSnapshot, ProviderRecord
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.reference.identity import REFERENCE_ROUTER_NAME, SCRIPTED_REQUEST_ID_PREFIX
from hpbench.rundir import (
    PROVENANCE_AGENT_IMAGE_ID,
    PROVENANCE_CODEX_VERSION,
    PROVENANCE_IDENTITY,
    PROVENANCE_IMAGE_ID,
    RunLayout,
)

REFERENCE_ROUTER = "reference router (test equipment)"
SCRIPTED_PROVIDER = "scripted provider (test equipment)"
_MAX_FIELD = 128
_IMAGE_ID_PREFIX = "sha256:"


def _fact(path: Path) -> tuple[str | None, str | None]:
    """A one-line fact file's text, or None and why it is not there."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None, "not recorded"
    if not text:
        return None, "empty (the engine or the image did not answer)"
    if "\n" in text:
        return None, "more than one line"
    return text, None


def _image_id(path: Path) -> tuple[str | None, str | None]:
    text, why = _fact(path)
    if text is None:
        return None, why
    digest = text.removeprefix(_IMAGE_ID_PREFIX)
    if not text.startswith(_IMAGE_ID_PREFIX) or len(digest) != 64 or not digest.isalnum():
        return None, "not an image id"
    return text, None


def _printable(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_FIELD
        and value.isprintable()
        and value.strip() == value
    )


def read_identity(path: Path) -> tuple[dict[str, str] | None, str | None]:
    """A router's ``--version`` line: exactly ``name`` and ``version``, short and printable."""
    text, why = _fact(path)
    if text is None:
        return None, why
    try:
        data = json.loads(text)
    except ValueError:
        return None, "--version did not print JSON"
    if not isinstance(data, dict) or set(data) != {"name", "version"}:
        return None, "--version must print exactly {name, version}"
    if not all(_printable(data[key]) for key in ("name", "version")):
        return None, f"name and version must be printable text of 1 to {_MAX_FIELD} characters"
    return {"name": data["name"], "version": data["version"]}, None


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
    layout: RunLayout,
    run: Mapping[str, Any],
    arm: str,
    snapshots: Iterable[MetricsSnapshot],
    missing: list[str],
) -> dict[str, Any]:
    image_id, why = _image_id(layout.router_fact(arm, PROVENANCE_IMAGE_ID))
    if image_id is None:
        missing.append(f"{arm} router image id: {why}")
    identity, why = read_identity(layout.router_fact(arm, PROVENANCE_IDENTITY))
    if identity is None:
        missing.append(f"{arm} router identity: {why}")
    mode, protocol = _ran_as(snapshots)
    if mode is None:
        missing.append(f"{arm} router mode and protocol: no single one in its valid captures")
    reference = identity is not None and identity["name"] == REFERENCE_ROUTER_NAME
    return {
        "arm": arm,
        "image": run[f"{arm}_router_image"],
        "image_id": image_id,
        "name": None if identity is None else identity["name"],
        "version": None if identity is None else identity["version"],
        "mode": mode,
        "protocol": protocol,
        "stand_in": REFERENCE_ROUTER if reference else None,
    }


def provenance(
    run_dir: Path,
    run: Mapping[str, Any],
    snapshots: Mapping[str, Iterable[MetricsSnapshot]],
    capture_dirs: Iterable[Path],
) -> dict[str, Any]:
    """The report's ``provenance`` section: what ran, the stand-ins, and what is missing.

    ``snapshots`` holds each arm's validated metrics snapshots; ``capture_dirs`` every
    router capture of the run.
    """
    layout = RunLayout(run_dir)
    missing: list[str] = []
    routers = [_router(layout, run, arm, snapshots.get(arm, ()), missing) for arm in run["arms"]]
    codex, why = _fact(layout.provenance / PROVENANCE_CODEX_VERSION)
    pinned = f"codex-cli {run['codex_version']}"
    if codex is None:
        missing.append(f"Codex version: {why}")
    elif codex != pinned:
        missing.append(f"Codex version: the agent image has {codex!r}, the pin is {pinned!r}")
    agent_image, why = _image_id(layout.provenance / PROVENANCE_AGENT_IMAGE_ID)
    if agent_image is None:
        missing.append(f"agent image id: {why}")
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
        "codex_version": codex,
        "agent_image_id": agent_image,
        "provider": endpoint,
        "provider_stand_in": provider_stand_in,
        "routers": routers,
        "stand_ins": stand_ins,
        "missing": missing,
    }
