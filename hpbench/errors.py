"""Exceptions that reach the command line.

Every error a person can act on is an :class:`HpbenchError`; the CLI prints its
message without a traceback and exits 1. :class:`PrerequisiteError` adds the
fix, because a missing tool is only useful to report together with how to get it.
"""

from __future__ import annotations

from collections.abc import Sequence

from hpbench.findings import Finding


class HpbenchError(Exception):
    """Base class for errors hpbench reports to a person."""


class PrerequisiteError(HpbenchError):
    """Something hpbench needs is not on this machine."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(f"{what}\n  fix: {fix}")
        self.what = what
        self.fix = fix


class ContractError(HpbenchError):
    """Input broke a contract; the findings say where and how."""

    def __init__(self, summary: str, findings: Sequence[Finding]) -> None:
        lines = [summary, *(f"  {finding}" for finding in findings)]
        super().__init__("\n".join(lines))
        self.summary = summary
        self.findings = tuple(findings)
