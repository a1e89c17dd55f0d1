"""Suite-wide fixtures and the rule that CI never skips silently.

Tests that need Go, Docker or the Codex CLI carry a marker. Where the tool is
missing they skip on a developer's machine, but ``.ci/run`` sets
``HPBENCH_REQUIRE_<TOOL>=1`` and then a missing tool fails the test instead.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType

import pytest
import structlog

REPO_ROOT = Path(__file__).resolve().parents[1]
TASKS_DIR = REPO_ROOT / "tasks"
REPLAY_DIR = REPO_ROOT / "tests" / "data" / "replay"
LIBEXEC = REPO_ROOT / "benchmarks" / "libexec"
HPBENCH = REPO_ROOT / ".venv" / "bin" / "hpbench"
TASK = "kv-rangestream"
IMAGES_READY = "HPBENCH_TEST_IMAGES_READY"
# A test that would hang (a stalled stream, a Codex waiting for the network)
# fails after this long instead, through SIGALRM. Tests that drive Docker or a
# whole bench run take minutes by design and bound themselves.
TEST_TIMEOUT = 150


def run(
    command: Sequence[str], env: Mapping[str, str] | None = None, timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    """Run a command from the checkout with its environment plus ``env``; never raises on
    failure (the caller reads the status)."""
    return subprocess.run(
        list(command),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT), **(env or {})},
        cwd=REPO_ROOT,
    )


def build_images_once() -> None:
    """Build every image once per test process (later calls are free).

    Test processes that share the engine (pytest-xdist workers, another session on this
    machine) build one at a time, under a lock per image tag: two Compose builds of the
    same images at once race on their tags and on the prune of the old ones. The second
    build of an unchanged tree is all cache hits and takes seconds."""
    if os.environ.get(IMAGES_READY) == "1":
        return
    tag = os.environ.get("HPBENCH_IMAGE_TAG") or "local"
    lock = Path(tempfile.gettempdir()) / f"hpbench-images-{tag}.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = run([str(LIBEXEC / "bench-images")], timeout=1800)
    assert 0 == done.returncode, done.stderr
    os.environ[IMAGES_READY] = "1"


def _go_available() -> bool:
    return shutil.which("go") is not None


def _docker_available() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(
        ["docker", "compose", "version"], capture_output=True, check=False, timeout=30
    )
    info = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
    return probe.returncode == 0 and info.returncode == 0


def _codex_available() -> bool:
    return shutil.which(os.environ.get("HPBENCH_CODEX_BIN", "codex")) is not None


_PROBES = {"go": _go_available, "docker": _docker_available, "codex": _codex_available}
_RESULTS: dict[str, bool] = {}


def pytest_runtest_setup(item: pytest.Item) -> None:
    for name, probe in _PROBES.items():
        if item.get_closest_marker(name) is None:
            continue
        if name not in _RESULTS:
            _RESULTS[name] = probe()
        if _RESULTS[name]:
            continue
        reason = f"{name} is not available on this machine"
        if os.environ.get(f"HPBENCH_REQUIRE_{name.upper()}") == "1":
            pytest.fail(f"{reason}, and HPBENCH_REQUIRE_{name.upper()}=1 forbids skipping")
        pytest.skip(reason)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker (tests/run.sh: --dist loadfile, each module's tests in one
    worker, in order), the modules likely to take longest go first: end-to-end ones, then
    other Docker ones, then the rest, modules of more tests first within each; so no long
    module starts last while the other workers idle. tests/run.sh passes
    --no-loadscope-reorder, so the workers are given the modules in this order."""
    if not hasattr(config, "workerinput"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("e2e"):
            return 0
        return 1 if item.get_closest_marker("docker") else 2

    weights = {name: (min(map(rank, tests)), -len(tests)) for name, tests in modules.items()}
    ordered = sorted(modules, key=weights.__getitem__)  # stable: collection order otherwise
    items[:] = [item for name in ordered for item in modules[name]]


@pytest.fixture
def repo_root() -> Path:
    """The hpbench checkout."""
    return REPO_ROOT


@pytest.fixture
def tasks_dir() -> Path:
    """The bundled tasks."""
    return TASKS_DIR


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    """A writable copy of kv-rangestream under a tasks directory of its own."""
    target = tmp_path / "tasks" / "kv-rangestream"
    shutil.copytree(TASKS_DIR / "kv-rangestream", target)
    return target


def _expired(signum: int, frame: FrameType | None) -> None:
    pytest.fail(f"test exceeded {TEST_TIMEOUT} s", pytrace=False)


@pytest.fixture(autouse=True)
def time_limit(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail any test but Docker and end-to-end ones that runs longer than ``TEST_TIMEOUT``."""
    if request.node.get_closest_marker("docker") or request.node.get_closest_marker("e2e"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def structlog_config_per_test() -> Iterator[None]:
    """A test that runs the CLI in process configures structlog as the CLI does, caching
    each logger on first use; that configuration ends with the test. Otherwise a module's
    logger first used in a later test would be cached for the session, and a later
    ``capture_logs`` would see nothing of it, depending on test order."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def replay_dir() -> Path:
    """``tests/data/replay``: the scripted provider's test scripts."""
    return REPLAY_DIR


@pytest.fixture
def images() -> None:
    """The hpbench images, built once per test process."""
    build_images_once()


def task_snapshots(root: Path, task: str = TASK) -> dict[str, Path]:
    """History-free base and oracle snapshots of ``task`` under ``root`` (its history in
    ``root/repo``), made as bench-prepare makes them."""
    built = run([str(HPBENCH), "task", "build", task, "--out", str(root / "repo")])
    assert 0 == built.returncode, built.stderr
    out: dict[str, Path] = {}
    for name in ("base", "oracle"):
        revision = run([str(HPBENCH), "task", "field", task, f"source.{name}_revision"])
        made = run(
            [
                str(LIBEXEC / "bench-snapshot"),
                str(root / "repo"),
                revision.stdout.strip(),
                str(root / name),
            ]
        )
        assert 0 == made.returncode, made.stderr
        out[name] = root / name
    return out


@pytest.fixture(scope="session")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """History-free base and oracle snapshots of the bundled task (made once)."""
    return task_snapshots(tmp_path_factory.mktemp("snapshots"))


def grader_spec(directory: Path, task: str = TASK, env: Mapping[str, str] | None = None) -> Path:
    """The task's grader spec directory (``BENCH_GRADER_SPEC``), as the run plan writes it."""
    done = run([str(HPBENCH), "task", "grader-spec", task, "--out", str(directory)], env)
    assert 0 == done.returncode, done.stderr
    return directory


def planned_env(
    run_dir: Path, mode: str = "paired", env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``hpbench run plan MODE RUN_DIR`` (RUN_DIR made if missing); the variables its
    plan.env exports, as the bench scripts see them after sourcing it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    done = run([str(HPBENCH), "run", "plan", mode, str(run_dir)], env)
    assert 0 == done.returncode, done.stderr
    sourced = run(["bash", "-c", 'set -a; source "$1"; env -0', "plan", str(run_dir / "plan.env")])
    assert 0 == sourced.returncode, sourced.stderr
    exported = dict(item.split("=", 1) for item in sourced.stdout.split("\0") if "=" in item)
    names = [
        line.split()[1].split("=", 1)[0]
        for line in (run_dir / "plan.env").read_text().splitlines()
        if line.startswith("export ")
    ]
    return {name: exported[name] for name in names}
