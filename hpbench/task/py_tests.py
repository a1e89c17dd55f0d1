"""What Python sources say about a pytest grader's hidden tests, and whether
``required_tests`` matches it.

A pytest grader's ``required_tests`` names each hidden test by the hidden file's
workspace path: ``"tests/test_hidden.py" = ["test_reserve_rejects_overdraw", ...]``.
A test is a module-level ``def test_...`` (or ``async def``) function of that file, or
``Group::test_...`` for a method of a module-level ``class Test...``: the names pytest's
node ids carry, parameters left out (:func:`hpbench.results.pytestreport.split_node_id`).
The sources are read with :mod:`ast`, never imported: a hidden file is the task's,
but reading must not run it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

from hpbench.findings import Finding

_CODE = "manifest.grader.required_tests"


def _tests_of(tree: ast.Module) -> set[str]:
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, functions) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names.update(
                f"{node.name}::{member.name}"
                for member in node.body
                if isinstance(member, functions) and member.name.startswith("test")
            )
    return names


def declared_pytests(hidden: Iterable[tuple[str, Path]]) -> dict[str, set[str] | None]:
    """The tests each hidden ``.py`` file declares, by workspace path; None for a file
    that cannot be parsed (reported by :func:`check_required_pytests`). Files that are
    missing or not Python are left out (the manifest reports a missing file on its own)."""
    declared: dict[str, set[str] | None] = {}
    for name, path in hidden:
        if not name.endswith(".py") or not path.is_file():
            continue
        try:
            tree = ast.parse(path.read_bytes(), filename=name)
        except (SyntaxError, ValueError):
            declared[name] = None
            continue
        declared[name] = _tests_of(tree)
    return declared


def check_required_pytests(
    required: Mapping[str, tuple[str, ...]],
    declared: Mapping[str, set[str] | None],
    *,
    source: str,
    field: str,
) -> list[Finding]:
    """Every named test is declared in its hidden file, and every declared test is named:
    a hidden test nobody requires could fail unnoticed."""
    findings: list[Finding] = []
    for name, found in sorted(declared.items()):
        if found is None:
            message = f"hidden file {name} is not valid Python"
            findings.append(Finding(_CODE, message, source, field))
    for file, tests in required.items():
        where = f"{field}[{file!r}]"
        available = declared.get(file)
        if file not in declared:
            findings.append(
                Finding(_CODE, f"{file} is not a hidden Python file of the grader", source, where)
            )
            continue
        if not tests:
            findings.append(Finding(_CODE, "names no test", source, where))
        for index, test in enumerate(tests):
            if available is not None and test not in available:
                message = f"{test} is not a test declared in {file}"
                findings.append(Finding(_CODE, message, source, f"{where}[{index}]"))
    for file, found in sorted(declared.items()):
        unnamed = sorted((found or set()) - set(required.get(file, ())))
        if unnamed:
            message = f"hidden tests in {file} that required_tests does not name: "
            findings.append(Finding(_CODE, message + ", ".join(unnamed), source, field))
    return findings
