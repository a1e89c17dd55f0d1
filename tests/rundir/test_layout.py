"""The run directory's one naming: arms, their order, and every artefact path."""

from __future__ import annotations

import ast
from pathlib import Path

from hpbench import rundir
from hpbench.capture import Arm as CaptureArm
from hpbench.modes import MODES, arm_order
from hpbench.rundir import Arm, RunLayout


def test_one_arm_enum() -> None:
    """The capture validator, the Codex configs and the run directory name arms alike."""
    assert Arm is CaptureArm
    assert ["control", "hpatch", "native", "ctp", "mentor"] == [arm.value for arm in Arm]


def test_arm_order_alternates() -> None:
    """Odd repetitions run the baseline first, even ones the treatment first."""
    paired, ctp = MODES["paired"], MODES["ctp-only"]
    assert (Arm.CONTROL, Arm.HPATCH) == arm_order(paired, 1)
    assert (Arm.HPATCH, Arm.CONTROL) == arm_order(paired, 2)
    assert (Arm.CONTROL, Arm.HPATCH) == arm_order(paired, 3)
    assert (Arm.CTP, Arm.NATIVE) == arm_order(ctp, 2)
    assert (Arm.HPATCH,) == arm_order(MODES["hpatch-only"], 2)


def test_paths_match_what_bench_sh_writes(tmp_path: Path) -> None:
    """The names the shell writes (benchmarks/libexec) are the names the layout reads."""
    layout = RunLayout(tmp_path)
    assert tmp_path / "attempts" / "2-hpatch" == layout.attempt(2, "hpatch")
    assert tmp_path / "routers" / "1-control" == layout.router(1, "control")
    assert tmp_path / "reps" / "3" / "provider.jsonl" == layout.provider_records(3)
    names = [p.name for p in (layout.run_json, layout.results, layout.report_json, layout.summary)]
    assert ["run.json", "results.jsonl", "report.json", "summary.md"] == names
    libexec = Path(__file__).resolve().parents[2] / "benchmarks" / "libexec"
    attempt_script = (libexec / "bench-attempt").read_text()
    assert 'DIR="${RUN_DIR}/attempts/${REP}-${ARM}"' in attempt_script
    assert '"${RUN_DIR}/routers/${REP}-${ARM}"' in attempt_script


def test_routers_of_lists_one_arm(tmp_path: Path) -> None:
    """Router directories of one arm, in name order, never the other arm's."""
    layout = RunLayout(tmp_path)
    for name in ("1-control", "2-control", "1-hpatch"):
        (layout.routers / name).mkdir(parents=True)
    assert ["1-control", "2-control"] == [p.name for p in layout.routers_of("control")]


def test_no_other_module_spells_a_run_directory_name() -> None:
    """Every artefact's file name is a string in hpbench/rundir.py alone: any other module
    that writes or reads one names it through rundir (docstrings and help texts may mention
    a name inside a sentence)."""
    root = Path(rundir.__file__).parent
    source = ast.parse(Path(rundir.__file__).read_text())
    names = {
        node.value
        for node in ast.walk(source)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "." in node.value
        and any(c.isalpha() for c in node.value)
        and "/" not in node.value
        and " " not in node.value
    }
    assert {"run.json", "codex.jsonl", "grader.exit", "verdict.json", "plan.env"} <= names
    spelled = [
        f"{path.relative_to(root.parent)}:{node.lineno} {node.value!r}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "rundir.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert [] == spelled
