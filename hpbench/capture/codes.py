"""Finding codes of the capture validator, one per rejection class and reconciliation.

``docs/capture.md`` lists what each code means and what to do about it.
"""

from __future__ import annotations

from typing import Final

# Inputs
SNAPSHOT_MISSING: Final = "capture.snapshot.missing"
SNAPSHOT_SYNTAX: Final = "capture.snapshot.syntax"
SNAPSHOT_SCHEMA: Final = "capture.snapshot.schema"
SCHEMA_VERSION: Final = "capture.schema_version"
RECORD_SYNTAX: Final = "capture.record.syntax"
RECORD_SCHEMA: Final = "capture.record.schema"
RECORD_INVARIANT: Final = "capture.record.invariant"
SEQUENCE: Final = "capture.record.sequence"

# Rejection classes (spec 002, report generation item 2)
EMPTY: Final = "capture.empty"
ERROR: Final = "capture.error"
INCOMPLETE: Final = "capture.incomplete"
BOUNDARY: Final = "capture.boundary"
CLIENT_DUPLICATE: Final = "capture.client.duplicate"
EXCHANGE_GAP: Final = "capture.exchange.gap"
PROVIDER_MISSING: Final = "capture.provider.missing"
ATTEMPT_GAP: Final = "capture.attempt.gap"
ATTEMPT_DUPLICATE: Final = "capture.attempt.duplicate"
ATTEMPT_DELIVERED: Final = "capture.attempt.delivered"
WRITE_FAILURE: Final = "capture.write_failure"
SKIPPED: Final = "capture.skipped"
DROPPED_DETAIL: Final = "capture.dropped_detail"
TURN_STATE: Final = "capture.turn_state"

# Binding the arm to its configuration
BINDING: Final = "capture.binding"

# Reconciliations (spec 002, report generation item 3)
RECONCILE_RECORD_COUNT: Final = "capture.reconcile.record_count"
RECONCILE_ATTEMPTS: Final = "capture.reconcile.attempts"
RECONCILE_EXCHANGE: Final = "capture.reconcile.exchange"
RECONCILE_USAGE: Final = "capture.reconcile.usage"
RECONCILE_SAVINGS: Final = "capture.reconcile.savings"
RECONCILE_TOOLS: Final = "capture.reconcile.tools"
RECONCILE_HPATCH: Final = "capture.reconcile.hpatch"
RECONCILE_MODELS: Final = "capture.reconcile.models"
RECONCILE_THREADS: Final = "capture.reconcile.threads"
RECONCILE_CODEX: Final = "capture.reconcile.codex"
CODEX_SYNTAX: Final = "capture.codex.syntax"
CODEX_UNREPORTED: Final = "capture.codex.unreported"

# Models and child threads (spec 002: configured models, retained child proofs)
MODELS_PARENT: Final = "capture.models.parent"
MODELS_CHILD: Final = "capture.models.child"
MODELS_MENTOR_MISSING: Final = "capture.models.mentor_missing"
MODELS_UNPROVED: Final = "capture.models.unproved"
CHILD_PROOF: Final = "capture.child_proof"

# Cache-prefix observations (spec 002's diagnostic table; optional evidence)
CACHE_PREFIX: Final = "capture.cache_prefix"

ALL: Final = (
    SNAPSHOT_MISSING,
    SNAPSHOT_SYNTAX,
    SNAPSHOT_SCHEMA,
    SCHEMA_VERSION,
    RECORD_SYNTAX,
    RECORD_SCHEMA,
    RECORD_INVARIANT,
    SEQUENCE,
    EMPTY,
    ERROR,
    INCOMPLETE,
    BOUNDARY,
    CLIENT_DUPLICATE,
    EXCHANGE_GAP,
    PROVIDER_MISSING,
    ATTEMPT_GAP,
    ATTEMPT_DUPLICATE,
    ATTEMPT_DELIVERED,
    WRITE_FAILURE,
    SKIPPED,
    DROPPED_DETAIL,
    TURN_STATE,
    BINDING,
    RECONCILE_RECORD_COUNT,
    RECONCILE_ATTEMPTS,
    RECONCILE_EXCHANGE,
    RECONCILE_USAGE,
    RECONCILE_SAVINGS,
    RECONCILE_TOOLS,
    RECONCILE_HPATCH,
    RECONCILE_MODELS,
    RECONCILE_THREADS,
    RECONCILE_CODEX,
    CODEX_SYNTAX,
    CODEX_UNREPORTED,
    MODELS_PARENT,
    MODELS_CHILD,
    MODELS_MENTOR_MISSING,
    MODELS_UNPROVED,
    CHILD_PROOF,
    CACHE_PREFIX,
)
"""Every code, in documentation order."""
