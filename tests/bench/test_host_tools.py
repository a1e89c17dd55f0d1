"""The host never runs git (or another configuration-reading tool) where an agent could write.

An agent controls everything in its workspace, its ``.git`` included: a
``core.fsmonitor``, a filter, a hook or an ``includeIf`` there runs as root on
the host the moment the host runs git in that directory. So the host scripts
in ``benchmarks/`` may run git in exactly two places: ``bench-snapshot``, on
the fresh directory it creates before any agent exists, and ``bench-changes``,
in a private repository of its own whose configuration it isolates. Scripts in
``benchmarks/libexec/in-container/`` run inside containers and are not host
commands. The end-to-end payloads (tests/e2e/test_containment.py) prove the
same thing from the other side.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpbench.commands.shell import split_command

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO_ROOT / "benchmarks"
# Where the host may run git, and why it is safe there (see the module docstring).
GIT_ALLOWED = {"libexec/bench-snapshot", "libexec/bench-changes"}
# Other tools by script: provisioning installs the pinned Codex with npm, from the
# caller's directory, never from a workspace.
TOOLS_ALLOWED = {"provision.sh": {"npm"}}
# Tools that read configuration (or run code) found in the directory they work in.
CONFIG_READING = ("git", "make", "npm", "go", "cargo", "pip", "direnv")
# `git` as a word in code: not `.git`, `--skip-git-repo-check` or `git-foo`.
_GIT_WORD = re.compile(r"(?<![\w.-])git(?![\w.-])")


def host_scripts() -> list[Path]:
    scripts = []
    for path in sorted(BENCHMARKS.rglob("*")):
        if not path.is_file() or "in-container" in path.parts or path.suffix == ".py":
            continue
        head = path.read_bytes()[:64]
        if head.startswith(b"#!/usr/bin/env bash") or path.suffix == ".sh":
            scripts.append(path)
    return scripts


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The script's lines with comments dropped (a rough cut: enough for a word search)."""
    lines = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        lines.append((number, line.split(" # ", 1)[0]))
    return lines


def test_the_scripts_are_found() -> None:
    """The scan sees the scripts it is about (a scan of nothing would pass)."""
    names = {str(path.relative_to(BENCHMARKS)) for path in host_scripts()}
    assert {"bench.sh", "libexec/bench-attempt", "libexec/bench-grade"} <= names
    assert "libexec/bench-snapshot" in names


@pytest.mark.parametrize("path", host_scripts(), ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_no_git_outside_the_two_safe_places(path: Path) -> None:
    """No host script but bench-snapshot and bench-changes mentions git in its code,
    whether as a command, an array element or a variable's value."""
    if str(path.relative_to(BENCHMARKS)) in GIT_ALLOWED:
        return
    hits = [
        f"{path.name}:{n}: {line.strip()}" for n, line in code_lines(path) if _GIT_WORD.search(line)
    ]
    assert [] == hits


@pytest.mark.parametrize("path", host_scripts(), ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_no_configuration_reading_tool_runs_on_the_host(path: Path) -> None:
    """Parsed as a shell script, no simple command of a host script starts a
    configuration-reading tool, except git in the two safe places."""
    name_in_tree = str(path.relative_to(BENCHMARKS))
    allowed = TOOLS_ALLOWED.get(name_in_tree, set()) | (
        {"git"} if name_in_tree in GIT_ALLOWED else set()
    )
    found = []
    for command in split_command(path.read_text()):
        if not command.words:
            continue
        name = command.words[0].text.rsplit("/", 1)[-1]
        if name in CONFIG_READING and name not in allowed:
            found.append(f"{name}: {' '.join(w.text for w in command.words)[:120]}")
    assert [] == found


def test_safe_directory_is_never_overridden() -> None:
    """`safe.directory` is git's guard against running in someone else's repository:
    nothing may switch it off."""
    hits = [
        f"{path.relative_to(BENCHMARKS)}:{n}"
        for path in host_scripts()
        for n, line in code_lines(path)
        if "safe.directory" in line
    ]
    assert [] == hits


def test_the_scan_catches_a_host_git_call(tmp_path: Path) -> None:
    """The word scan and the parser both see the call the old bench-attempt made."""
    script = tmp_path / "bench-bad"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "record() {\n"
        '  local -a git_cmd=(git -C "${WORKSPACE}")\n'
        '  "${git_cmd[@]}" add -A -f\n'
        '  git -C "${WORKSPACE}" diff\n'
        "}\n"
    )
    assert [2, 4] == [n - 1 for n, line in code_lines(script) if _GIT_WORD.search(line)]
    names = [c.words[0].text for c in split_command(script.read_text()) if c.words]
    assert "git" in names
