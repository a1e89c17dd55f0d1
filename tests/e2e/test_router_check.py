"""benchmarks/bench.sh router-check: the reference router passes every item, and each
deliberately broken router fails the item that names its fault (and only that one).

The broken routers are the reference router's image with another entrypoint: a small
Python wrapper that changes one thing and then runs the reference router's ``main``.
They are built once per module.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import build_images_once
from .conftest import BENCH, bench_env

pytestmark = [pytest.mark.docker, pytest.mark.e2e]

ITEMS = (
    "identity",
    "listener",
    "relay",
    "metrics",
    "capture",
    "turn-state",
    "credentials",
    "shutdown",
)
CHECK_TIMEOUT = 300

_CAPTURE_DIR = """\
def capture_dir():
    args = sys.argv[1:]
    return Path(args[args.index("--capture-output") + 1])
"""

# Each wrapper: the fault, then the reference router exactly as its image runs it.
BROKEN = {
    # Relays no x-codex-turn-state in either direction.
    "drop-turn-state": """\
import sys
from hpbench.reference import _http, router

_end_to_end = _http.Headers.end_to_end


def end_to_end(self, *, drop=()):
    return _end_to_end(self, drop=(*drop, "x-codex-turn-state"))


_http.Headers.end_to_end = end_to_end
sys.exit(router.main())
""",
    # A record file beside the router's own whose record breaks schema 6.
    "invalid-capture": f"""\
import sys
from pathlib import Path
from hpbench.reference import router

{_CAPTURE_DIR}
if "--version" not in sys.argv:
    capture_dir().mkdir(parents=True, exist_ok=True)
    (capture_dir() / "zz-extra.jsonl").write_text('{{"kind":"client","schema_version":5}}\\n')
sys.exit(router.main())
""",
    # A second listener (a debug port) next to --listen's.
    "second-listener": """\
import socket
import sys
from hpbench.reference import router

extra = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
extra.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
extra.bind(("0.0.0.0", 9090))
extra.listen(4)
sys.exit(router.main())
""",
    # Writes each request's Authorization header into a debug file of the capture.
    "leak-authorization": f"""\
import sys
from pathlib import Path
from hpbench.reference import _relay, router

{_CAPTURE_DIR}
_handle = _relay.Router.handle


async def handle(self, request, reader, writer):
    value = request.headers.get("authorization")
    if value is not None:
        with (capture_dir() / "debug.log").open("a") as log:
            log.write(f"authorization: {{value}}\\n")
    return await _handle(self, request, reader, writer)


_relay.Router.handle = handle
sys.exit(router.main())
""",
}

DOCKERFILE = """\
FROM hpbench-router:{tag}
COPY broken.py /opt/broken/router.py
ENTRYPOINT ["python3", "/opt/broken/router.py"]
"""


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """This tree's images, the reference router's, and every broken router's (built once)."""
    build_images_once()
    tag = os.environ.get("HPBENCH_IMAGE_TAG", "local")
    made = {"reference": f"hpbench-router:{tag}"}
    try:
        for name, wrapper in BROKEN.items():
            context = tmp_path_factory.mktemp(name)
            (context / "broken.py").write_text(wrapper)
            (context / "Dockerfile").write_text(DOCKERFILE.format(tag=tag))
            image = f"hpbench-e2e/router-{name}:{tag}"
            built = subprocess.run(
                ["docker", "build", "--quiet", "--tag", image, str(context)],
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            assert 0 == built.returncode, built.stderr
            made[name] = image
        yield made
    finally:
        for name, image in made.items():
            if name != "reference":
                subprocess.run(
                    ["docker", "image", "rm", "--force", image], capture_output=True, check=False
                )


def router_check(
    runs_dir: Path, image: str | None
) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[str, str]]]:
    """Run the check; its result and each item's (status, rest of the line)."""
    env = bench_env(runs_dir)
    env.pop("ROUTER_IMAGE", None)
    if image is not None:
        env["ROUTER_IMAGE"] = image
    result = subprocess.run(
        [str(BENCH), "router-check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=CHECK_TIMEOUT,
        check=False,
    )
    verdicts = {}
    for line in result.stdout.splitlines():
        match = re.match(r"^(ok|FAIL)\s+(\S+)\s+(.*)$", line)
        if match:
            verdicts[match.group(2)] = (match.group(1), match.group(3))
    return result, verdicts


def leftovers() -> list[str]:
    """Containers, networks and volumes a check made that still exist."""
    label = "label=org.hpbench.role=router-check"
    left = []
    for kind in (["ps", "-aq"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
        out = subprocess.run(
            ["docker", *kind, "--filter", label], capture_output=True, text=True, check=True
        ).stdout.split()
        left += [f"{kind[0]} {item}" for item in out]
    return left


@pytest.mark.parametrize(
    ("router", "failing", "reason"),
    [
        ("reference", set(), ""),
        ("drop-turn-state", {"turn-state"}, "x-codex-turn-state missing"),
        ("invalid-capture", {"capture"}, "zz-extra.jsonl"),
        ("second-listener", {"listener"}, "0.0.0.0:9090"),
        ("leak-authorization", {"credentials"}, "debug.log"),
    ],
)
def test_router_check_names_the_fault(
    images: dict[str, str], runs_dir: Path, router: str, failing: set[str], reason: str
) -> None:
    """Every item gets one line; exactly the faulty item FAILs, and its line says why."""
    result, verdicts = router_check(runs_dir, images[router])
    assert set(ITEMS) == set(verdicts), result.stdout + result.stderr[-3000:]
    failed = {item for item, (status, _) in verdicts.items() if status == "FAIL"}
    assert failing == failed, result.stdout
    assert (0 if not failing else 1) == result.returncode, result.stderr[-3000:]
    for item in failing:
        assert reason in verdicts[item][1], verdicts[item]
    if not failing:
        assert "hpbench-reference-router" in verdicts["identity"][1]
    assert [] == leftovers()


def test_an_unset_image_is_refused(runs_dir: Path) -> None:
    """Without ROUTER_IMAGE the check refuses by name and makes nothing."""
    before = set(runs_dir.iterdir())
    result, verdicts = router_check(runs_dir, None)
    assert 1 == result.returncode
    assert "ROUTER_IMAGE is not set" in result.stderr
    assert {} == verdicts
    assert before == set(runs_dir.iterdir())


def test_an_absent_image_is_refused(runs_dir: Path) -> None:
    """An image the engine lacks is refused by name (hpbench never pulls)."""
    before = set(runs_dir.iterdir())
    result, _ = router_check(runs_dir, "hpbench-e2e/no-such-router:never")
    assert 1 == result.returncode
    assert "ROUTER_IMAGE=hpbench-e2e/no-such-router:never: no such image" in result.stderr
    assert before == set(runs_dir.iterdir())
