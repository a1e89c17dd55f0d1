"""Counting the harness's Python starts: a virtual environment whose ``hpbench`` logs.

bench.sh runs ``$HPBENCH_VENV/bin/hpbench``. Pointing ``HPBENCH_VENV`` at the
directory :func:`counting_venv` makes gives a ``bin/hpbench`` that appends its
arguments to a log, one line a start, then runs the real one. The test suite and
``benchmarks/perf/python_starts.py`` read the log.
"""

from __future__ import annotations

import shlex
from pathlib import Path

STARTS_LOG = "starts.log"


def counting_venv(directory: Path, real_venv: Path) -> Path:
    """A venv directory whose ``bin/hpbench`` logs each start to ``directory/starts.log``."""
    (directory / "bin").mkdir(parents=True, exist_ok=True)
    log = directory / STARTS_LOG
    log.touch()
    wrapper = directory / "bin" / "hpbench"
    wrapper.write_text(
        "#!/usr/bin/env bash\n"
        f"printf '%s\\n' \"$*\" >>{shlex.quote(str(log))}\n"
        f'exec {shlex.quote(str(real_venv / "bin" / "hpbench"))} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return directory


def python_starts(directory: Path) -> list[str]:
    """The logged starts, each as its command words after any ``--log-file PATH``."""
    lines = (directory / STARTS_LOG).read_text(encoding="utf-8").splitlines()
    starts = []
    for line in lines:
        words = line.split()
        if words[:1] == ["--log-file"]:
            words = words[2:]
        starts.append(" ".join(words[:2]))
    return starts
