"""Findings with a cap per code, so a flood of one problem stays readable and bounded."""

from __future__ import annotations

from hpbench.findings import Finding

FINDING_CAP = 50
"""Findings kept per code; further ones are only counted."""


class FindingSink:
    """Findings in the order they were found, at most ``cap`` per code."""

    def __init__(self, cap: int = FINDING_CAP) -> None:
        self.cap = cap
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}

    def add(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        """Keep a finding (or only count it once its code reached the cap)."""
        count = self.counts.get(code, 0) + 1
        self.counts[code] = count
        if count <= self.cap:
            self.findings.append(
                Finding(code=code, message=message, file=file, field=field, line=line)
            )

    def add_finding(self, finding: Finding) -> None:
        """Keep a finding made elsewhere."""
        self.add(
            finding.code, finding.message, file=finding.file, line=finding.line, field=finding.field
        )

    def suppressed(self) -> dict[str, int]:
        """How many findings of each code were counted but not kept."""
        return {code: n - self.cap for code, n in sorted(self.counts.items()) if n > self.cap}
