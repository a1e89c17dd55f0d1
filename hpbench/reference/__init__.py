"""Test equipment: the scripted Responses provider and the reference router.

Nothing here is part of a measured benchmark. These two programs let hpbench run
end to end with no API key and no network:

- :mod:`hpbench.reference.provider` stands in for the model. It speaks the
  Responses API over SSE the way Codex CLI 0.169 expects and answers from a
  script (``tests/data/replay/*.json``; a task keeps its own under
  ``tasks/<id>/replay/``), with deterministic usage, per-turn
  ``x-codex-turn-state`` values and faults on demand. It records every request
  it saw, sanitized.
- :mod:`hpbench.reference.router` stands in for a router under test. In
  passthrough/native it relays the Responses stream unchanged; in ``--mode hpatch``,
  ``--protocol ctp2`` and with ``--mentor MODEL`` it applies small, documented stand-ins
  for Hpatch edit routing, CTP/2 and Mentor Handoff (never their real algorithms), so
  every treatment field of the capture contract is exercised. It serves
  ``GET /api/metrics`` and writes the capture contract, the same flags and files a real
  router must honour.

Only the test suite and the offline workflow import this package. The script
format and both command lines are documented in ``docs/reference-equipment.md``.
"""
