"""A real run, offline: the user's router image, a key, and a provider outside the topology.

The scripted provider stands where a real provider would be (tests/outside.py): not a
service of the run's Compose project, over HTTPS with a test CA the routers are given
(PROVIDER_CA_BUNDLE), on a network of its own, demanding the key. The router image is
the reference router under another name, so hpbench cannot know it from its tag: the
report must name it as a stand-in from what it says about itself. Every file of the run
and everything bench.sh printed is searched for the key.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..outside import OutsideProvider, outside_provider
from .conftest import REPO_ROOT, bench, leftovers, results

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]

TASK_SCRIPT = REPO_ROOT / "tasks" / "kv-rangestream" / "replay" / "control.json"


@pytest.fixture(scope="module")
def router_image() -> Iterator[str]:
    """The reference router's image under a name that is not the reference router's, and
    this process's own: another test session on the engine removes its own when done."""
    tag = os.environ.get("HPBENCH_IMAGE_TAG", "local")
    image = f"hpbench-e2e/measured-router-{secrets.token_hex(4)}:{tag}"
    subprocess.run(["docker", "tag", f"hpbench-router:{tag}", image], check=True)
    yield image
    subprocess.run(["docker", "image", "rm", image], capture_output=True, check=False)


def _script(tmp_path: Path, faults: dict[int, list[dict[str, Any]]] | None = None) -> Path:
    """The task's scripted answers, with ``faults`` (step index to attempts' faults)."""
    script = json.loads(TASK_SCRIPT.read_text())
    script["name"] = "outside"
    for index, step_faults in (faults or {}).items():
        script["steps"][index]["faults"] = step_faults
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    return path


def _real_run(
    runs_dir: Path, outside: OutsideProvider, image: str, **extra: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    return bench(
        "paired",
        runs_dir,
        PROVIDER=outside.url,
        HPBENCH_API_KEY=outside.key,
        PROVIDER_CA_BUNDLE=str(outside.ca_bundle),
        HPATCH_ROUTER_IMAGE=image,
        **extra,
    )


def _files_holding(root: Path, needle: bytes) -> list[str]:
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                found.append(str(path.relative_to(root)))
    return found


class TestOutsideProvider:
    def test_paired_passes_through_the_routers_and_the_key_is_nowhere(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        with outside_provider(_script(tmp_path), tmp_path / "outside") as outside:
            result, run_dir = _real_run(runs_dir, outside, router_image)
            records = outside.records()
            provider_logs = outside.logs()
        assert 0 == result.returncode, result.stderr[-4000:]
        assert "OFFLINE DEMO" not in result.stderr
        assert [] == leftovers(run_dir)
        attempts = results(run_dir)
        assert [("control", True), ("hpatch", True)] == [(a["arm"], a["passed"]) for a in attempts]
        report = json.loads((run_dir / "report.json").read_text())
        assert report["outcome"] == {"ok": True, "reasons": []}
        assert all(verdict["valid"] for verdict in report["captures"].values())

        # The provider answered both arms, every request with the key, none refused.
        assert records and all(record.get("refused") is None for record in records)
        assert {"bearer"} == {record["headers"]["authorization"] for record in records}

        # Only the routers reach the provider: each agent proved it cannot.
        isolation = (run_dir / "reps" / "1" / "isolation.stderr").read_text()
        for agent in ("control-agent", "hpatch-agent"):
            held = f"isolation proof held: {agent}: provider.address ({outside.gateway}:"
            assert held in isolation, isolation
        services = (run_dir / "reps" / "1" / "services.txt").read_text().split()
        assert "provider" not in services

        # What ran: the stand-ins named by what they said, the provider by scheme and host.
        ran = report["provenance"]
        assert [] == ran["missing"]
        assert f"https://{outside.gateway}:{outside.port}" == ran["provider"]
        assert [
            "control router: reference router (test equipment)",
            "hpatch router: reference router (test equipment)",
            "provider: scripted provider (test equipment)",
        ] == ran["stand_ins"]
        assert {router_image} == {router["image"] for router in ran["routers"]}
        summary = (run_dir / "summary.md").read_text()
        what_ran = summary[summary.index("## What ran") : summary.index("## Outcome")]
        assert "**scripted provider (test equipment)**" in what_ran
        assert "**reference router (test equipment)**" in what_ran
        assert "/v1" not in what_ran

        # The key: in no file of the run, nothing bench.sh printed, no provider record or log.
        key = outside.key.encode()
        assert [] == _files_holding(run_dir, key)
        assert outside.key not in result.stdout + result.stderr
        assert outside.key not in json.dumps(records) + provider_logs
        assert "" == (run_dir / "credential-exposures.txt").read_text()

    def test_an_agent_that_reaches_for_the_key_is_refused_and_the_key_scrubbed(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        """A hostile agent reads the key from Codex's own process, prints it and writes it
        into its workspace: the run keeps the evidence with the key replaced, and the
        report refuses the run, naming where it was found."""
        script = json.loads(TASK_SCRIPT.read_text())
        steal = (
            "for p in /proc/[0-9]*; do tr '\\0' '\\n' <\"$p/environ\" 2>/dev/null; done"
            " | grep -m1 '^HPBENCH_API_KEY=' | tee kv/stolen.txt"
        )
        script["steps"].insert(0, {"output": [{"type": "exec_command", "cmd": steal}]})
        path = tmp_path / "steal.json"
        path.write_text(json.dumps(script))
        with outside_provider(path, tmp_path / "outside") as outside:
            result, run_dir = _real_run(runs_dir, outside, router_image)
        assert 0 != result.returncode
        assert [] == leftovers(run_dir)
        key = outside.key.encode()
        assert [] == _files_holding(run_dir, key)
        exposed = (run_dir / "credential-exposures.txt").read_text().splitlines()
        assert any(path.endswith("codex.jsonl") for path in exposed), exposed
        report = json.loads((run_dir / "report.json").read_text())
        (reason,) = [r for r in report["outcome"]["reasons"] if "credential" in r]
        assert "was redacted" in reason
        jsonl = (run_dir / "attempts" / "1-control" / "codex.jsonl").read_text()
        assert "HPBENCH_API_KEY=[credential redacted by hpbench]" in jsonl

    def test_429_5xx_and_a_dropped_stream_are_retried(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        """The outside provider throttles (429 with retry-after), fails (503) and drops a
        stream, once each: the router and Codex retry, both arms pass, and the capture
        keeps each failed attempt."""
        faults = {
            0: [{"kind": "http_429", "retry_after_seconds": 1}],
            1: [{"kind": "http_503"}],
            2: [{"kind": "drop", "after_events": 2}],
        }
        with outside_provider(_script(tmp_path, faults), tmp_path / "outside") as outside:
            result, run_dir = _real_run(runs_dir, outside, router_image)
            records = outside.records()
        assert 0 == result.returncode, result.stderr[-4000:]
        assert all(a["passed"] for a in results(run_dir))
        faulted = [record["fault"] for record in records]
        assert 2 == faulted.count("http_429") and 2 == faulted.count("http_503"), faulted
        assert 2 == faulted.count("drop"), faulted
        report = json.loads((run_dir / "report.json").read_text())
        failed = [
            row
            for evidence in report["provider_responses"].values()
            for row in evidence["rows"]
            if row["http_status"] in (429, 503)
        ]
        assert 4 == len(failed)

    def test_a_provider_that_keeps_failing_voids_the_pair_as_infrastructure(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        """Every attempt answered 500: no arm loses, the pair is void, the run fails."""
        faults = {0: [{"kind": "http_500"}] * 12}
        with outside_provider(_script(tmp_path, faults), tmp_path / "outside") as outside:
            result, run_dir = _real_run(runs_dir, outside, router_image)
        assert 0 != result.returncode
        attempts = results(run_dir)
        assert {"infrastructure"} == {a["failure_class"] for a in attempts}
        report = json.loads((run_dir / "report.json").read_text())
        (pair,) = report["correctness"]["pairs"]
        assert pair["voided"]

    def test_a_wrong_key_is_refused_by_the_provider(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        """The provider wants its key: with another one every request is refused (401),
        nothing passes, and neither key is written anywhere."""
        wrong = "sk-hpbench-fake-" + "0" * 32
        with outside_provider(_script(tmp_path), tmp_path / "outside") as outside:
            result, run_dir = bench(
                "paired",
                runs_dir,
                PROVIDER=outside.url,
                HPBENCH_API_KEY=wrong,
                PROVIDER_CA_BUNDLE=str(outside.ca_bundle),
                HPATCH_ROUTER_IMAGE=router_image,
            )
            records = outside.records()
        assert 0 != result.returncode
        assert records and {"wrong_key"} == {record.get("refused") for record in records}
        assert not any(a["passed"] for a in results(run_dir))
        for needle in (wrong.encode(), outside.key.encode()):
            assert [] == _files_holding(run_dir, needle)


class TestAuthFile:
    @pytest.mark.skipif(os.geteuid() != 0, reason="giving the file to uid 1000 needs root")
    def test_a_codex_auth_file_is_the_credential(
        self, runs_dir: Path, router_image: str, tmp_path: Path
    ) -> None:
        """CODEX_AUTH_FILE instead of a key variable: mounted read-only into the agents,
        whose Codex sends its key; both arms pass and the key is in no file of the run."""
        with outside_provider(_script(tmp_path), tmp_path / "outside") as outside:
            auth = tmp_path / "auth" / "auth.json"
            auth.parent.mkdir()
            auth.write_text(json.dumps({"OPENAI_API_KEY": outside.key}))
            # Bind-mounted as it is: the agents' Codex runs as uid 1000.
            os.chown(auth, 1000, 1000)
            auth.chmod(0o400)
            result, run_dir = bench(
                "paired",
                runs_dir,
                PROVIDER=outside.url,
                CODEX_AUTH_FILE=str(auth),
                PROVIDER_CA_BUNDLE=str(outside.ca_bundle),
                HPATCH_ROUTER_IMAGE=router_image,
            )
            records = outside.records()
        assert 0 == result.returncode, result.stderr[-4000:]
        assert all(a["passed"] for a in results(run_dir))
        assert records and all(record.get("refused") is None for record in records)
        for arm in ("control", "hpatch"):
            config = (run_dir / "codex" / arm / "config.toml").read_text()
            assert "requires_openai_auth = true" in config and "env_key" not in config
        assert [] == _files_holding(run_dir, outside.key.encode())
        assert outside.key not in result.stdout + result.stderr
