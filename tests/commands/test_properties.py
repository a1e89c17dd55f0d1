"""Properties: analysis never raises, and loops ignore unrelated events."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hpbench.codex import iter_events
from hpbench.codex.testing import StreamBuilder
from hpbench.commands import analyze_events, classify, split_command, to_json
from hpbench.commands.plain import split_plain
from hpbench.commands.shell import parse_tree

ROOT = "/workspace"

# Shell-flavoured text: quotes, operators, expansions, heredoc markers, newlines.
_SHELL_ALPHABET = st.sampled_from(
    [
        *"abcgrepsdif -./*?[]{},;|&<>()$`'\"\\\n\t~=!#%",
        "<<'EOF'\n",
        "\nEOF\n",
        "$(",
        "${",
        "&&",
        "||",
        "bash -lc ",
        "git diff ",
        "rg -n ",
    ]
)
shell_text = st.lists(_SHELL_ALPHABET, max_size=40).map("".join) | st.text(max_size=60)


@settings(max_examples=400, deadline=None)
@given(shell_text)
def test_split_and_classify_never_raise(command: str):
    """Any command string yields simple commands, each with exactly one category."""
    for simple in split_command(command):
        classified = classify(simple, ROOT)
        assert classified.category is not None


@settings(max_examples=100, deadline=None)
@given(st.lists(shell_text, max_size=6), st.lists(st.text(max_size=30), max_size=4))
def test_analysis_never_raises(commands: list[str], junk: list[str]):
    """Streams of arbitrary commands and junk lines analyse without raising."""
    builder = StreamBuilder(workspace_root=ROOT).start()
    for index, command in enumerate(commands):
        builder.command(command)
        if index % 2 == 0:
            builder.patch(["a.go"])
    for line in junk:
        builder.raw(line)
    analysis = analyze_events(iter_events(builder.lines), workspace_root=ROOT)
    assert json.dumps(to_json(analysis))


# ---- invariance under unrelated events -----------------------------------------------------

PATHS = ["a.go", "src/b.go", "src/pkg/c.go", "docs/d.md"]
COMMANDS = [
    "cat a.go",
    "rg -n x src",
    "rg -n x -g '*.md' .",
    "git diff",
    "git diff -- src/b.go",
    "sed -n 1,20p src/pkg/c.go",
    "grep -rn x docs",
    "ls -la",
    "go test ./...",
]
step = st.one_of(
    st.tuples(st.just("command"), st.sampled_from(COMMANDS)),
    st.tuples(st.just("patch"), st.lists(st.sampled_from(PATHS), min_size=1, max_size=3)),
)
noise = st.one_of(
    st.tuples(st.just("message"), st.text(max_size=20)),
    st.tuples(st.just("reasoning"), st.text(max_size=20)),
    st.tuples(st.just("failed-patch"), st.lists(st.sampled_from(PATHS), min_size=1, max_size=2)),
)


def _build(events: list[tuple[str, object]]) -> list[str]:
    builder = StreamBuilder(workspace_root=ROOT).start()
    for kind, value in events:
        if kind == "command":
            builder.command(str(value))
        elif kind == "patch":
            builder.patch(list(value))  # type: ignore[call-overload]
        elif kind == "failed-patch":
            builder.patch(list(value), status="failed")  # type: ignore[call-overload]
        elif kind == "message":
            builder.message(str(value))
        else:
            builder.reasoning(str(value))
    return builder.lines


def _loops(lines: list[str]) -> tuple[object, ...]:
    analysis = analyze_events(iter_events(lines), workspace_root=ROOT)
    return (analysis.loops, analysis.workspace_diff_loops, analysis.terminal_validation)


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=12), st.lists(st.tuples(st.integers(0, 12), noise), max_size=8))
def test_loops_ignore_interleaved_noise(steps: list[tuple[str, object]], extra: list):
    """Messages, reasoning and failed patches anywhere do not change the loops."""
    noisy: list[tuple[str, object]] = list(steps)
    for position, event in sorted(extra, key=lambda pair: pair[0], reverse=True):
        noisy.insert(min(position, len(noisy)), event)
    assert _loops(_build(steps)) == _loops(_build(noisy))


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=12), st.data())
def test_loops_ignore_order_of_adjacent_changes(steps: list[tuple[str, object]], data):
    """Two file changes with no command between them may come in either order."""
    pairs = [
        index
        for index in range(len(steps) - 1)
        if steps[index][0] == "patch" and steps[index + 1][0] == "patch"
    ]
    swapped = list(steps)
    if pairs:
        index = data.draw(st.sampled_from(pairs))
        swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
    assert _loops(_build(steps)) == _loops(_build(swapped))


# ---- the plain-script shortcut agrees with the parser ----------------------------------------

_plain_word = st.one_of(
    st.from_regex(r"[A-Za-z0-9_./:=,+-]{1,8}", fullmatch=True),
    st.from_regex(r"'[^'\x00]{0,6}'", fullmatch=True),
    st.from_regex(r'"[^"$`\\!\x00]{0,6}"', fullmatch=True),
    st.sampled_from(["cd", "cd", "cat", "rg", "git", "-", "..", "src", "''", "a'b'\"c\""]),
)
_quiet_redirect = st.sampled_from(
    [
        "2>&1",
        ">&2",
        "1>&2",
        ">/dev/null",
        "2>/dev/null",
        "&>/dev/null",
        "> /dev/null",
        "2>&1 >/dev/null",
    ]
)
_plain_command = st.builds(
    lambda words, redirect, glue: " ".join(words) + glue + redirect,
    st.lists(_plain_word, min_size=1, max_size=5),
    st.sampled_from(["", "", "2>&1", ">/dev/null", ">/dev/nullx", "&>/dev/null"]),
    st.sampled_from([" ", "", "  "]),
) | st.lists(_plain_word, min_size=1, max_size=5).map(" ".join)
_plain_command = _plain_command | st.builds(
    lambda words, redirect, tail: f"{' '.join(words)} {redirect} {tail}",
    st.lists(_plain_word, min_size=1, max_size=3),
    _quiet_redirect,
    st.sampled_from(["", "x", "| cat"]),
)
_plain_script = st.builds(
    lambda first, rest, tail: first + "".join(op + cmd for op, cmd in rest) + tail,
    _plain_command,
    st.lists(st.tuples(st.sampled_from([" && ", " || ", "; ", " | ", "|", ";"]), _plain_command)),
    st.sampled_from(["", ";", " "]),
)


@settings(max_examples=500, deadline=None)
@given(_plain_script | shell_text)
def test_plain_shortcut_matches_parser(script: str):
    """Where the shortcut answers, it answers exactly what tree-sitter-bash says."""
    plain = split_plain(script, ".")
    if plain is not None:
        assert parse_tree(script, 1, ".") == plain


def test_plain_shortcut_is_used():
    """Typical agent commands take the shortcut (a guard for the performance claim)."""
    for script in [
        "cat src/a.go",
        "rg -n -e 'X' --glob '*.go' src",
        "cd a && grep -rn x . | wc -l",
    ]:
        assert split_plain(script, ".") is not None
