"""in-container/proofs on the host, and bench-isolation's judging, without Docker.

The proofs script is plain bash and /dev/tcp, so its probes, verdict lines and
HTTP client run here against a loopback server. bench-isolation runs from a
copy of the checkout's scripts whose engine (``docker``), firewall and
planner (``hpbench topology proofs``) are stand-ins that answer what each test
says, so each hostile answer is shown refused by name.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ..conftest import LIBEXEC, run

PROOFS = LIBEXEC / "in-container" / "proofs"


class _Handler(BaseHTTPRequestHandler):
    """/api/metrics: a body longer than its Content-Length (only the length counts);
    /close: a body ended by the close; /healthz: ok; anything else: 404."""

    def do_GET(self) -> None:
        if self.path == "/api/metrics":
            self._answer(200, b'{"v": 4}' + b"TRAILING", length=len(b'{"v": 4}'))
        elif self.path == "/close":
            self._answer(200, b"to the close\n", length=None)
        elif self.path == "/healthz":
            self._answer(200, b"ok\n", length=3)
        else:
            self._answer(404, b"missing\n", length=8)

    def _answer(self, status: int, body: bytes, length: int | None) -> None:
        self.send_response(status)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        with contextlib.suppress(ConnectionError):  # a probe hangs up after the status line
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read answers, not logs."""


@contextmanager
def serving() -> Iterator[int]:
    """A loopback HTTP server for the block; yields its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = server.server_address[1]
    server.server_close()
    return port


def proofs(*args: str, stdin: str = "") -> tuple[int, str, str]:
    """``bash -c "$(<proofs)" proofs ARGS`` with ``stdin``: its status, stdout and stderr."""
    done = subprocess.run(
        ["bash", "-c", PROOFS.read_text(), "proofs", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


class TestGet:
    def test_body_by_content_length(self) -> None:
        """GET prints the body, Content-Length bytes of it."""
        with serving() as port:
            assert (0, '{"v": 4}', "") == proofs(str(port), "get", "127.0.0.1", "/api/metrics")

    def test_body_to_the_close(self) -> None:
        """Without a length, the body is whatever comes before the close."""
        with serving() as port:
            status, body, _ = proofs(str(port), "get", "127.0.0.1", "/close")
        assert (0, "to the close\n") == (status, body)

    def test_not_200_is_refused_with_its_status_line(self) -> None:
        """Any other status: nothing on stdout, the status line on stderr, status 1."""
        with serving() as port:
            status, body, errors = proofs(str(port), "get", "127.0.0.1", "/nope")
        assert (1, "") == (status, body)
        assert "HTTP/1.0 404 Not Found" in errors

    def test_no_connection(self) -> None:
        """Nothing listening: status 1."""
        assert 1 == proofs(str(closed_port()), "get", "127.0.0.1", "/api/metrics")[0]


class TestRun:
    def test_a_verdict_line_per_proof(self) -> None:
        """reach and block over the loopback: each proof gets ok or FAIL with a reason."""
        closed = closed_port()
        with serving() as port:
            asked = (
                f"reach\tserved\t127.0.0.1\t{port}\t/healthz\n"
                f"reach\tnot-200\t127.0.0.1\t{port}\t/nope\n"
                f"block\tleaks\t127.0.0.1\t{port}\t/\n"
                f"block\tclosed\t127.0.0.1\t{closed}\t/\n"
            )
            status, out, _ = proofs(str(port), "run", stdin=asked)
        assert 0 == status
        assert sorted(out.splitlines()) == sorted(
            [
                "ok\tserved",
                "FAIL\tnot-200\t127.0.0.1 did not answer 200 (got: HTTP/1.0 404 Not Found)",
                "FAIL\tleaks\t127.0.0.1 is reachable (answered: HTTP/1.0 404 Not Found)",
                "ok\tclosed",
            ]
        )

    def test_what_cannot_be_proven_fails(self) -> None:
        """An unknown kind or check, a line without port or path, or a zone no interface here
        has, is a FAIL, not silence (and never a block that held by connecting nowhere)."""
        asked = (
            "teleport\tp1\t127.0.0.1\t1\t/\n"
            "check\tp2\tcodex.happy\n"
            "block\tp4\t127.0.0.1\t\t/\n"
            "block\tp5\t127.0.0.1\t1\n"
            "block\tp3\tfe80::1%02:42:00:00:00:99\t1\t/\n"
        )
        out = proofs("8080", "run", stdin=asked)[1].splitlines()
        assert sorted(out) == sorted(
            [
                "FAIL\tp1\tunknown probe kind teleport",
                "FAIL\tp2\tunknown check codex.happy",
                "FAIL\tp4\tnot a probe: host '127.0.0.1', port '/', path ''",
                "FAIL\tp5\tnot a probe: host '127.0.0.1', port '1', path ''",
                "FAIL\tp3\tno interface here has MAC address 02:42:00:00:00:99,"
                " so fe80::1 cannot be probed",
            ]
        )


# --- bench-isolation against stand-ins ---

FAKE_HPBENCH = r"""#!/usr/bin/env bash
# `hpbench topology proofs`: the plan the test left in $FAKE, plus the host's own probe.
set -euo pipefail
[[ -e "${FAKE}/hpbench-fails" ]] && { echo "cannot inspect compose project" >&2; exit 1; }
out="" port=""
while [[ $# -gt 0 ]]; do
  case "$1" in --out) out="$2"; shift ;; --host-port) port="$2"; shift ;; esac
  shift
done
mkdir -p "${out}"
cp "${FAKE}/structure.verdicts" "${FAKE}"/*.probes "${out}/"
: >"${out}/host.probes"
[[ -z "${port}" ]] || printf 'reach\thost.listener (127.0.0.1)\t127.0.0.1\t%s\t/\n' "${port}" \
  >"${out}/host.probes"
"""

FAKE_DOCKER = r"""#!/usr/bin/env bash
# ps: $FAKE/ps. exec ... ID bash -c ...: $FAKE/answer.ID if there is one, else ok for
# each proof asked on stdin.
set -euo pipefail
case "$1" in
  ps) cat "${FAKE}/ps" ;;
  exec)
    args=("$@")
    for i in "${!args[@]}"; do
      [[ "${args[$i]}" == bash ]] && id="${args[$((i - 1))]}" && break
    done
    asked="$(cat)"
    if [[ -e "${FAKE}/answer.${id}" ]]; then cat "${FAKE}/answer.${id}"; exit 0; fi
    while IFS=$'\t' read -r _ proof _; do printf 'ok\t%s\n' "${proof}"; done <<<"${asked}"
    ;;
  *) exit 1 ;;
esac
"""

FAKE_FIREWALL = "#!/usr/bin/env bash\nexit 0\n"

CONTROL = "reach\tcontrol-agent: router.reachable (control-router)\tcontrol-router\t8080\t/\n"
HPATCH = (
    "block\thpatch-agent: sentinel.name\tsentinel\t8080\t/\n"
    "check\thpatch-agent: mcp.none\tmcp.none\n"
)


class Stand:
    """A checkout whose bench-isolation meets stand-ins; ``fake`` holds their answers."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fake = root / "fake"
        self.fake.mkdir()
        libexec = root / "benchmarks" / "libexec"
        (libexec / "in-container").mkdir(parents=True)
        for name in ("bench-isolation", "bench-lib.sh", "in-container/proofs"):
            (libexec / name).symlink_to(LIBEXEC / name)
        for path, text in (
            (libexec / "bench-firewall", FAKE_FIREWALL),
            (root / "venv" / "bin" / "hpbench", FAKE_HPBENCH),
            (root / "bin" / "docker", FAKE_DOCKER),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            path.chmod(0o755)
        self.write("ps", "control-agent c1 running\nhpatch-agent h1 running\n")
        self.write("structure.verdicts", "ok\ttopology.verify\n")
        self.write("control-agent.probes", CONTROL)
        self.write("hpatch-agent.probes", HPATCH)

    def write(self, name: str, text: str) -> None:
        (self.fake / name).write_text(text)

    def isolation(self) -> tuple[int, list[str], list[str], str]:
        """bench-isolation's status, its held proofs, its failed proofs and its stderr."""
        done = run(
            [str(self.root / "benchmarks" / "libexec" / "bench-isolation"), "hpbench-stand"],
            env={
                "BENCH_ROOT": str(self.root),
                "HPBENCH_VENV": str(self.root / "venv"),
                "FAKE": str(self.fake),
                "PATH": f"{self.root / 'bin'}:{os.environ['PATH']}",
            },
            timeout=120,
        )
        held, failed = [], []
        for line in done.stderr.splitlines():
            for marker, found in (("proof held: ", held), ("proof failed: ", failed)):
                if marker in line:
                    found.append(line.split(marker, 1)[1])
        return done.returncode, held, failed, done.stderr


@pytest.fixture
def stand(tmp_path: Path) -> Stand:
    return Stand(tmp_path)


class TestJudging:
    def test_every_proof_held(self, stand: Stand) -> None:
        """Each proof asked got ok (the host's own probe of its listener for real): proven."""
        status, held, failed, errors = stand.isolation()
        assert (0, []) == (status, failed), errors
        assert sorted(held) == [
            "control-agent: router.reachable (control-router)",
            "host.listener (127.0.0.1)",
            "hpatch-agent: mcp.none",
            "hpatch-agent: sentinel.name",
            "topology.verify",
        ]
        assert "isolation proven for hpbench-stand" in errors

    def test_a_silent_container_fails_each_of_its_proofs(self, stand: Stand) -> None:
        """A container that printed nothing gave no verdict: each proof is named."""
        stand.write("answer.h1", "")
        status, _, failed, errors = stand.isolation()
        assert 1 == status
        assert sorted(failed) == [
            "hpatch-agent: mcp.none: no verdict (the proof did not run in hpatch-agent: )",
            "hpatch-agent: sentinel.name: no verdict (the proof did not run in hpatch-agent: )",
        ]
        assert "no arm may start" in errors

    def test_a_fail_line_fails(self, stand: Stand) -> None:
        """FAIL is a failure, with its reason; the other proof still holds."""
        stand.write(
            "answer.h1",
            "ok\thpatch-agent: sentinel.name\nFAIL\thpatch-agent: mcp.none\tprinted [echo]\n",
        )
        status, held, failed, _ = stand.isolation()
        assert 1 == status
        assert ["hpatch-agent: mcp.none: printed [echo]"] == failed
        assert "hpatch-agent: sentinel.name" in held

    def test_a_verdict_for_another_proof_counts_for_none(self, stand: Stand) -> None:
        """An ok for a proof not asked (a prefix of nothing, a name that merely starts
        like one) is refused, and the proof it resembles still has no verdict."""
        stand.write(
            "answer.h1",
            "ok\thpatch-agent: mcp.none\nok\thpatch-agent: sentinel.name (elsewhere)\n"
            "ok\thpatch-agent: sentinel.name: trust me\n",
        )
        status, _, failed, _ = stand.isolation()
        assert 1 == status
        assert sorted(failed) == [
            "hpatch-agent: a verdict for a proof not asked (ok hpatch-agent: sentinel.name"
            " (elsewhere))",
            "hpatch-agent: a verdict for a proof not asked (ok hpatch-agent: sentinel.name: "
            "trust me)",
            "hpatch-agent: sentinel.name: no verdict (the proof did not run in hpatch-agent: )",
        ]

    def test_a_broken_structure_fails_by_rule(self, stand: Stand) -> None:
        """Each structural FAIL is named by its rule's code."""
        stand.write(
            "structure.verdicts",
            "FAIL\ttopology.verify\ttopology.agent.networks at $.services.control-agent.networks:"
            " control-agent is attached to ['control', 'hpatch']\n",
        )
        status, _, failed, _ = stand.isolation()
        assert 1 == status
        assert [
            "topology.verify: topology.agent.networks at $.services.control-agent.networks:"
            " control-agent is attached to ['control', 'hpatch']"
        ] == failed

    def test_a_structure_without_verdict_fails(self, stand: Stand) -> None:
        """No structural verdict at all is no proof of structure."""
        stand.write("structure.verdicts", "")
        status, _, failed, _ = stand.isolation()
        assert 1 == status
        assert ["topology.verify: no verdict (the proof did not run in the structure: )"] == failed

    def test_no_plan_stops_at_once(self, stand: Stand) -> None:
        """When the proofs cannot be listed, nothing is proven and the reason is named."""
        stand.write("hpbench-fails", "")
        status, held, failed, errors = stand.isolation()
        assert 1 == status
        assert ["topology.proofs: cannot inspect compose project "] == failed
        assert [] == held
        assert "its proofs could not be listed" in errors

    def test_a_service_without_container(self, stand: Stand) -> None:
        """An agent with no running container: each of its proofs is named, with why."""
        stand.write("ps", "control-agent c1 running\nhpatch-agent h1 exited\n")
        status, _, failed, _ = stand.isolation()
        assert 1 == status
        assert 2 == len(failed), failed
        assert all(
            f.endswith(
                "no verdict (the proof did not run in hpatch-agent: no running container"
                " of hpatch-agent )"
            )
            for f in failed
        ), failed
