"""Child threads: the proof a router retains for each child it starts, and the model rules.

A capture's traffic belongs to root threads (Codex's measured threads) and child threads.
A child is either Codex's own (a sub-agent Codex spawned: its ``collab_tool_call`` in the
parent's ``codex exec --json`` stream names the child's thread id) or the router's (a
Mentor Handoff consultation: the router writes one :class:`ChildProof` line to
``<capture-output>/children/proofs.jsonl`` when it starts the child). Spec 002: every
child thread must match a retained proof, and any unproved thread fails validation.

:class:`ModelCheck` holds the records to the models the run configured: every root
attempt asks for the configured parent model; a child's attempts ask only for the
configured child model, or (a Mentor treatment) for the mentor model, and a Mentor
treatment makes at least one mentor-model request. What the provider reported is shown in
the report, never checked against a name here (providers report dated snapshots).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from hpbench._convert import make_converter, structure
from hpbench._jsonio import append_line, canonical_json
from hpbench.capture import codes
from hpbench.capture._sink import FindingSink
from hpbench.capture.models import Count, Ident, ProviderRecord, Record, ThreadRole, doc
from hpbench.errors import ContractError

PROOFS_DIR: Final = "children"
PROOFS_FILE: Final = "proofs.jsonl"
PROOF_SCHEMA: Final = "hpbench.child-proof.v1"
MENTOR_SUBAGENT: Final = "mentor"
"""The ``x-openai-subagent`` value (and the thread's ``subagent``) of a Mentor child."""


@attrs.frozen
class ChildProof:
    """One child thread a router started, written when it starts it (one line each)."""

    schema: Literal["hpbench.child-proof.v1"] = attrs.field(
        metadata=doc("Always `hpbench.child-proof.v1`.")
    )
    thread_id: Ident = attrs.field(metadata=doc("The child's thread id, as its records name it."))
    parent_thread_id: Ident = attrs.field(metadata=doc("The thread it was started for."))
    root_thread_id: Ident = attrs.field(metadata=doc("The parent's root thread."))
    kind: Literal["mentor"] = attrs.field(metadata=doc("Why it exists: `mentor`."))
    model: Ident = attrs.field(metadata=doc("The model the router asked the child to use."))
    trigger_exchange: Count = attrs.field(
        metadata=doc("The parent's exchange whose request the consultation came before.")
    )


@attrs.frozen
class ModelExpectation:
    """The models a run configured for one arm."""

    parent: str
    child: frozenset[str]
    mentor: str | None = None


_CONVERTER = make_converter()


def proofs_path(capture_dir: Path | str) -> Path:
    """Where a router keeps its child proofs inside its ``--capture-output``."""
    return Path(capture_dir) / PROOFS_DIR / PROOFS_FILE


def append_proof(capture_dir: Path | str, proof: ChildProof) -> None:
    """Append one proof line (mode 0600, one write), creating the directory 0700."""
    append_line(proofs_path(capture_dir), canonical_json(_CONVERTER.unstructure(proof)))


def read_proofs(capture_dir: Path | str, sink: FindingSink) -> list[ChildProof]:
    """The proofs a capture directory retains; every unreadable line is a finding."""
    path = proofs_path(capture_dir)
    if not path.is_file():
        return []
    proofs: list[ChildProof] = []
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                data = json.loads(raw)
                proofs.append(
                    structure(
                        _CONVERTER, data, ChildProof, source=str(path), code=codes.CHILD_PROOF
                    )
                )
            except (ValueError, ContractError) as exc:
                sink.add(
                    codes.CHILD_PROOF,
                    f"not a child proof: {exc}",
                    file=str(path),
                    line=number,
                )
    return proofs


@attrs.define
class _Thread:
    role: ThreadRole
    parent: str | None
    root: str
    subagent: str | None
    models: set[str | None] = attrs.field(factory=set)
    first: tuple[str, int] | None = None


class ModelCheck:
    """Holds a capture's records to the configured models as the validator streams them.

    :meth:`see` takes every record in file order (the validator's one pass);
    :meth:`finish` holds the child threads to their proofs once all are seen.
    """

    def __init__(self, expected: ModelExpectation, sink: FindingSink) -> None:
        self.expected = expected
        self.sink = sink
        self.threads: dict[str, _Thread] = {}
        self.by_exchange: dict[int, str] = {}
        self.mentor_requests = 0

    def see(self, record: Record, file: str, line: int) -> None:
        """One record of the capture, in file order (an attrs record or the validator's
        decoded struct of the same shape: told apart by ``kind``)."""
        if record.kind == "client":
            ref = record.thread
            self.by_exchange[record.exchange] = ref.thread_id
            thread = self.threads.setdefault(
                ref.thread_id,
                _Thread(ref.role, ref.parent_thread_id, ref.root_thread_id, ref.subagent),
            )
            if thread.first is None:
                thread.first = (file, line)
        elif record.kind == "provider":
            thread_id = self.by_exchange.get(record.exchange)
            if thread_id is None:
                return  # the stream's own rules report an attempt without its exchange
            thread = self.threads[thread_id]
            thread.models.add(record.request_model)
            mentor = self.expected.mentor
            self.mentor_requests += mentor is not None and record.request_model == mentor
            _check_attempt(thread, record, self.expected, (file, line), self.sink)

    def finish(self, proofs: Sequence[ChildProof], spawned: Iterable[str]) -> None:
        """Hold every child thread to a proof (``spawned``: the child thread ids Codex's
        own streams say it spawned), and a Mentor treatment to a mentor request."""
        _check_children(self.threads, proofs, set(spawned), self.sink)
        if self.expected.mentor is not None and self.mentor_requests == 0:
            self.sink.add(
                codes.MODELS_MENTOR_MISSING,
                f"the Mentor treatment made no request to its mentor model {self.expected.mentor}",
            )


def _check_attempt(
    thread: _Thread,
    record: ProviderRecord,
    expected: ModelExpectation,
    where: tuple[str, int],
    sink: FindingSink,
) -> None:
    file, line = where
    model = record.request_model
    if thread.role is ThreadRole.ROOT:
        if model != expected.parent:
            sink.add(
                codes.MODELS_PARENT,
                f"a root thread's attempt asked for {json.dumps(model)}; the run configured "
                f"{expected.parent}",
                file=file,
                line=line,
                field="$.request_model",
            )
        return
    allowed = set(expected.child)
    if expected.mentor is not None:
        allowed.add(expected.mentor)
    if model not in allowed:
        sink.add(
            codes.MODELS_CHILD,
            f"a child thread's attempt asked for {json.dumps(model)}; allowed: "
            f"{', '.join(sorted(allowed))}",
            file=file,
            line=line,
            field="$.request_model",
        )


def _check_children(
    threads: dict[str, _Thread],
    proofs: Sequence[ChildProof],
    spawned: set[str],
    sink: FindingSink,
) -> None:
    by_thread: dict[str, ChildProof] = {}
    for proof in proofs:
        if proof.thread_id in by_thread:
            sink.add(codes.CHILD_PROOF, f"two proofs name child thread {proof.thread_id}")
        by_thread[proof.thread_id] = proof
    for thread_id, thread in threads.items():
        if thread.role is not ThreadRole.CHILD:
            continue
        file, line = thread.first or (None, None)
        found = by_thread.get(thread_id)
        if found is not None:
            problem = _mismatch(thread, found)
            if problem is not None:
                sink.add(codes.MODELS_UNPROVED, problem, file=file, line=line, field="$.thread")
            continue
        if thread.subagent != MENTOR_SUBAGENT and thread_id in spawned:
            continue
        sink.add(
            codes.MODELS_UNPROVED,
            f"child thread {thread_id} matches no retained child proof (no router proof, and "
            "no Codex spawn names it)",
            file=file,
            line=line,
            field="$.thread",
        )
    for thread_id in by_thread.keys() - threads.keys():
        sink.add(
            codes.CHILD_PROOF,
            f"a child proof names thread {thread_id}, which has no traffic in the capture",
        )


def _mismatch(thread: _Thread, proof: ChildProof) -> str | None:
    if thread.subagent != MENTOR_SUBAGENT:
        return f"child thread {proof.thread_id} has a mentor proof but is not a mentor thread"
    if (thread.parent, thread.root) != (proof.parent_thread_id, proof.root_thread_id):
        return f"child thread {proof.thread_id} does not descend from the parent its proof names"
    if thread.models - {proof.model}:
        return f"child thread {proof.thread_id} asked for a model its proof does not name"
    return None
