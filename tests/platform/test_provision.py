"""benchmarks/provision.sh: quick when satisfied, and exact about what a non-root user lacks."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PROVISION = REPO_ROOT / "benchmarks" / "provision.sh"


@pytest.mark.docker
class TestProvision:
    def test_idempotent_and_quick(self) -> None:
        """On a provisioned machine a second run changes nothing and takes seconds."""
        started = time.monotonic()
        done = subprocess.run(
            [str(PROVISION)], capture_output=True, text=True, check=False, timeout=600
        )
        assert 0 == done.returncode, done.stderr
        assert time.monotonic() - started < 15
        assert "installing" not in done.stderr
        assert "debootstrap" not in done.stderr

    @pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
    def test_non_root_is_told_what_is_missing(self) -> None:
        """An unprivileged user without engine access gets the missing piece and its fix."""
        setpriv = shutil.which("setpriv")
        assert setpriv is not None
        # A world-readable copy: the checkout itself may sit under a private home.
        with tempfile.TemporaryDirectory(prefix="hpbench-provision-") as scratch:
            Path(scratch).chmod(0o755)
            script = Path(scratch) / "provision.sh"
            shutil.copy(PROVISION, script)
            script.chmod(0o755)
            done = subprocess.run(
                [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", str(script)],
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
                env={"PATH": os.environ["PATH"], "HOME": scratch},
                cwd=scratch,
            )
        assert 1 == done.returncode
        assert "is not root" in done.stderr
        assert "the Docker engine is not running or nobody may not use it" in done.stderr
        assert "fix: " in done.stderr
