"""Local codec replay: freeze a private corpus of Codex rollouts once, then measure a codec on it.

:func:`freeze` selects eligible rollouts from a Codex sessions directory by a seeded
rule that never reads token counts or compression results, and keeps their exact
bytes with a manifest (``hpbench.codec-corpus.v1``) outside the repository.
:func:`replay` checks every frozen sample against that manifest and measures a
:class:`Codec` on the request inputs each rollout reconstructs. See
``docs/codec-replay.md``.
"""

from hpbench.codecreplay.freeze import Frozen, freeze
from hpbench.codecreplay.manifest import CorpusManifest, Sample, read_manifest
from hpbench.codecreplay.replay import REFERENCE_CTP2, Codec, ReplayResult, SampleBytes, replay

__all__ = [
    "REFERENCE_CTP2",
    "Codec",
    "CorpusManifest",
    "Frozen",
    "ReplayResult",
    "Sample",
    "SampleBytes",
    "freeze",
    "read_manifest",
    "replay",
]
