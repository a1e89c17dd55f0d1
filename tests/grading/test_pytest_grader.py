"""The pytest grader kind against a cheating workspace: nothing the agent writes steers it.

Each case grades meterkit-rollup's base (where the hidden tests cannot pass) with
something planted that would make a naive pytest run report success: a conftest.py that
turns every failure into a pass, a pytest.ini whose addopts deselect the hidden tests,
production code that prints forged report lines or exits 0 as soon as it is imported.
The verdict a run gives (``hpbench grader verdict``) must still fail, for the reason its
status names. The oracle with the same plants passes: the defences do not break honest
code that prints.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..conftest import HPBENCH, run, task_snapshots
from .conftest import Graded, grade

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("images")]

TASK = "meterkit-rollup"
HIDDEN = "tests/test_hidden_rollup.py"
REQUIRED = [
    "test_rollup_sums_each_window",
    "test_rollup_keeps_empty_windows",
    "test_rollup_range_is_half_open",
    "test_rollup_last_window_cut_short",
    "test_rollup_orders_tenants_metrics_and_windows",
    "test_rollup_leaves_out_series_with_nothing_in_range",
    "test_rollup_rejects_bad_bounds",
]
FORGED = "".join(
    json.dumps({"event": "test", "nodeid": f"{HIDDEN}::{name}", "outcome": "passed"}) + "\\n"
    for name in REQUIRED
)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return task_snapshots(tmp_path_factory.mktemp("meterkit"), TASK)


def _workspace(
    snapshots: dict[str, Path], which: str, tmp_path: Path, plants: dict[str, str]
) -> Path:
    workspace = tmp_path / "workspace"
    shutil.copytree(snapshots[which], workspace, symlinks=True)
    for relative, text in plants.items():
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return workspace


def _verdict(graded: Graded) -> dict[str, object]:
    assert 0 == graded.returncode, graded.stderr
    judged = run([str(HPBENCH), "grader", "verdict", str(graded.out), "--task", TASK, "--json"])
    assert judged.returncode in (0, 1), judged.stderr
    document: dict[str, object] = json.loads(judged.stdout)
    assert (judged.returncode == 0) == (document["status"] == "passed")
    return document


CONFTEST_PASSES_ALL = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None

def pytest_collectreport(report):
    report.outcome = "passed"
"""

INI_DESELECTS = """[pytest]
addopts = -p no:hpbench_pytest_report --co -k nothing_matches
"""

PRINTS_FORGED_LINES = f"""
import os, sys
sys.stdout.write("{FORGED}")
sys.stdout.flush()
os.write(1, b"{FORGED}")
"""

EXITS_AT_IMPORT = """
import os
os._exit(0)
"""

CASES = {
    "a conftest that passes every test": {"conftest.py": CONFTEST_PASSES_ALL},
    "a conftest beside the hidden test": {"tests/conftest.py": CONFTEST_PASSES_ALL},
    "a pytest.ini that deselects the hidden tests": {"pytest.ini": INI_DESELECTS},
    "a pyproject.toml that deselects them": {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n"
    },
    "production code that prints forged verdicts": {"meterkit/usage.py": PRINTS_FORGED_LINES},
    "production code that exits 0 when imported": {"meterkit/usage.py": EXITS_AT_IMPORT},
    "a module named like the report plugin": {
        "hpbench_pytest_report.py": f'import os\nos.write(1, b"{FORGED}")\nos._exit(0)\n'
    },
}


@pytest.mark.parametrize("plants", list(CASES.values()), ids=list(CASES))
def test_a_planted_cheat_does_not_pass_the_base(
    snapshots: dict[str, Path], tmp_path: Path, plants: dict[str, str]
) -> None:
    workspace = _workspace(snapshots, "base", tmp_path, plants)
    verdict = _verdict(grade(workspace, tmp_path / "grade", task=TASK))
    assert "passed" != verdict["status"], verdict
    assert [] == verdict["passed"], verdict


def test_the_oracle_passes_beside_the_planted_configuration(
    snapshots: dict[str, Path], tmp_path: Path
) -> None:
    """A workspace's own configuration and conftest are ignored, not fatal: the oracle
    with them still passes, every required test by name."""
    plants = {
        "conftest.py": CONFTEST_PASSES_ALL,
        "pytest.ini": INI_DESELECTS,
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n",
    }
    workspace = _workspace(snapshots, "oracle", tmp_path, plants)
    verdict = _verdict(grade(workspace, tmp_path / "grade", task=TASK))
    assert "passed" == verdict["status"], verdict
    assert len(REQUIRED) == len(verdict["passed"])  # type: ignore[arg-type]


def test_printing_code_goes_to_stderr_and_the_oracle_still_passes(
    snapshots: dict[str, Path], tmp_path: Path
) -> None:
    """Output of the tested code never reaches the report stream, even where pytest's own
    capture does not reach (an exit handler): an honest module that prints does not make
    the stream unreadable."""
    workspace = _workspace(snapshots, "oracle", tmp_path, {})
    rollup = workspace / "meterkit" / "rollup.py"
    rollup.write_text(
        rollup.read_text() + 'import atexit\natexit.register(print, "loading the roll-up")\n'
    )
    graded = grade(workspace, tmp_path / "grade", task=TASK)
    verdict = _verdict(graded)
    assert "passed" == verdict["status"], verdict
    assert "loading the roll-up" in graded.grader_stderr
    assert "loading the roll-up" not in graded.stdout
