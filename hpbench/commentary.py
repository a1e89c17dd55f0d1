"""Commentary coverage (spec 002): evidence, from an attempt's Codex JSONL, that the agent
left the commentary a task's profile asks for.

A task manifest may declare versioned profiles (``[[commentary.profiles]]``), each assigned
to benchmark modes and arms, each with minimums: assistant messages matching a pattern,
successful commands carrying a marker (commentary that Codex JSONL keeps as a command
execution, not a message), and completed item types. For every attempt whose mode and arm
a profile names, the runner checks the attempt's Codex JSONL and writes the outcome apart
from everything else: ``commentary-coverage.json`` in the attempt's directory and the
attempt object's ``commentary`` field. Missing or malformed evidence fails the attempt
(``commentary-coverage``); it is never a hidden-grader verdict and never a capture metric.

Only counts and the profile's own names are kept: never a message's text or a command.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import attrs

from hpbench.codex.events import InvalidLine, ItemEvent, ItemPhase
from hpbench.codex.items import AgentMessage, CommandExecution, item_type
from hpbench.codex.reader import read_events
from hpbench.schemagen import doc
from hpbench.task.manifest import CommentaryProfile


@attrs.frozen
class Requirement:
    """One minimum of a profile and what the stream showed."""

    kind: str = attrs.field(metadata=doc("`message` (a pattern), `command-marker` or `item-type`."))
    name: str = attrs.field(
        metadata=doc("The pattern, marker or item type, as the profile has it.")
    )
    minimum: int = attrs.field(metadata=doc("How many the profile requires."))
    found: int = attrs.field(metadata=doc("How many the stream holds."))

    @property
    def met(self) -> bool:
        """Whether the stream holds at least the minimum."""
        return self.found >= self.minimum


@attrs.frozen
class ProfileCoverage:
    """One profile held to one attempt's stream."""

    profile: str = attrs.field(metadata=doc("The profile's id and version (`id@version`)."))
    covered: bool = attrs.field(metadata=doc("Every requirement met, in a well-formed stream."))
    requirements: tuple[Requirement, ...] = attrs.field(metadata=doc("Each minimum and its count."))


@attrs.frozen
class CommentaryCoverage:
    """An attempt's commentary coverage: every profile its mode and arm are assigned."""

    covered: bool = attrs.field(
        metadata=doc("Every profile covered; false when the stream is missing or malformed.")
    )
    stream: str = attrs.field(
        metadata=doc("`read`, `missing` (no Codex JSONL) or `malformed` (a line not an event).")
    )
    malformed_lines: int = attrs.field(metadata=doc("Lines of the stream that are not events."))
    profiles: tuple[ProfileCoverage, ...] = attrs.field(metadata=doc("Each assigned profile."))


def assigned(profiles: Sequence[CommentaryProfile], mode: str, arm: str) -> list[CommentaryProfile]:
    """The profiles a task assigns to ``arm`` in ``mode``."""
    return [p for p in profiles if mode in p.modes and arm in p.arms]


@attrs.define
class _Seen:
    messages: list[str] = attrs.field(factory=list)
    commands: list[str] = attrs.field(factory=list)
    item_types: Counter[str] = attrs.field(factory=Counter)
    malformed: int = 0


def _read(jsonl: Path) -> _Seen:
    seen = _Seen()
    for event in read_events(jsonl):
        if isinstance(event, InvalidLine):
            seen.malformed += 1
            continue
        if not isinstance(event, ItemEvent) or event.phase is not ItemPhase.COMPLETED:
            continue
        item = event.item
        seen.item_types[item_type(item)] += 1
        if isinstance(item, AgentMessage):
            seen.messages.append(item.text)
        elif isinstance(item, CommandExecution) and item.exit_code == 0:
            # A marker counts only in a command that ran and succeeded.
            seen.commands.append(item.command)
    return seen


def _profile(profile: CommentaryProfile, seen: _Seen, *, readable: bool) -> ProfileCoverage:
    requirements = [
        Requirement(
            "message",
            rule.pattern,
            rule.minimum,
            sum(1 for text in seen.messages if re.search(rule.pattern, text)),
        )
        for rule in profile.messages
    ]
    requirements += [
        Requirement(
            "command-marker",
            rule.marker,
            rule.minimum,
            sum(1 for command in seen.commands if rule.marker in command),
        )
        for rule in profile.command_markers
    ]
    requirements += [
        Requirement("item-type", name, 1, seen.item_types[name]) for name in profile.item_types
    ]
    return ProfileCoverage(
        profile=f"{profile.id}@{profile.version}",
        covered=readable and all(r.met for r in requirements),
        requirements=tuple(requirements),
    )


def coverage(
    profiles: Sequence[CommentaryProfile], mode: str, arm: str, jsonl: Path
) -> CommentaryCoverage | None:
    """``arm``'s commentary coverage in ``mode`` from its Codex JSONL; None when the task
    assigns it no profile."""
    chosen = assigned(profiles, mode, arm)
    if not chosen:
        return None
    if not jsonl.is_file() or jsonl.stat().st_size == 0:
        seen, state = _Seen(), "missing"
    else:
        seen = _read(jsonl)
        state = "malformed" if seen.malformed else "read"
    results = tuple(_profile(p, seen, readable=state == "read") for p in chosen)
    return CommentaryCoverage(
        covered=state == "read" and all(r.covered for r in results),
        stream=state,
        malformed_lines=seen.malformed,
        profiles=results,
    )
