"""A real hpbench Compose topology per test, with faults injected on purpose.

Images are built once per test session (``bench-images``; layer-cached).
Each ``topology`` gets its own Compose project name, its own workspaces, module
cache and Codex configs under ``tmp_path``, and is always taken down with
``bench-down``, which also proves nothing of the project remains.
``stock_topology`` is one unmodified topology shared by a module's tests, for
tests that only look at it or change what they restore.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ..conftest import HPBENCH, LIBEXEC, REPO_ROOT, build_images_once, run

COMPOSE_FILE = REPO_ROOT / "compose.yaml"


class Topology:
    """One Compose project of the hpbench topology, brought up from ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = f"hpbench-test-{uuid.uuid4().hex[:10]}"
        self.overrides: list[Path] = []
        self.env: dict[str, str] = {}
        for arm in ("control", "hpatch"):
            workspace = root / "workspaces" / arm
            workspace.mkdir(parents=True)
            (workspace / "go.mod").write_text("module example.test/ws\n\ngo 1.19\n")
            (workspace / "main.go").write_text("package main\n\nfunc main() {}\n")
            workspace.chmod(0o777)  # the agent user writes here
            config = root / "codex" / arm / "config.toml"
            config.parent.mkdir(parents=True)
            rendered = run(
                [
                    str(HPBENCH),
                    "codex-config",
                    "render",
                    "--arm",
                    arm,
                    "--router-url",
                    f"http://{arm}-router:8080/v1",
                    "--out",
                    str(config),
                ]
            )
            assert 0 == rendered.returncode, rendered.stderr
            config.chmod(0o644)
            self.env[f"HPBENCH_{arm.upper()}_WORKSPACE"] = str(workspace)
            self.env[f"HPBENCH_{arm.upper()}_CODEX_CONFIG"] = str(config)
            self.env[f"HPBENCH_{arm.upper()}_INSTRUCTIONS"] = "/dev/null"
        # compose.yaml holds every mode's arms; this is a paired topology, and the other
        # arms' mounts only need a value for the file to load.
        for arm in ("native", "ctp", "mentor"):
            for kind in ("WORKSPACE", "CODEX_CONFIG", "INSTRUCTIONS"):
                self.env[f"HPBENCH_{arm.upper()}_{kind}"] = "/nonexistent"
        cache = root / "gomodcache"
        cache.mkdir()
        self.env["HPBENCH_GOMODCACHE"] = str(cache)
        self.env["HPBENCH_PROVIDER_SCRIPTS"] = str(root / "scripts")

    def workspace(self, arm: str) -> Path:
        """The arm's workspace on the host (mounted at /workspace)."""
        return Path(self.env[f"HPBENCH_{arm.upper()}_WORKSPACE"])

    def config(self, arm: str) -> Path:
        """The arm's Codex config on the host (mounted read-only)."""
        return Path(self.env[f"HPBENCH_{arm.upper()}_CODEX_CONFIG"])

    def override(self, name: str, text: str) -> None:
        """Add a Compose override file (a fault to inject)."""
        path = self.root / name
        path.write_text(text)
        self.overrides.append(path)

    def _env(self) -> dict[str, str]:
        return {**self.env, "BENCH_COMPOSE_OVERRIDES": ":".join(map(str, self.overrides))}

    def compose(self, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
        """``docker compose -p PROJECT -f compose.yaml [-f override…] ARGS``."""
        files = [a for o in self.overrides for a in ("-f", str(o))]
        command = ["docker", "compose", "-p", self.project, "-f", str(COMPOSE_FILE), *files]
        return run([*command, *args], env=self.env, timeout=timeout)

    def up(self, *profiles: str, ready: bool = True) -> None:
        """Bring the project up and (unless ``ready`` is False) wait until every service
        listens (bench-ready)."""
        flags = [a for p in profiles for a in ("--profile", p)]
        services = [
            f"{arm}-{role}" for arm in ("control", "hpatch") for role in ("router", "agent")
        ]
        services += ["sentinel", *(["provider"] if "offline" in profiles else [])]
        done = self.compose(*flags, "up", "--detach", "--wait", "--wait-timeout", "120", *services)
        assert 0 == done.returncode, done.stderr
        if ready:
            waited = self.ready()
            assert 0 == waited.returncode, waited.stderr

    def ready(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``bench-ready PROJECT [SECONDS]``."""
        return run([str(LIBEXEC / "bench-ready"), self.project, *args], env=self._env())

    def hpbench(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The hpbench CLI of the checkout."""
        return run([str(HPBENCH), *args])

    def isolation(self, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``bench-isolation PROJECT``, with ``env`` added to the environment."""
        return run(
            [str(LIBEXEC / "bench-isolation"), self.project], env={**self._env(), **(env or {})}
        )

    def down(self) -> subprocess.CompletedProcess[str]:
        """``bench-down PROJECT``: down with volumes, and proof that nothing remains."""
        return run([str(LIBEXEC / "bench-down"), self.project], env=self._env())

    def firewall(
        self, command: str, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``bench-firewall COMMAND PROJECT``."""
        return run([str(LIBEXEC / "bench-firewall"), command, self.project], env=env)

    def container(self, service: str) -> str:
        """The id of the service's container."""
        done = self.compose("ps", "--all", "--quiet", service)
        assert 0 == done.returncode, done.stderr
        return done.stdout.strip()


@pytest.fixture(scope="module")
def stock_topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    """One stock topology, up and ready, for all of a module's tests; taken down at the end."""
    build_images_once()
    topo = Topology(tmp_path_factory.mktemp("stock"))
    try:
        topo.up()
        yield topo
    finally:
        done = topo.down()
        assert 0 == done.returncode, done.stderr


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[Topology]:
    """A topology that is always taken down, whatever the test did."""
    build_images_once()
    topo = Topology(tmp_path)
    try:
        yield topo
    finally:
        done = topo.down()
        assert 0 == done.returncode, done.stderr
