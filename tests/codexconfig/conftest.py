"""Fixtures for the test equipment: a hard time limit per test and loopback helpers.

Every test here talks to real processes over 127.0.0.1 only. A test that would
hang (a stalled stream, a Codex that waits for the network) fails after
``TEST_TIMEOUT`` seconds instead, through SIGALRM.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

TEST_TIMEOUT = 150
REPLAY = Path(__file__).resolve().parents[1] / "data" / "replay"


def _expired(signum: int, frame: FrameType | None) -> None:
    pytest.fail(f"test exceeded {TEST_TIMEOUT} s", pytrace=False)


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    """Fail any test that runs longer than ``TEST_TIMEOUT`` seconds."""
    previous = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def replay_dir() -> Path:
    """``tests/data/replay``."""
    return REPLAY
