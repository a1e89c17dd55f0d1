"""How the test equipment names itself, so a report can say a stand-in ran.

The reference router answers ``--version`` with :data:`REFERENCE_ROUTER_NAME`, and
the scripted provider's ``x-request-id`` values start with
:data:`SCRIPTED_REQUEST_ID_PREFIX` (which a router's capture keeps as
``provider_request_id``). The report's "What ran" table reads both: a stand-in is
named by what it said, whatever its image is tagged or wherever it was served.
"""

from __future__ import annotations

REFERENCE_ROUTER_NAME = "hpbench-reference-router"
SCRIPTED_REQUEST_ID_PREFIX = "hpbench-scripted-"
