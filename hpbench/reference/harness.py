"""Start the provider and the router as real processes, on loopback, for tests.

Both programs run through their ``python -m`` entry points, exactly as the
containers run them, on a free 127.0.0.1 port, and are stopped (SIGTERM, then
SIGKILL) when the ``with`` block ends. Their stderr goes to a log file next to
their other output so that a failing test can show it.

:func:`codex_exec` runs the real Codex CLI with a minimal environment: only
``PATH``, a private ``HOME`` and ``CODEX_HOME``, and the provider key variable,
so no credential or proxy setting of the calling shell reaches it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

LOOPBACK = "127.0.0.1"
READY_TIMEOUT = 20.0


class HostListener:
    """A TCP service on the host bound to 0.0.0.0, as a careless one would be: it answers
    every connection with a 200 and remembers who came (``peers``).

    Containment tests start one and prove that no agent reaches it.
    """

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("0.0.0.0", 0))  # noqa: S104 - the point: a host service on every address
        self.socket.listen(16)
        self.socket.settimeout(0.2)
        self.port: int = self.socket.getsockname()[1]
        self.peers: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, peer = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                self.peers.append(str(peer[0]))
                connection.sendall(b"HTTP/1.0 200 OK\r\n\r\nhost\n")

    def close(self) -> None:
        """Stop serving and close the socket."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.socket.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


@attrs.frozen
class Running:
    """A started server process and where it listens."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{LOOPBACK}:{self.port}"

    def get_json(self, path: str, timeout: float = 10.0) -> Any:
        """GET ``path`` and decode the JSON answer."""
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=timeout)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
        if response.status != 200:
            msg = f"GET {path}: {response.status} {body[:200]!r}"
            raise RuntimeError(msg)
        return json.loads(body)

    def log_text(self) -> str:
        """What the process wrote to stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""


def _wait_ready(running: Running, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            msg = f"exited with {running.process.returncode} before it was ready:\n"
            raise RuntimeError(msg + running.log_text())
        with contextlib.suppress(OSError, RuntimeError, http.client.HTTPException):
            running.get_json("/healthz", timeout=1.0)
            return
        time.sleep(0.05)
    msg = f"not ready after {timeout} s:\n{running.log_text()}"
    raise RuntimeError(msg)


@contextlib.contextmanager
def _running(module: str, arguments: Sequence[str], log: Path) -> Iterator[Running]:
    port = free_port()
    command = [sys.executable, "-m", module, "--listen", f"{LOOPBACK}:{port}", *arguments]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr)
    running = Running(process, port, log)
    try:
        _wait_ready(running, READY_TIMEOUT)
        yield running
    finally:
        stop(process)


@contextlib.contextmanager
def running_provider(
    scripts: Mapping[str, Path], workdir: Path, *, extra: Sequence[str] = ()
) -> Iterator[Running]:
    """The scripted provider serving ``scripts`` (name to file); records in ``workdir``."""
    arguments = [arg for name, path in scripts.items() for arg in ("--script", f"{name}={path}")]
    arguments += ["--record", str(workdir / "provider-records.jsonl"), *extra]
    with _running("hpbench.reference.provider", arguments, workdir / "provider.log") as running:
        yield running


@contextlib.contextmanager
def running_router(
    upstream: str,
    capture_dir: Path,
    *,
    mode: str = "passthrough",
    protocol: str = "native",
    log: Path,
    extra: Sequence[str] = (),
) -> Iterator[Running]:
    """The reference router relaying to ``upstream`` and capturing into ``capture_dir``."""
    arguments = [
        "--capture-output",
        str(capture_dir),
        "--mode",
        mode,
        "--protocol",
        protocol,
        "--upstream",
        upstream,
        *extra,
    ]
    with _running("hpbench.reference.router", arguments, log) as running:
        yield running


@attrs.frozen
class CodexRun:
    """One finished ``codex exec``."""

    returncode: int
    events: tuple[dict[str, Any], ...]
    stderr: str
    stdout: str = ""

    def save(self, path: Path) -> Path:
        """Write the JSONL stream as Codex printed it (for ``hpbench capture validate``)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.stdout, encoding="utf-8")
        return path

    @property
    def thread_id(self) -> str | None:
        """The ``thread.started`` id."""
        for event in self.events:
            if event.get("type") == "thread.started":
                return str(event["thread_id"])
        return None

    @property
    def usage(self) -> dict[str, Any] | None:
        """The last ``turn.completed`` usage (Codex reports the thread total)."""
        usage = None
        for event in self.events:
            if event.get("type") == "turn.completed":
                usage = event["usage"]
        return usage

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """Events of one type."""
        return [event for event in self.events if event.get("type") == kind]


def codex_exec(
    codex_home: Path,
    workdir: Path,
    prompt: str,
    *,
    resume: str | None = None,
    env_key: str = "HPBENCH_API_KEY",
    key_value: str = "offline-test-key",
    timeout: float = 120.0,
    codex: str | None = None,
    wrapper: Sequence[str] = (),
) -> CodexRun:
    """Run ``codex exec --json`` (or ``codex exec resume``) against the config in ``codex_home``.

    ``wrapper`` goes in front of the command (e.g. ``strace -f -o FILE``).
    """
    binary = codex or os.environ.get("HPBENCH_CODEX_BIN", "codex")
    command = [*wrapper, binary, "exec", "--json", "--skip-git-repo-check", "--strict-config"]
    command += ["-s", "danger-full-access"]
    command += ["resume", resume, prompt] if resume is not None else [prompt]
    home = codex_home.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        env_key: key_value,
        "LANG": "C.UTF-8",
    }
    completed = subprocess.run(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    events = []
    stdout = completed.stdout.decode("utf-8", errors="replace")
    for line in stdout.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                events.append(value)
    return CodexRun(
        completed.returncode,
        tuple(events),
        completed.stderr.decode("utf-8", errors="replace"),
        stdout,
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every JSON object line of a file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL after 5 s when it does not end."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
