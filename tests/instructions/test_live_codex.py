"""The real, pinned Codex CLI: its stock text fits the pins, and each arm gets its file.

A small recording server on 127.0.0.1 stands in for the model: it keeps every
request body and answers each with one short assistant message.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hpbench.codexconfig import CodexConfig, write_config
from hpbench.instructions import (
    default_pins_path,
    delivered_matches,
    derive,
    extract_stock,
    first_developer_text,
    load_pins,
    write_instructions,
)
from hpbench.instructions.stock import bundled_stock
from hpbench.rundir import Arm

pytestmark = pytest.mark.codex

CODEX_VERSION = load_pins(default_pins_path()).pins.codex_version
MODEL = "gpt-6-astra"


class _Recorder(BaseHTTPRequestHandler):
    bodies: list[bytes]

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.server.bodies.append(self.rfile.read(length))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        item = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        }
        for event in (
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": "resp_1"}},
        ):
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")

    def log_message(self, *_: object) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def run_codex(
    server: ThreadingHTTPServer, home: Path, instructions: Path | None
) -> dict[str, object]:
    """One ``codex exec`` against the recorder; returns the first request body."""
    home.mkdir(parents=True)
    workspace = home / "ws"
    workspace.mkdir()
    config = CodexConfig(
        arm=Arm.CONTROL,
        router_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
        model=MODEL,
        model_instructions_file=str(instructions) if instructions else None,
        request_max_retries=0,
        stream_max_retries=0,
        stream_idle_timeout_ms=20_000,
    )
    write_config(config, home / "config.toml")
    env = {**os.environ, "CODEX_HOME": str(home), config.env_key: "offline"}
    before = len(server.bodies)  # type: ignore[attr-defined]
    result = subprocess.run(
        [
            os.environ.get("HPBENCH_CODEX_BIN", "codex"),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--strict-config",
            "--ephemeral",
            "-s",
            "danger-full-access",
            "say ok",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 0 == result.returncode, result.stderr[-2000:]
    bodies = server.bodies[before:]  # type: ignore[attr-defined]
    assert bodies, "codex sent no request"
    return json.loads(bodies[0])  # type: ignore[no-any-return]


class TestPinnedCli:
    def test_version_is_pinned(self) -> None:
        """The CLI on PATH is the pinned version."""
        result = subprocess.run(
            [os.environ.get("HPBENCH_CODEX_BIN", "codex"), "--version"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert f"codex-cli {CODEX_VERSION}" == result.stdout.strip()

    def test_stock_capture_derivation_and_delivery(
        self, recorder: ThreadingHTTPServer, tmp_path: Path
    ) -> None:
        """Capture the real stock text, derive both arms with the repository pins, and prove
        from the recorded requests that each arm's Codex sent exactly its file."""
        request = run_codex(recorder, tmp_path / "stock-home", None)
        (tmp_path / "request.json").write_text(json.dumps(request))
        stock = extract_stock(tmp_path / "request.json", CODEX_VERSION, MODEL)
        catalog = subprocess.run(
            [os.environ.get("HPBENCH_CODEX_BIN", "codex"), "debug", "models", "--bundled"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "CODEX_HOME": str(tmp_path / "stock-home")},
        ).stdout
        (tmp_path / "models.json").write_text(catalog)
        bundled = bundled_stock(tmp_path / "models.json", CODEX_VERSION, MODEL)
        assert bundled.text == stock.text  # the embedded text is exactly what the CLI sends

        pin_set = load_pins(default_pins_path())
        derived = derive(stock, pin_set)
        lines = derived.diff.splitlines()
        removed = [
            line[1:] for line in lines if line.startswith("-") and not line.startswith("---")
        ]
        added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
        assert [
            pin_set.pins.remove_rg_preference_line,
            pin_set.pins.remove_exec_command_line,
        ] == removed
        guidance = [*pin_set.guidance_text.strip("\n").splitlines(), ""]
        assert sorted(guidance) == sorted(added)
        out = tmp_path / "instructions"
        write_instructions(derived, pin_set, out)

        for arm in ("control", "treatment"):
            sent_request = run_codex(recorder, tmp_path / f"{arm}-home", out / f"{arm}.md")
            sent = first_developer_text(sent_request, source=arm)
            assert delivered_matches(sent, out / f"{arm}.md"), arm
        assert not delivered_matches(sent, out / "control.md")
