"""What a run is about to measure, as the engine and the images say, before it starts.

``bench-provenance`` runs once the images are built and before any container of the
run starts; it records in ``provenance/`` (one fact a file, named in
:mod:`hpbench.rundir`) each scheduled arm's router image id and what the image
prints for ``--version`` (docs/router-contract.md), the agent image's id and its
``codex --version``. ``hpbench run provenance RUN_DIR`` reads them here, strictly,
into run.json's ``observed`` section, and refuses the run before any model call when
something is missing: results whose provenance is incomplete would be refused anyway.

Everything read here came from the user's image or the engine: it is checked for form
(an image id is ``sha256:`` and 64 hex digits; an identity is exactly ``name`` and
``version``, short printable text) and otherwise reported as missing, with why.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from hpbench.rundir import (
    PROVENANCE_AGENT_IMAGE_ID,
    PROVENANCE_CODEX_VERSION,
    PROVENANCE_GO_VERSION,
    PROVENANCE_IDENTITY,
    PROVENANCE_IMAGE_ID,
    RunLayout,
)
from hpbench.schemagen import doc

_MAX_FIELD = 128
# The images whose Go toolchain bench-provenance reads: the agent's and the grader's.
GO_IMAGES = ("agent", "grader")
_IMAGE_ID_PREFIX = "sha256:"


@attrs.frozen
class RouterImage:
    """One scheduled arm's router image, as the engine and the image itself said."""

    arm: str = attrs.field(metadata=doc("`control` or `hpatch`."))
    image: str = attrs.field(metadata=doc("The image reference the run named."))
    image_id: str | None = attrs.field(metadata=doc("The engine's image id; null when unknown."))
    name: str | None = attrs.field(metadata=doc("The router's self-reported name (`--version`)."))
    version: str | None = attrs.field(metadata=doc("Its self-reported version."))


@attrs.frozen
class Observed:
    """What bench-provenance recorded before the run, read strictly."""

    routers: tuple[RouterImage, ...] = attrs.field(metadata=doc("Each scheduled arm's."))
    codex_version: str | None = attrs.field(metadata=doc("`codex --version` in the agent image."))
    agent_image_id: str | None = attrs.field(metadata=doc("The agent image's id."))
    missing: tuple[str, ...] = attrs.field(
        metadata=doc("What could not be established, one line each; empty when complete.")
    )
    go_versions: dict[str, str | None] = attrs.field(
        factory=dict,
        metadata=doc(
            "`go env GOVERSION` in the agent and grader images, by image (`agent`, "
            "`grader`); null where it could not be read."
        ),
    )


def _fact(text: str | None) -> tuple[str | None, str | None]:
    """A one-line fact, or None and why it is not one."""
    if text is None:
        return None, "not recorded"
    text = text.strip()
    if not text:
        return None, "empty (the engine or the image did not answer)"
    if "\n" in text:
        return None, "more than one line"
    return text, None


def image_id(text: str | None) -> tuple[str | None, str | None]:
    """An engine image id (``sha256:`` and 64 hex digits), or None and why not."""
    value, why = _fact(text)
    if value is None:
        return None, why
    digest = value.removeprefix(_IMAGE_ID_PREFIX)
    if (
        not value.startswith(_IMAGE_ID_PREFIX)
        or len(digest) != 64
        or not set(digest) <= set(string.hexdigits.lower())
    ):
        return None, "not an image id"
    return value, None


def _printable(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_FIELD
        and value.isprintable()
        and value.strip() == value
    )


def identity(text: str | None) -> tuple[dict[str, str] | None, str | None]:
    """A router's ``--version`` line: exactly ``name`` and ``version``, short and printable."""
    value, why = _fact(text)
    if value is None:
        return None, why
    try:
        data = json.loads(value)
    except ValueError:
        return None, "--version did not print JSON"
    if not isinstance(data, dict) or set(data) != {"name", "version"}:
        return None, "--version must print exactly {name, version}"
    if not all(_printable(data[key]) for key in ("name", "version")):
        return None, f"name and version must be printable text of 1 to {_MAX_FIELD} characters"
    return {"name": data["name"], "version": data["version"]}, None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def read_observed(
    layout: RunLayout,
    arms: Sequence[str],
    images: Mapping[str, str],
    codex_pin: str,
    go_version: str = "",
) -> Observed:
    """The facts bench-provenance recorded for a run of ``arms`` with router ``images``
    (by arm), the Codex pin ``codex_pin`` and the task's Go toolchain ``go_version`` (a
    plan made before it was planned has none: nothing to hold the images to); each one
    missing, malformed or different is named."""
    missing: list[str] = []
    routers = []
    for arm in arms:
        found_id, why = image_id(_read(layout.router_fact(arm, PROVENANCE_IMAGE_ID)))
        if found_id is None:
            missing.append(f"{arm} router image id: {why}")
        said, why = identity(_read(layout.router_fact(arm, PROVENANCE_IDENTITY)))
        if said is None:
            missing.append(f"{arm} router identity: {why}")
        routers.append(
            RouterImage(
                arm=arm,
                image=images[arm],
                image_id=found_id,
                name=None if said is None else said["name"],
                version=None if said is None else said["version"],
            )
        )
    codex, why = _fact(_read(layout.provenance / PROVENANCE_CODEX_VERSION))
    pinned = f"codex-cli {codex_pin}"
    if codex is None:
        missing.append(f"Codex version: {why}")
    elif codex != pinned:
        missing.append(f"Codex version: the agent image has {codex!r}, the pin is {pinned!r}")
    agent, why = image_id(_read(layout.provenance / PROVENANCE_AGENT_IMAGE_ID))
    if agent is None:
        missing.append(f"agent image id: {why}")
    go_versions: dict[str, str | None] = {}
    for image in GO_IMAGES:
        found, why = _fact(_read(layout.provenance / f"{image}.{PROVENANCE_GO_VERSION}"))
        go_versions[image] = found
        if not go_version:
            continue
        if found is None:
            missing.append(f"Go in the {image} image: {why}")
        elif found != f"go{go_version}":
            missing.append(
                f"Go in the {image} image: it has {found!r}, the task needs 'go{go_version}' "
                "(runtime.go_version; rebuild the images without HPBENCH_SKIP_BUILD)"
            )
    return Observed(
        routers=tuple(routers),
        codex_version=codex,
        agent_image_id=agent,
        go_versions=go_versions,
        missing=tuple(missing),
    )
