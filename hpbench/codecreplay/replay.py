"""Replay a frozen corpus through a codec and measure request-input bytes before and after.

Replay reads the manifest and the frozen samples next to it, nothing else: every
sample must be there, a regular file, with the recorded length and SHA-256, or
nothing is measured. What it reports are codec measurements on the recorded
eligible local population; no conversation content appears in the result or in
an error, only identities, counts, byte lengths and digests.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

from hpbench.codecreplay.manifest import CODE, CorpusManifest, Sample, read_manifest, sample_path
from hpbench.codecreplay.rollout import (
    REQUEST_RULE,
    IneligibleError,
    json_bytes,
    parse_rollout,
    request_inputs,
)
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.reference._ctp2 import compress_input
from hpbench.schemagen import doc

RESULT_SCHEMA: Final = "hpbench.codec-replay.v1"


@attrs.frozen
class Codec:
    """A codec under measurement: its name and what it does to one request's input items."""

    name: str
    compress: Callable[[list[Any]], list[Any]]


REFERENCE_CTP2: Final = Codec("reference CTP/2 codec (test equipment)", compress_input)


@attrs.frozen
class SampleBytes:
    """One sample's measurement: its identities, its requests and their input bytes."""

    order: int = attrs.field(metadata=doc("The sample's order in the manifest."))
    session_id: str = attrs.field(metadata=doc("Its logical session."))
    sha256: str = attrs.field(metadata=doc("SHA-256 of its frozen bytes (verified)."))
    requests: int = attrs.field(metadata=doc("Reconstructed model requests."))
    input_bytes: int = attrs.field(metadata=doc("Their inputs' compact JSON bytes, summed."))
    coded_bytes: int = attrs.field(metadata=doc("The same after the codec, summed."))
    saved_bytes: int = attrs.field(metadata=doc("`input_bytes - coded_bytes` (signed)."))


@attrs.frozen
class ReplayResult:
    """Codec measurements on a frozen corpus (``hpbench.codec-replay.v1``)."""

    schema: str = attrs.field(metadata=doc("Always `hpbench.codec-replay.v1`."))
    manifest: str = attrs.field(metadata=doc("The manifest replayed."))
    manifest_sha256: str = attrs.field(metadata=doc("Its identity: SHA-256 of its bytes."))
    codec: str = attrs.field(metadata=doc("The codec measured."))
    seed: int = attrs.field(metadata=doc("The freeze's seed."))
    population: int = attrs.field(metadata=doc("Eligible logical sessions at the freeze."))
    request_rule: str = attrs.field(metadata=doc("How request inputs were reconstructed."))
    description: str = attrs.field(metadata=doc("What these numbers are and are not."))
    samples: tuple[SampleBytes, ...] = attrs.field(metadata=doc("Each sample, in order."))
    requests: int = attrs.field(metadata=doc("Requests over every sample."))
    input_bytes: int = attrs.field(metadata=doc("Input bytes over every sample."))
    coded_bytes: int = attrs.field(metadata=doc("Coded bytes over every sample."))
    saved_bytes: int = attrs.field(metadata=doc("`input_bytes - coded_bytes` (signed)."))


def describe(codec: Codec, manifest: CorpusManifest) -> str:
    """What a replay's numbers are, in the words the benchmark may use."""
    return (
        f"Codec measurements of the {codec.name} on the recorded eligible local population "
        f"(frozen samples: {len(manifest.samples)} of {manifest.population} logical sessions, "
        f"seed {manifest.seed}): compact-JSON bytes of reconstructed request inputs before "
        "and after the codec. They are not evidence of task success, latency, provider "
        "billing, or universal compression efficiency."
    )


def _who(sample: Sample) -> str:
    return f"sample {sample.order} (session {sample.session_id})"


def _verified(root: Path, sample: Sample, *, source: str, field: str) -> bytes | Finding:
    path = sample_path(root, sample)

    def refuse(message: str) -> Finding:
        return Finding(CODE, f"{_who(sample)}: {message}", file=source, field=field)

    try:
        status = path.lstat()
    except FileNotFoundError:
        return refuse(f"{path.relative_to(root)} is missing")
    if not stat.S_ISREG(status.st_mode):
        return refuse(f"{path.relative_to(root)} is not a regular file")
    if status.st_size != sample.bytes:
        return refuse(f"has {status.st_size} bytes; the manifest records {sample.bytes}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return refuse(f"cannot be read: {exc.strerror}")
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != sample.bytes or digest != sample.sha256:
        return refuse("its SHA-256 is not the manifest's: the sample changed")
    return data


def _measure(sample: Sample, data: bytes, codec: Codec, *, source: str, field: str) -> SampleBytes:
    try:
        rollout = parse_rollout(data)
    except IneligibleError as exc:
        message = f"{_who(sample)}: the frozen rollout is not eligible ({exc.reason})"
        raise ContractError(message, [Finding(CODE, message, file=source, field=field)]) from None
    if rollout.session_id != sample.session_id:
        message = f"{_who(sample)}: the frozen rollout belongs to another session"
        raise ContractError(message, [Finding(CODE, message, file=source, field=field)])
    requests = before = after = 0
    for items in request_inputs(rollout.items):
        requests += 1
        before += json_bytes(items)
        after += json_bytes(codec.compress(items))
    return SampleBytes(
        order=sample.order,
        session_id=sample.session_id,
        sha256=sample.sha256,
        requests=requests,
        input_bytes=before,
        coded_bytes=after,
        saved_bytes=before - after,
    )


def replay(manifest_path: Path, codec: Codec = REFERENCE_CTP2) -> ReplayResult:
    """Measure ``codec`` on the corpus ``manifest_path`` describes.

    Raises:
        ContractError: a manifest off its contract, or any sample missing, not a regular
            file, or changed (each named by order and session); nothing is measured then.
    """
    read = read_manifest(manifest_path)
    manifest = read.manifest
    root = manifest_path.parent
    source = str(manifest_path)
    summary = f"{source}: the frozen corpus does not match its manifest"
    # Every sample is checked before any is measured: a partial corpus yields no numbers.
    problems = [
        found
        for index, sample in enumerate(manifest.samples)
        if isinstance(
            found := _verified(root, sample, source=source, field=f"$.samples[{index}]"), Finding
        )
    ]
    if problems:
        raise ContractError(summary, problems)
    measured: list[SampleBytes] = []
    for index, sample in enumerate(manifest.samples):
        field = f"$.samples[{index}]"
        # Read again, and checked again, one at a time: a corpus may not fit in memory.
        data = _verified(root, sample, source=source, field=field)
        if isinstance(data, Finding):
            raise ContractError(summary, [data])
        measured.append(_measure(sample, data, codec, source=source, field=field))
    samples = tuple(measured)
    before = sum(s.input_bytes for s in samples)
    after = sum(s.coded_bytes for s in samples)
    return ReplayResult(
        schema=RESULT_SCHEMA,
        manifest=source,
        manifest_sha256=read.sha256,
        codec=codec.name,
        seed=manifest.seed,
        population=manifest.population,
        request_rule=REQUEST_RULE,
        description=describe(codec, manifest),
        samples=samples,
        requests=sum(s.requests for s in samples),
        input_bytes=before,
        coded_bytes=after,
        saved_bytes=before - after,
    )
