"""What the engine and the images said before a run, read strictly: every missing or
malformed fact named, and the run refused before any model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench.plan import load_plan
from hpbench.provenance import read_observed
from hpbench.rundir import (
    PROVENANCE_AGENT_IMAGE_ID,
    PROVENANCE_CODEX_VERSION,
    PROVENANCE_GO_VERSION,
    PROVENANCE_IDENTITY,
    PROVENANCE_IMAGE_ID,
    RunLayout,
)

from ..conftest import HPBENCH, planned_env, run
from ..evidence import IMAGE_ID, write_plan, write_provenance

ARMS = ("control", "hpatch")
IMAGES = {"control": "acme/router:1", "hpatch": "acme/router:1"}


def _observed(tmp_path: Path) -> tuple[str, ...]:
    return read_observed(RunLayout(tmp_path), ARMS, IMAGES, "0.169.0").missing


def test_complete(tmp_path: Path) -> None:
    write_provenance(tmp_path, ARMS, json.dumps({"name": "acme-router", "version": "2.1"}))
    observed = read_observed(RunLayout(tmp_path), ARMS, IMAGES, "0.169.0")
    assert () == observed.missing
    assert ("codex-cli 0.169.0", IMAGE_ID) == (observed.codex_version, observed.agent_image_id)
    assert [("control", "acme/router:1", IMAGE_ID, "acme-router", "2.1")] == [
        (r.arm, r.image, r.image_id, r.name, r.version) for r in observed.routers[:1]
    ]


@pytest.mark.parametrize(
    ("fact", "content", "text"),
    [
        (PROVENANCE_IMAGE_ID, None, "control router image id: not recorded"),
        (PROVENANCE_IMAGE_ID, "", "control router image id: empty"),
        (PROVENANCE_IMAGE_ID, "latest\n", "control router image id: not an image id"),
        (PROVENANCE_IMAGE_ID, "sha256:" + "G" * 64, "control router image id: not an image id"),
        (PROVENANCE_IDENTITY, None, "control router identity: not recorded"),
        (PROVENANCE_IDENTITY, "router 1.0\n", "did not print JSON"),
        (PROVENANCE_IDENTITY, '{"name": "r"}\n', "exactly {name, version}"),
        (PROVENANCE_IDENTITY, '{"name": "r", "version": "1", "x": 1}\n', "exactly"),
        (PROVENANCE_IDENTITY, '["r", "1"]\n', "exactly"),
        (PROVENANCE_IDENTITY, '{"name": "", "version": "1"}\n', "printable text"),
        (PROVENANCE_IDENTITY, '{"name": "r\\u0007", "version": "1"}\n', "printable text"),
        (PROVENANCE_IDENTITY, '{"name": "r", "version": 1}\n', "printable text"),
        (PROVENANCE_IDENTITY, '{"name": "' + "r" * 129 + '", "version": "1"}\n', "printable"),
        (PROVENANCE_IDENTITY, '{"name": "r"}\n{"name": "s"}\n', "more than one line"),
    ],
)
def test_each_router_fact(tmp_path: Path, fact: str, content: str | None, text: str) -> None:
    """A router that does not say who it is, or says it badly, is named with why."""
    write_provenance(tmp_path, ARMS)
    path = RunLayout(tmp_path).router_fact("control", fact)
    if content is None:
        path.unlink()
    else:
        path.write_text(content)
    missing = _observed(tmp_path)
    assert 1 == len(missing) and text in missing[0], missing


def test_codex_other_than_the_pin(tmp_path: Path) -> None:
    write_provenance(tmp_path, ARMS, codex="0.1")
    assert (
        "Codex version: the agent image has 'codex-cli 0.1', the pin is 'codex-cli 0.169.0'",
    ) == _observed(tmp_path)


def test_no_agent_image_id_and_no_codex(tmp_path: Path) -> None:
    write_provenance(tmp_path, ARMS)
    (RunLayout(tmp_path).provenance / PROVENANCE_AGENT_IMAGE_ID).unlink()
    (RunLayout(tmp_path).provenance / PROVENANCE_CODEX_VERSION).write_text("")
    missing = _observed(tmp_path)
    assert ["Codex version: empty", "agent image id: not recorded"] == [
        line.split(" (")[0] for line in missing
    ]


def test_only_the_scheduled_arms(tmp_path: Path) -> None:
    """control-only: the treatment's router is neither asked nor missed."""
    write_provenance(tmp_path, ("control",))
    observed = read_observed(RunLayout(tmp_path), ("control",), IMAGES, "0.169.0")
    assert ((), ["control"]) == (observed.missing, [r.arm for r in observed.routers])


class TestCommand:
    def test_complete_is_written_into_run_json(self, tmp_path: Path) -> None:
        write_plan(tmp_path, provenance=False)
        write_provenance(tmp_path, ARMS)
        done = run([str(HPBENCH), "run", "provenance", str(tmp_path)])
        assert 0 == done.returncode, done.stderr
        plan = load_plan(tmp_path)
        assert plan.observed is not None and () == plan.observed.missing
        assert "hpbench-reference-router" == plan.observed.routers[0].name

    def test_incomplete_is_refused_naming_each_fact(self, tmp_path: Path) -> None:
        """Exit 1 with each missing fact on stderr; run.json keeps what was found."""
        write_plan(tmp_path, provenance=False)
        write_provenance(tmp_path, ARMS, identity="not json")
        done = run([str(HPBENCH), "run", "provenance", str(tmp_path)])
        assert 1 == done.returncode
        for arm in ARMS:
            line = f"provenance incomplete: {arm} router identity: --version did not print JSON"
            assert line in done.stderr
        plan = load_plan(tmp_path)
        assert plan.observed is not None and 2 == len(plan.observed.missing)
        assert IMAGE_ID == plan.observed.routers[0].image_id


class TestGoToolchain:
    """The task's runtime.go_version reaches the images: a run whose agent or grader image
    has another Go (images built for another task, HPBENCH_SKIP_BUILD) is refused."""

    def _missing(self, tmp_path: Path, go_version: str) -> tuple[str, ...]:
        layout = RunLayout(tmp_path)
        return read_observed(layout, ARMS, IMAGES, "0.169.0", go_version).missing

    def test_the_tasks_go_is_in_both_images(self, tmp_path: Path) -> None:
        write_provenance(tmp_path, ARMS, go="1.26.2")
        observed = read_observed(RunLayout(tmp_path), ARMS, IMAGES, "0.169.0", "1.26.2")
        assert () == observed.missing
        assert {"agent": "go1.26.2", "grader": "go1.26.2"} == observed.go_versions

    def test_another_go_is_refused(self, tmp_path: Path) -> None:
        write_provenance(tmp_path, ARMS, go="1.24.11")
        missing = self._missing(tmp_path, "1.26.2")
        assert [
            "Go in the agent image: it has 'go1.24.11', the task needs 'go1.26.2'",
            "Go in the grader image: it has 'go1.24.11', the task needs 'go1.26.2'",
        ] == [line.split(" (")[0] for line in missing]

    def test_an_unread_go_is_unknown_not_assumed(self, tmp_path: Path) -> None:
        write_provenance(tmp_path, ARMS)
        (RunLayout(tmp_path).provenance / f"grader.{PROVENANCE_GO_VERSION}").unlink()
        observed = read_observed(RunLayout(tmp_path), ARMS, IMAGES, "0.169.0", "1.24.11")
        assert ["Go in the grader image: not recorded"] == [
            line.split(" (")[0] for line in observed.missing
        ]
        assert observed.go_versions["grader"] is None

    def test_a_plan_without_a_go_version_holds_nothing(self, tmp_path: Path) -> None:
        """A run.json planned before the field existed: nothing to hold the images to."""
        write_provenance(tmp_path, ARMS, go="1.19")
        assert () == self._missing(tmp_path, "")

    def test_the_plan_exports_the_tasks_go_for_the_build(self, tmp_path: Path) -> None:
        env = planned_env(tmp_path / "run", env={"TASK": "kv-rangestream"})
        assert "1.24.11" == env["GO_VERSION"]
