"""Suites: several tasks run one after another in one mode, pooled (docs/suites.md).

benchmarks/libexec/bench-suite runs each task as an ordinary run in ``tasks/<id>/`` of
the suite directory; ``hpbench suite finish`` then reads each task's report and writes
``suite.json`` and ``summary.md``.
"""

from __future__ import annotations

from hpbench.suite.document import SUITE_SCHEMA, SuiteDocument
from hpbench.suite.finish import build_suite, finish_suite

__all__ = ["SUITE_SCHEMA", "SuiteDocument", "build_suite", "finish_suite"]
