"""The run plan: settings checked and the task read once, written once for the shell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from hpbench.errors import ContractError, HpbenchError
from hpbench.plan import (
    PLAN_SCHEMA,
    RUN_JSON_CONSUMERS,
    SHELL_VARIABLES,
    RunPlan,
    load_plan,
    write_plan,
)
from hpbench.rundir import RunLayout, SuiteLayout
from hpbench.settings import Settings
from hpbench.task.registry import load_task

from ..conftest import HPBENCH, REPO_ROOT, TASK, TASKS_DIR, planned_env, run


def _plan(run_dir: Path, env: dict[str, str] | None = None, tasks: Path = TASKS_DIR) -> RunPlan:
    run_dir.mkdir(exist_ok=True)
    return write_plan("paired", run_dir, env or {}, lambda task: load_task(task, tasks))


class TestWritten:
    def test_run_json_is_the_plan(self, tmp_path: Path) -> None:
        """run.json reads back, strictly, as the plan that was written."""
        plan = _plan(tmp_path / "run")
        assert plan == load_plan(tmp_path / "run")
        assert (PLAN_SCHEMA, "run", TASK) == (plan.schema, plan.run_id, plan.task)

    def test_everything_the_shell_reads(self, tmp_path: Path) -> None:
        """Grader spec, both arms' Codex configs, the fingerprint inputs and the replay
        scripts, each where the layout says."""
        plan = _plan(tmp_path / "run")
        layout = RunLayout(tmp_path / "run")
        spec = layout.grader_spec
        assert list(plan.grader.command) == (spec / "command").read_text().splitlines()
        assert f"{plan.grader.timeout_seconds}\n" == (spec / "timeout_seconds").read_text()
        assert "go-test\n" == (spec / "kind").read_text()
        hidden = [line.split("\t")[0] for line in (spec / "hidden-files").read_text().splitlines()]
        assert list(plan.grader.files) == hidden
        for arm in ("control", "hpatch"):
            config = layout.codex_config(arm).read_text()
            assert f'base_url = "http://{arm}-router:8080/v1"' in config
            assert 'model = "gpt-6-astra"' in config
        lines = layout.fingerprint_inputs.read_text().splitlines()
        assert any(line.endswith("/task.toml") for line in lines)
        assert {"control.json", "hpatch.json"} <= {p.name for p in layout.replay.iterdir()}

    def test_bad_settings_write_nothing(self, tmp_path: Path) -> None:
        """A refused plan names each bad variable and leaves the run directory empty."""
        run_dir = tmp_path / "run"
        with pytest.raises(ContractError) as caught:
            _plan(run_dir, {"AGENT_MEMORY": "lots", "REPETITIONS": "0"})
        fields = {finding.field for finding in caught.value.findings}
        assert {"AGENT_MEMORY", "REPETITIONS"} <= fields
        assert [] == list(run_dir.iterdir())

    def test_router_images_reach_compose(self, tmp_path: Path) -> None:
        """Each arm's router image is a plan.env variable compose.yaml runs."""
        _plan(tmp_path / "run", {"HPATCH_ROUTER_IMAGE": "example/router:1"})
        text = RunLayout(tmp_path / "run").plan_env.read_text()
        assert "export HPBENCH_HPATCH_ROUTER_IMAGE=example/router:1" in text
        assert "export HPBENCH_CONTROL_ROUTER_IMAGE=example/router:1" in text
        # The treatment's protocol reaches its router's --protocol (ctp2 unless chosen).
        assert "export HPBENCH_MODEL_PROTOCOL=ctp2" in text

    def test_the_tasks_compression_requirement_is_planned(self, tmp_path: Path) -> None:
        """A CTP task's required directions reach run.json, where the report's gate
        reads them; a task without one plans none."""
        assert () == _plan(tmp_path / "plain").require_compression
        tasks = tmp_path / "tasks"
        shutil.copytree(TASKS_DIR / TASK, tasks / TASK)
        manifest = tasks / TASK / "task.toml"
        manifest.write_text(manifest.read_text() + '\n[ctp]\nrequire_compression = ["output"]\n')
        _plan(tmp_path / "run", tasks=tasks)
        assert ("output",) == load_plan(tmp_path / "run").require_compression

    def test_offline_without_replay_scripts_is_refused(self, tmp_path: Path) -> None:
        tasks = tmp_path / "tasks"
        shutil.copytree(TASKS_DIR / TASK, tasks / TASK)
        (tasks / TASK / "replay" / "hpatch.json").unlink()
        with pytest.raises(HpbenchError, match=r"no replay scripts \(hpatch.json\)"):
            _plan(tmp_path / "run", tasks=tasks)

    def test_replay_scripts_are_test_equipment(self, tmp_path: Path) -> None:
        """Other replay scripts with a real provider are refused."""
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        env = {
            "PROVIDER": "https://responses.example/v1",
            "HPBENCH_API_KEY": "k",
            "HPATCH_ROUTER_IMAGE": "example/router:1",
        }
        with pytest.raises(HpbenchError, match="HPBENCH_REPLAY_DIR is test equipment"):
            write_plan(
                "paired", run_dir, env, lambda t: load_task(t, TASKS_DIR), tmp_path / "replay"
            )

    def test_a_real_provider_reaches_both_routers(self, tmp_path: Path) -> None:
        """With a real provider both routers' upstream is it and egress leaves the host."""
        env = {
            "PROVIDER": "https://responses.example/v1",
            "HPBENCH_API_KEY": "sk-secret-value",
            "HPATCH_ROUTER_IMAGE": "example/router:1",
        }
        _plan(tmp_path / "run", env)
        text = RunLayout(tmp_path / "run").plan_env.read_text()
        written = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
        assert [] == [p for p in written if b"sk-secret-value" in p.read_bytes()]
        assert "export HPBENCH_CONTROL_UPSTREAM=https://responses.example/v1" in text
        assert "export HPBENCH_HPATCH_UPSTREAM=https://responses.example/v1" in text
        assert "export HPBENCH_EGRESS_INTERNAL=false" in text
        assert not RunLayout(tmp_path / "run").replay.exists()

    @pytest.mark.parametrize("name", ["HPBENCH_API_KEY", "OPENAI_API_KEY"])
    def test_a_key_variable_is_each_agents_env_key(self, tmp_path: Path, name: str) -> None:
        """Codex reads the user's own variable (bench-attempt passes it by name)."""
        env = {
            "PROVIDER": "https://responses.example/v1",
            name: "sk-hpbench-fake-plan",
            "HPATCH_ROUTER_IMAGE": "example/router:1",
        }
        _plan(tmp_path / "run", env)
        layout = RunLayout(tmp_path / "run")
        for arm in ("control", "hpatch"):
            assert f'env_key = "{name}"' in layout.codex_config(arm).read_text()
        assert f"export BENCH_CREDENTIAL={name}" in layout.plan_env.read_text()
        written = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
        assert [] == [p for p in written if b"sk-hpbench-fake-plan" in p.read_bytes()]

    def test_an_auth_file_is_mounted_not_copied(self, tmp_path: Path) -> None:
        """CODEX_AUTH_FILE: the configs use the file's key, plan.env names its path and the
        CA bundle's, and nothing of the file's content is written."""
        auth = tmp_path / "auth.json"
        auth.write_text('{"OPENAI_API_KEY": "sk-hpbench-fake-file"}')
        bundle = tmp_path / "ca.pem"
        bundle.write_text("-----BEGIN CERTIFICATE-----\n")
        env = {
            "PROVIDER": "https://responses.example/v1",
            "CODEX_AUTH_FILE": str(auth),
            "PROVIDER_CA_BUNDLE": str(bundle),
            "HPATCH_ROUTER_IMAGE": "example/router:1",
        }
        _plan(tmp_path / "run", env)
        layout = RunLayout(tmp_path / "run")
        for arm in ("control", "hpatch"):
            config = layout.codex_config(arm).read_text()
            assert "requires_openai_auth = true" in config
            assert "env_key" not in config
        text = layout.plan_env.read_text()
        assert f"export HPBENCH_AUTH_FILE={auth}" in text
        assert f"export HPBENCH_PROVIDER_CA_BUNDLE={bundle}" in text
        written = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
        assert [] == [p for p in written if b"sk-hpbench-fake-file" in p.read_bytes()]


class TestPlanEnv:
    def test_sourced_values_are_the_plan(self, tmp_path: Path) -> None:
        """Sourcing plan.env exports each declared variable with the plan's value, and only
        those."""
        exported = planned_env(tmp_path / "run")
        assert [variable.name for variable in SHELL_VARIABLES] == list(exported)
        assert "control hpatch" == exported["BENCH_ARMS"]
        assert "true" == exported["BENCH_OFFLINE_DEMO"]
        assert str(RunLayout(tmp_path / "run").grader_spec) == exported["BENCH_GRADER_SPEC"]

    def test_hostile_paths_are_data(self, tmp_path: Path) -> None:
        """A task directory whose path holds quotes and a command substitution is a value
        when sourced, never run."""
        tasks = tmp_path / "it's $(touch pwned) `touch pwned2`"
        shutil.copytree(TASKS_DIR / TASK, tasks / TASK)
        exported = planned_env(tmp_path / "run", env={"HPBENCH_TASKS_DIR": str(tasks)})
        assert str((tasks / TASK / "prompt.md").resolve()) == exported["BENCH_PROMPT_FILE"]
        assert not list(REPO_ROOT.glob("pwned*"))
        assert not list(tmp_path.glob("pwned*"))

    def test_cli_refuses_without_writing(self, tmp_path: Path) -> None:
        """``hpbench run plan`` with a bad setting exits 1 naming it; nothing is written."""
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        done = run([str(HPBENCH), "run", "plan", "paired", str(run_dir)], {"EFFORT": "max"})
        assert 1 == done.returncode
        assert "EFFORT" in done.stderr
        assert [] == list(run_dir.iterdir())


class TestEverySettingReachesSomething:
    def test_each_variable_is_read_where_it_says(self) -> None:
        """Every plan.env variable appears, expanded, in each file named as its consumer."""
        unread = [
            f"{variable.name} in {consumer}"
            for variable in SHELL_VARIABLES
            for consumer in variable.consumers
            if "${" + variable.name not in (REPO_ROOT / consumer).read_text()
        ]
        assert [] == unread

    def test_each_setting_has_a_consumer(self) -> None:
        """Every setting feeds a plan.env variable or is read from run.json by a named
        module: a setting that reaches nothing fails here."""
        fed = {source for variable in SHELL_VARIABLES for source in variable.sources}
        unconsumed = [
            field.name
            for field in attrs.fields(Settings)
            if field.name not in fed and field.name not in RUN_JSON_CONSUMERS
        ]
        assert [] == unconsumed

    def test_run_json_readers_read_it(self) -> None:
        unread = [
            f"{name} in {module}"
            for name, modules in RUN_JSON_CONSUMERS.items()
            for module in modules
            if f'"{name}"' not in (REPO_ROOT / module).read_text()
        ]
        assert [] == unread

    def test_sources_are_plan_fields(self) -> None:
        names = {field.name for field in attrs.fields(RunPlan)}
        assert [] == [
            (variable.name, source)
            for variable in SHELL_VARIABLES
            for source in variable.sources
            if source not in names
        ]


class TestLoadPlan:
    @pytest.fixture
    def document(self, tmp_path: Path) -> dict[str, object]:
        _plan(tmp_path / "run")
        return json.loads(RunLayout(tmp_path / "run").run_json.read_text())  # type: ignore[no-any-return]

    def _refused(self, tmp_path: Path, document: dict[str, object]) -> list[tuple[str, str]]:
        RunLayout(tmp_path / "run").run_json.write_text(json.dumps(document))
        with pytest.raises(ContractError) as caught:
            load_plan(tmp_path / "run")
        return [(f.code, f.field or "") for f in caught.value.findings]

    def test_unknown_field(self, tmp_path: Path, document: dict[str, object]) -> None:
        found = self._refused(tmp_path, {**document, "router_image": "x"})
        assert [("plan.schema", "$")] == found

    def test_wrong_type_names_the_field(self, tmp_path: Path, document: dict[str, object]) -> None:
        assert [("plan.schema", "$.repetitions")] == self._refused(
            tmp_path, {**document, "repetitions": "2"}
        )

    def test_other_schema(self, tmp_path: Path, document: dict[str, object]) -> None:
        assert [("plan.schema", "$.schema")] == self._refused(
            tmp_path, {**document, "schema": "hpbench.run.v1"}
        )

    def test_missing_field(self, tmp_path: Path, document: dict[str, object]) -> None:
        del document["grader"]
        assert [("plan.schema", "$.grader")] == self._refused(tmp_path, document)


def test_run_json_fits_its_generated_schema(tmp_path: Path) -> None:
    """The written run.json validates against contrib/schemas/hpbench.run.v2.schema.json,
    and a document with an unknown field does not."""
    jsonschema = pytest.importorskip("jsonschema")
    _plan(tmp_path / "run")
    schema = json.loads(
        (REPO_ROOT / "contrib" / "schemas" / f"{PLAN_SCHEMA}.schema.json").read_text()
    )
    document = json.loads(RunLayout(tmp_path / "run").run_json.read_text())
    jsonschema.validate(document, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "router_image": "x"}, schema)


def test_grader_caps_reach_the_spec(tmp_path: Path) -> None:
    """GRADER_* settings are written into the grader spec, the only place bench-grade reads
    its caps."""
    _plan(tmp_path / "run", {"GRADER_MEMORY": "768M", "GRADER_CPUS": "0.5", "GRADER_PIDS": "256"})
    spec = RunLayout(tmp_path / "run").grader_spec
    assert ("768m", "0.5", "256") == tuple(
        (spec / name).read_text().strip() for name in ("memory", "cpus", "pids")
    )


def test_a_suite_tasks_run_id_names_the_suite(tmp_path: Path) -> None:
    """A task's run directory in a suite is named by its task alone; its id also names the
    suite, so two suites' runs of one task never share an id."""
    suite = tmp_path / "20261204T000000Z-paired-suite-abc123"
    (suite / "tasks").mkdir(parents=True)
    SuiteLayout(suite).mode.write_text("paired\n")
    plan = _plan(suite / "tasks" / TASK)
    assert f"{suite.name}.{TASK}" == plan.run_id
    # Without the suite's mode file, a directory called tasks is no suite.
    other = tmp_path / "elsewhere" / "tasks" / TASK
    other.parent.mkdir(parents=True)
    assert TASK == _plan(other).run_id
    assert "plain" == _plan(tmp_path / "plain").run_id
