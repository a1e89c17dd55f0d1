"""Good evidence of a router conformance check, made without Docker.

The scripted provider and the reference router run on loopback (``hpbench.reference.harness``)
and the check's own client sends the recorded requests through them, exactly as the
check does in containers; the facts the shell would add (identity, listeners, the stop)
are written as a conforming router gives them. Each test copies this directory and
breaks one thing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpbench.reference.harness import running_provider, running_router
from hpbench.routercheck import client, evidence

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTRIB = REPO_ROOT / "contrib" / "router-check"
CREDENTIAL = "sk-hpbench-router-check-0123456789abcdef01234567"

# /proc/net/tcp of a conforming router's namespace: its listener on 0.0.0.0:8080, Docker's
# embedded DNS on 127.0.0.11, and one established connection (columns after the inode cut).
LISTENERS = """\
# /proc/net/tcp
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 10002 0 1
   1: 0B00007F:A5DD 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 2
   2: 03001BAC:E9FE 02001BAC:1F90 06 00000000:00000000 03:00001745 00000000     0        0 0 3 0
# /proc/net/tcp6
  sl  local_address remote_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode
"""

FACTS = {
    "image": "hpbench-router:local",
    "image_id": "sha256:" + "0" * 64,
    "listen_port": "8080",
    "stop_timeout": "10",
    "running_before_stop": "true",
    "identity_status": "0",
    "client_status": "0",
    "listeners_status": "0",
    "stop_seconds": "0.15",
    "stop_status": "0",
    "exit_code": "0",
    "running_after_stop": "false",
}


def write_facts(run_dir: Path, facts: dict[str, str]) -> None:
    """``facts.tsv`` as the shell writes it."""
    lines = "".join(f"{key}\t{value}\n" for key, value in facts.items())
    (run_dir / evidence.FACTS).write_text(lines, encoding="utf-8")


@pytest.fixture(scope="session")
def good_evidence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory whose every item is ok."""
    run_dir = tmp_path_factory.mktemp("good") / "run"
    work = run_dir.parent / "work"
    run_dir.mkdir()
    shutil.copytree(CONTRIB / "requests", run_dir / evidence.REQUESTS)
    previous = os.environ.get(client.CREDENTIAL_VARIABLE)
    os.environ[client.CREDENTIAL_VARIABLE] = CREDENTIAL
    try:
        with running_provider({"router-check": CONTRIB / "provider.json"}, work) as provider:
            upstream = f"{provider.url}/router-check/v1"
            with running_router(
                upstream, run_dir / evidence.CAPTURE, log=work / "router.log"
            ) as router:
                status = client.main(
                    [
                        "--router",
                        f"127.0.0.1:{router.port}",
                        "--requests",
                        str(run_dir / evidence.REQUESTS),
                        "--out",
                        str(run_dir / evidence.CLIENT),
                    ]
                )
                assert 0 == status
    finally:
        if previous is None:
            os.environ.pop(client.CREDENTIAL_VARIABLE, None)
        else:
            os.environ[client.CREDENTIAL_VARIABLE] = previous
    (run_dir / evidence.CLIENT / "metrics.json").replace(run_dir / evidence.METRICS)
    shutil.copy(work / "provider-records.jsonl", run_dir / evidence.PROVIDER_RECORDS)
    (run_dir / evidence.CREDENTIAL).write_text(CREDENTIAL + "\n", encoding="utf-8")
    (run_dir / evidence.IDENTITY_OUT).write_text(
        '{"name": "hpbench-reference-router", "version": "0.1.0"}\n', encoding="utf-8"
    )
    (run_dir / evidence.LISTENERS_OUT).write_text(LISTENERS, encoding="utf-8")
    write_facts(run_dir, FACTS)
    return run_dir


@pytest.fixture
def run_dir(good_evidence: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the good evidence, to break."""
    copy = tmp_path / "run"
    shutil.copytree(good_evidence, copy)
    yield copy
