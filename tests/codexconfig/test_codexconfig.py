"""The per-arm offline-safe Codex config: every setting, the guard, the CLI, and Codex itself."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpbench import codexconfig
from hpbench._cli.main import main
from hpbench.codexconfig import (
    CodexConfig,
    ReasoningEffort,
    check_config,
    render_config,
    write_config,
)
from hpbench.errors import ContractError
from hpbench.reference.harness import codex_exec, free_port, running_provider, running_router
from hpbench.rundir import Arm

ROUTER = "http://control-router:8080/v1"


def parsed(config: CodexConfig) -> dict[str, Any]:
    return tomllib.loads(render_config(config))


def fields_of(error: ContractError) -> set[str | None]:
    return {finding.field for finding in error.findings}


class TestSettings:
    def test_provider_points_at_the_router(self):
        """model_provider names the one custom provider, whose base_url is the router."""
        data = parsed(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        assert "hpbench" == data["model_provider"]
        assert ["hpbench"] == list(data["model_providers"])
        provider = data["model_providers"]["hpbench"]
        assert ROUTER == provider["base_url"]
        assert "responses" == provider["wire_api"]
        assert "HPBENCH_API_KEY" == provider["env_key"]
        assert "hpbench control router" == provider["name"]

    def test_everything_that_reaches_out_is_off(self):
        """Plugins, apps, goals, analytics, multi-agent, web search and update check: off."""
        data = parsed(CodexConfig(arm=Arm.HPATCH, router_url=ROUTER))
        assert {
            "plugins": False,
            "apps": False,
            "goals": False,
            "unbounded_connection_retries": False,
        } == data["features"]
        assert {"enabled": False} == data["agents"]
        assert {"enabled": False} == data["analytics"]
        assert "disabled" == data["web_search"]
        assert data["check_for_update_on_startup"] is False
        assert "mcp_servers" not in data

    def test_retries_are_bounded(self):
        """Both retry limits and the idle timeout are always written."""
        config = CodexConfig(
            arm=Arm.CONTROL,
            router_url=ROUTER,
            request_max_retries=0,
            stream_max_retries=1,
            stream_idle_timeout_ms=5_000,
        )
        provider = parsed(config)["model_providers"]["hpbench"]
        assert 0 == provider["request_max_retries"]
        assert 1 == provider["stream_max_retries"]
        assert 5_000 == provider["stream_idle_timeout_ms"]
        defaults = parsed(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        assert 2 == defaults["model_providers"]["hpbench"]["request_max_retries"]

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("request_max_retries", -1),
            ("request_max_retries", 11),
            ("stream_max_retries", 11),
            ("stream_idle_timeout_ms", 999),
            ("stream_idle_timeout_ms", 600_001),
        ],
    )
    def test_out_of_bounds_retries_are_refused(self, field: str, value: int):
        """Retry settings outside their bounds cannot be built."""
        with pytest.raises(ValueError, match=field):
            CodexConfig(arm=Arm.CONTROL, router_url=ROUTER, **{field: value})

    def test_model_effort_and_instructions(self):
        """Model, effort, model_instructions_file and model_catalog_json are written as given."""
        config = CodexConfig(
            arm=Arm.HPATCH,
            router_url=ROUTER,
            model="gpt-5.5",
            reasoning_effort=ReasoningEffort.HIGH,
            model_instructions_file="/run/instructions/treatment.md",
            model_catalog_json="/run/catalog.json",
        )
        data = parsed(config)
        assert "gpt-5.5" == data["model"]
        assert "high" == data["model_reasoning_effort"]
        assert "/run/instructions/treatment.md" == data["model_instructions_file"]
        assert "/run/catalog.json" == data["model_catalog_json"]
        bare = parsed(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER, reasoning_effort=None))
        assert "model_instructions_file" not in bare
        assert "model_reasoning_effort" not in bare

    def test_instructions_path_must_be_absolute(self):
        """A relative instructions path would resolve against Codex's cwd: refused."""
        with pytest.raises(ValueError, match="absolute"):
            CodexConfig(arm=Arm.CONTROL, router_url=ROUTER, model_instructions_file="base.md")

    def test_no_deprecated_or_forbidden_keys(self):
        """No experimental_instructions_file, no chatgpt_base_url, no features.multi_agent."""
        text = render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        for key in ("experimental_instructions_file", "chatgpt_base_url", "multi_agent"):
            assert key not in text


class TestNeverOpenAI:
    @pytest.mark.parametrize(
        "url",
        [
            "https://api.openai.com/v1",
            "https://chatgpt.com/backend-api/codex",
            "https://ab.chatgpt.com/v1",
            "http://API.OPENAI.COM./v1",
            "ftp://router/v1",
            "router:8080/v1",
            "http://user:pw@router/v1",
            "http:///v1",
        ],
    )
    def test_router_url_refused(self, url: str):
        """OpenAI hosts, non-http schemes, credentials in URLs: refused at construction."""
        with pytest.raises(ValueError, match="router_url"):
            CodexConfig(arm=Arm.CONTROL, router_url=url)

    @pytest.mark.parametrize("name", ["openai", "oss", "ollama", "lmstudio", "", "a b"])
    def test_builtin_or_bad_provider_ids_refused(self, name: str):
        """A built-in provider id would bring its own base URL: refused."""
        with pytest.raises(ValueError, match="provider_id"):
            CodexConfig(arm=Arm.CONTROL, router_url=ROUTER, provider_id=name)


class TestModelProviderCannotBeMissing:
    def test_no_router_url_no_config(self):
        """A config cannot be built without the router URL."""
        with pytest.raises(TypeError):
            CodexConfig(arm=Arm.CONTROL)  # type: ignore[call-arg]

    def test_check_refuses_text_without_model_provider(self):
        """check_config names $.model_provider when it is missing."""
        text = render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        broken = "\n".join(line for line in text.splitlines() if "model_provider =" not in line)
        with pytest.raises(ContractError) as caught:
            check_config(broken)
        assert "$.model_provider" in fields_of(caught.value)

    def test_render_checks_its_own_output(self, monkeypatch: pytest.MonkeyPatch):
        """Even if the tables lost model_provider, render_config would refuse to return them."""
        original = codexconfig.config_tables

        def losing(config: CodexConfig) -> dict[str, Any]:
            tables = original(config)
            del tables["model_provider"]
            return tables

        monkeypatch.setattr(codexconfig, "config_tables", losing)
        with pytest.raises(ContractError, match="offline-safe"):
            render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))

    @settings(max_examples=60, deadline=None)
    @given(
        config=st.builds(
            CodexConfig,
            arm=st.sampled_from(list(Arm)),
            router_url=st.builds(
                "http://{}:{}/v1".format,
                st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,8})?", fullmatch=True),
                st.integers(1, 65535),
            ),
            model=st.text(min_size=1, max_size=30),
            reasoning_effort=st.one_of(st.none(), st.sampled_from(list(ReasoningEffort))),
            model_instructions_file=st.one_of(
                st.none(), st.text(max_size=30).map(lambda t: "/x/" + t)
            ),
            request_max_retries=st.integers(0, 10),
            stream_max_retries=st.integers(0, 10),
        )
    )
    def test_every_buildable_config_renders_safe(self, config: CodexConfig):
        """Any config that can be built renders to TOML naming a defined provider."""
        data = tomllib.loads(render_config(config))
        assert data["model_provider"] in data["model_providers"]
        assert config.model == data["model"]
        assert config.model_instructions_file == data.get("model_instructions_file")


class TestCheck:
    @pytest.mark.parametrize(
        ("edit", "field"),
        [
            (("plugins = false", "plugins = true"), "$.features.plugins"),
            (("apps = false", "apps = true"), "$.features.apps"),
            (("goals = false", "goals = true"), "$.features.goals"),
            (
                ("unbounded_connection_retries = false", "unbounded_connection_retries = true"),
                "$.features.unbounded_connection_retries",
            ),
            (('web_search = "disabled"', 'web_search = "live"'), "$.web_search"),
            (
                ("check_for_update_on_startup = false", "check_for_update_on_startup = true"),
                "$.check_for_update_on_startup",
            ),
            (("request_max_retries = 2\n", ""), "$.model_providers.hpbench.request_max_retries"),
            (
                ('wire_api = "responses"', 'wire_api = "chat"'),
                "$.model_providers.hpbench.wire_api",
            ),
            (
                ("http://control-router:8080/v1", "https://api.openai.com/v1"),
                "$.model_providers.hpbench.base_url",
            ),
            (('model_provider = "hpbench"', 'model_provider = "openai"'), "$.model_provider"),
            (
                ('exclude = ["*KEY*", "*SECRET*", "*TOKEN*"]', "exclude = []"),
                "$.shell_environment_policy.exclude",
            ),
        ],
    )
    def test_each_deviation_is_named(self, edit: tuple[str, str], field: str):
        """Turning any safety setting back is a finding at that field."""
        text = render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        assert edit[0] in text
        with pytest.raises(ContractError) as caught:
            check_config(text.replace(edit[0], edit[1]))
        assert field in fields_of(caught.value)

    def test_extra_provider_and_mcp_server_refused(self):
        """A second provider or any MCP server is refused."""
        text = render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        text += '\n[model_providers.openai]\nname = "x"\n\n[mcp_servers.echo]\ncommand = "echo"\n'
        with pytest.raises(ContractError) as caught:
            check_config(text)
        assert {"$.model_providers.openai", "$.mcp_servers"} <= fields_of(caught.value)

    def test_an_auth_file_config_sends_the_files_key_and_names_no_env_key(self):
        """CODEX_AUTH_FILE: requires_openai_auth instead of env_key, still the router only."""
        data = parsed(CodexConfig(arm=Arm.HPATCH, router_url=ROUTER, auth_file=True))
        provider = data["model_providers"]["hpbench"]
        assert provider["requires_openai_auth"] is True
        assert "env_key" not in provider
        assert ROUTER == provider["base_url"]

    @pytest.mark.parametrize(
        "edit",
        [
            ('env_key = "HPBENCH_API_KEY"\n', ""),
            (
                'env_key = "HPBENCH_API_KEY"\n',
                'env_key = "HPBENCH_API_KEY"\nrequires_openai_auth = true\n',
            ),
            ('env_key = "HPBENCH_API_KEY"\n', "requires_openai_auth = false\n"),
        ],
        ids=["neither", "both", "auth-false"],
    )
    def test_exactly_one_credential_source(self, edit: tuple[str, str]):
        """No key source, or two of them, is refused at env_key."""
        text = render_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER))
        assert edit[0] in text
        with pytest.raises(ContractError) as caught:
            check_config(text.replace(edit[0], edit[1]))
        assert "$.model_providers.hpbench.env_key" in fields_of(caught.value)

    def test_strings_are_escaped(self):
        """Quotes, backslashes and control characters survive the TOML round trip."""
        model = 'we"ird\\model\n\t\x7f\x01é'
        data = parsed(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER, model=model))
        assert model == data["model"]


class TestCommand:
    def test_render_to_stdout(self, capsys: pytest.CaptureFixture[str]):
        """Without --out the TOML goes to stdout."""
        code = main(["codex-config", "render", "--arm", "control", "--router-url", ROUTER])
        assert 0 == code
        assert (
            ROUTER
            == tomllib.loads(capsys.readouterr().out)["model_providers"]["hpbench"]["base_url"]
        )

    def test_render_to_file_is_private(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
        """--out writes mode 0600 and --json reports its digest."""
        out = tmp_path / "home" / "config.toml"
        argv = ["codex-config", "render", "--arm", "hpatch", "--router-url", ROUTER]
        assert 0 == main([*argv, "--out", str(out), "--json"])
        report = json.loads(capsys.readouterr().out)
        assert hashlib.sha256(out.read_bytes()).hexdigest() == report["sha256"]
        assert 0o600 == out.stat().st_mode & 0o777

    def test_bad_url_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]):
        """An OpenAI URL exits 2 and says why."""
        argv = ["codex-config", "render", "--arm", "control"]
        assert 2 == main([*argv, "--router-url", "https://api.openai.com/v1"])
        assert "OpenAI host" in capsys.readouterr().err

    def test_check(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
        """check exits 0 for a generated file and 1 with findings for an altered one."""
        path = tmp_path / "config.toml"
        write_config(CodexConfig(arm=Arm.CONTROL, router_url=ROUTER), path)
        assert 0 == main(["codex-config", "check", str(path)])
        capsys.readouterr()
        path.write_text(path.read_text().replace("apps = false", "apps = true"))
        assert 1 == main(["codex-config", "check", str(path), "--json"])
        report = json.loads(capsys.readouterr().out)
        assert ["$.features.apps"] == [f["field"] for f in report["findings"]]


@pytest.mark.codex
class TestWithCodex:
    def test_instructions_file_reaches_the_model(self, tmp_path: Path, replay_dir: Path):
        """Codex accepts the config under --strict-config and sends the instructions file."""
        instructions = tmp_path / "base.md"
        instructions.write_text("You are the benchmark agent. Use the workspace only.\n")
        script = {"control": replay_dir / "edit-and-check.json"}
        with (
            running_provider(script, tmp_path) as prov,
            running_router(
                f"{prov.url}/control/v1", tmp_path / "capture", log=tmp_path / "router.log"
            ) as router,
        ):
            home = tmp_path / "codex-home"
            config = CodexConfig(
                arm=Arm.CONTROL,
                router_url=f"{router.url}/v1",
                model="gpt-5.5",
                model_instructions_file=str(instructions),
                request_max_retries=0,
                stream_max_retries=0,
                stream_idle_timeout_ms=10_000,
            )
            write_config(config, home / "config.toml")
            workspace = tmp_path / "ws"
            workspace.mkdir()
            (workspace / "hello.txt").write_text("hello\n")
            run = codex_exec(home, workspace, "Greet the world.", timeout=90)
            records = prov.get_json("/requests")
        assert 0 == run.returncode, run.stderr[-2000:]
        assert "warning" not in run.stderr.lower().replace("warning: proceeding", "")
        expected = hashlib.sha256(b"You are the benchmark agent. Use the workspace only.")
        assert expected.hexdigest() == records[0]["request"]["first_developer_sha256"]

    def test_commands_do_not_inherit_the_key(self, tmp_path: Path):
        """Codex passes its environment to the commands it runs: the generated config keeps
        the key (and anything named like a secret) out of them, so `env` prints none."""
        script = tmp_path / "env.json"
        command = "env; echo END"
        script.write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "name": "env",
                    "steps": [
                        {"output": [{"type": "exec_command", "cmd": command}]},
                        {"output": [{"type": "message", "text": "done"}]},
                    ],
                }
            )
        )
        key = "sk-hpbench-fake-shell-env"
        with running_provider({"default": script}, tmp_path) as prov:
            home = tmp_path / "codex-home"
            write_config(
                CodexConfig(arm=Arm.CONTROL, router_url=f"{prov.url}/v1", request_max_retries=0),
                home / "config.toml",
            )
            workspace = tmp_path / "ws"
            workspace.mkdir()
            run = codex_exec(home, workspace, "Show the environment.", key_value=key, timeout=90)
        assert 0 == run.returncode, run.stderr[-2000:]
        outputs = [
            event["item"]["aggregated_output"]
            for event in map(json.loads, run.stdout.splitlines())
            if event.get("type") == "item.completed"
            and event["item"].get("type") == "command_execution"
        ]
        assert 1 == len(outputs) and "END" in outputs[0] and "CODEX_HOME=" in outputs[0]
        assert "HPBENCH_API_KEY" not in outputs[0]
        assert key not in run.stdout

    def test_codex_connects_to_loopback_only(self, tmp_path: Path, replay_dir: Path):
        """Under strace, a whole exec with the generated config connects to 127.0.0.1 only:
        no plugin sync, no analytics, no update check, no DNS lookup."""
        strace = shutil.which("strace")
        if strace is None:
            pytest.skip("strace is not installed (apt-get install strace)")
        script = {"control": replay_dir / "edit-and-check.json"}
        trace = tmp_path / "strace.txt"
        with (
            running_provider(script, tmp_path) as prov,
            running_router(
                f"{prov.url}/control/v1", tmp_path / "capture", log=tmp_path / "router.log"
            ) as router,
        ):
            home = tmp_path / "codex-home"
            config = CodexConfig(
                arm=Arm.CONTROL,
                router_url=f"{router.url}/v1",
                request_max_retries=0,
                stream_max_retries=0,
                stream_idle_timeout_ms=10_000,
            )
            write_config(config, home / "config.toml")
            workspace = tmp_path / "ws"
            workspace.mkdir()
            (workspace / "hello.txt").write_text("hello\n")
            run = codex_exec(
                home,
                workspace,
                "Greet the world.",
                timeout=90,
                wrapper=[strace, "-f", "-e", "trace=connect", "-o", str(trace)],
            )
        assert 0 == run.returncode, run.stderr[-2000:]
        text = trace.read_text()
        inet = [line for line in text.splitlines() if "connect(" in line and "AF_INET" in line]
        assert inet
        peers = set(re.findall(r'inet_(?:addr|pton)\((?:AF_INET6?, )?"([^"]+)"', "\n".join(inet)))
        assert {"127.0.0.1"} == peers
        assert not [line for line in inet if "htons(53)" in line]

    def test_unreachable_router_fails_fast(self, tmp_path: Path):
        """With unbounded connection retries off, a dead router fails the exec, no hang."""
        home = tmp_path / "codex-home"
        config = CodexConfig(
            arm=Arm.CONTROL,
            router_url=f"http://127.0.0.1:{free_port()}/v1",
            model="gpt-5.5",
            request_max_retries=0,
            stream_max_retries=0,
            stream_idle_timeout_ms=5_000,
        )
        write_config(config, home / "config.toml")
        workspace = tmp_path / "ws"
        workspace.mkdir()
        started = time.monotonic()
        run = codex_exec(home, workspace, "Anything.", timeout=60)
        assert 0 != run.returncode
        assert time.monotonic() - started < 30
        assert run.of_type("turn.failed")
