"""A pytest grader's required_tests against what its hidden Python files declare."""

from __future__ import annotations

from pathlib import Path

from hpbench.task.py_tests import check_required_pytests, declared_pytests

HIDDEN = """
import pytest

def test_a(): ...

async def test_async(): ...

def helper_test(): ...

class TestGroup:
    def test_b(self): ...
    def helper(self): ...

class Helper:
    def test_not_collected(self): ...
"""


def _declared(tmp_path: Path, text: str = HIDDEN) -> dict[str, set[str] | None]:
    path = tmp_path / "test_hidden.py"
    path.write_text(text)
    return declared_pytests([("tests/test_hidden.py", path), ("tests/absent.py", tmp_path / "x")])


def _messages(
    required: dict[str, tuple[str, ...]], declared: dict[str, set[str] | None]
) -> list[str]:
    findings = check_required_pytests(required, declared, source="task.toml", field="$.f")
    return [f.message for f in findings]


def test_declared_tests_are_what_pytest_collects(tmp_path: Path) -> None:
    assert {"tests/test_hidden.py": {"test_a", "test_async", "TestGroup::test_b"}} == _declared(
        tmp_path
    )


def test_every_test_named_is_clean(tmp_path: Path) -> None:
    required = {"tests/test_hidden.py": ("test_a", "test_async", "TestGroup::test_b")}
    assert [] == _messages(required, _declared(tmp_path))


def test_a_named_test_nobody_declares(tmp_path: Path) -> None:
    required = {"tests/test_hidden.py": ("test_a", "test_async", "TestGroup::test_b", "test_c")}
    assert ["test_c is not a test declared in tests/test_hidden.py"] == _messages(
        required, _declared(tmp_path)
    )


def test_a_declared_test_nobody_names(tmp_path: Path) -> None:
    """A hidden test that no entry requires could fail unnoticed."""
    required = {"tests/test_hidden.py": ("test_a",)}
    assert [
        "hidden tests in tests/test_hidden.py that required_tests does not name: "
        "TestGroup::test_b, test_async"
    ] == _messages(required, _declared(tmp_path))


def test_a_file_that_is_not_hidden(tmp_path: Path) -> None:
    required = {
        "tests/test_hidden.py": ("test_a", "test_async", "TestGroup::test_b"),
        "tests/test_other.py": ("test_a",),
    }
    assert ["tests/test_other.py is not a hidden Python file of the grader"] == _messages(
        required, _declared(tmp_path)
    )


def test_a_file_that_is_not_python(tmp_path: Path) -> None:
    declared = _declared(tmp_path, "def test_a(:\n")
    assert {"tests/test_hidden.py": None} == declared
    assert ["hidden file tests/test_hidden.py is not valid Python"] == _messages(
        {"tests/test_hidden.py": ("test_a",)}, declared
    )


def test_a_file_naming_no_test(tmp_path: Path) -> None:
    declared = _declared(tmp_path)
    messages = _messages({"tests/test_hidden.py": ()}, declared)
    assert "names no test" in messages
