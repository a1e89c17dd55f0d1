"""What Go sources say about a task's hidden tests, and whether ``required_tests`` matches it.

A go-test grader's ``required_tests`` names each hidden test by package. Checking
that takes reading Go: which top-level tests each directory's hidden
``_test.go`` files declare, and which module a bundled base's ``go.mod`` names
(so a directory maps to an exact import path). The manifest model
(:mod:`hpbench.task.manifest`) decides when the check applies; this module does
the reading and the matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from hpbench.findings import Finding

_TEST_NAME = re.compile(r"^Test[A-Za-z0-9_]*$")
# A top-level Go test declared in a _test.go file: func TestX(t *testing.T).
_TEST_DECLARATION = re.compile(
    r"^func (Test[A-Za-z0-9_]*)\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE
)
# Top-level functions go test runs that no verdict can require by name.
_UNNAMEABLE = re.compile(r"^func ((?:Example|Benchmark|Fuzz)[A-Za-z0-9_]*)\(", re.MULTILINE)
_GO_MODULE = re.compile(r"^module\s+(\S+)\s*$", re.MULTILINE)
_CODE = "manifest.grader.required_tests"


def go_module_path(base: Path) -> str | None:
    """The module path in ``base/go.mod``; None when there is none to read."""
    try:
        text = (base / "go.mod").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = _GO_MODULE.search(text)
    return match[1].strip('"') if match else None


def unnameable_functions(hidden: Iterable[tuple[str, Path]]) -> list[tuple[str, str]]:
    """(file, function) for each Example, Benchmark or Fuzz function of the hidden _test.go
    files: go test runs an Example (and a failing one fails the verdict as another
    failure), but ``required_tests`` names only Test functions."""
    found = []
    for name, path in hidden:
        if name.endswith("_test.go") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [(name, function) for function in _UNNAMEABLE.findall(text)]
    return found


def declared_tests(hidden: Iterable[tuple[str, Path]]) -> dict[str, set[str]]:
    """The top-level tests each directory's hidden _test.go files declare.

    ``hidden`` holds (workspace-relative name, file in the task) pairs; a file
    that is missing is left out (the manifest reports it on its own).
    """
    declared: dict[str, set[str]] = {}
    for name, path in hidden:
        if not name.endswith("_test.go") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        declared.setdefault(str(Path(name).parent), set()).update(_TEST_DECLARATION.findall(text))
    return declared


# A Go module path's major-version element (``v2``, ``v3``, ...).
_MAJOR = re.compile(r"v[2-9][0-9]*")


def check_required_tests(
    required: Mapping[str, tuple[str, ...]],
    declared: Mapping[str, set[str]],
    module: str | None,
    *,
    source: str,
    field: str,
) -> list[Finding]:
    """Every named test is declared in a hidden file of its package, and every declared one
    is named: a hidden test that nobody requires could fail unnoticed."""
    findings: list[Finding] = []
    named: dict[str, set[str]] = {}
    for package, tests in required.items():
        where = f"{field}[{package!r}]"
        directories = [d for d in declared if _package_of(d, module, package) == package]
        available = set().union(*(declared[d] for d in directories)) if directories else set()
        if not tests:
            findings.append(Finding(_CODE, "names no test", source, where))
        for index, test in enumerate(tests):
            if not _TEST_NAME.match(test):
                message = f"{test!r} is not a top-level Go test name (Test...)"
            elif test not in available:
                message = f"{test} is not declared in any hidden _test.go file of {package}"
            else:
                named.setdefault(package, set()).add(test)
                continue
            findings.append(Finding(_CODE, message, source, f"{where}[{index}]"))
    for directory, directory_tests in sorted(declared.items()):
        unnamed = sorted(t for t in directory_tests if not any(t in n for n in named.values()))
        if unnamed:
            message = f"hidden tests in {directory}/ that no package names: {', '.join(unnamed)}"
            findings.append(Finding(_CODE, message, source, field))
    return findings


def _package_of(directory: str, module: str | None, package: str) -> str | None:
    """The import path of a hidden directory: exact when the module is known, else the
    named package when it ends in that directory (a git source's module is not here),
    major-version elements aside: ``go.etcd.io/etcd/tests/v3/integration`` is the
    package of ``tests/integration`` (module ``go.etcd.io/etcd/tests/v3`` in ``tests``)."""
    if module is not None:
        return module if directory == "." else f"{module}/{directory}"
    unversioned = "/".join(part for part in package.split("/") if not _MAJOR.fullmatch(part))
    suffix = f"/{directory}"
    if directory == "." or package.endswith(suffix) or unversioned.endswith(suffix):
        return package
    return None
