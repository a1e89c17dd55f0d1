"""The scripted Responses provider: test equipment that stands in for the model.

Run it as::

    python -m hpbench.reference.provider --listen 0.0.0.0:8080 \\
        --script control=tasks/<id>/replay/control.json \\
        --script hpatch=tasks/<id>/replay/hpatch.json \\
        --record /records/provider.jsonl

As an outside-provider stand-in (the place a real provider would be) it serves
HTTPS and wants a key::

    HPBENCH_OUTSIDE_KEY=sk-hpbench-fake-... python -m hpbench.reference.provider \\
        --listen 0.0.0.0:8443 --tls-cert server.pem --tls-key server-key.pem \\
        --api-key-env HPBENCH_OUTSIDE_KEY --script answer.json

Each ``--script NAME=FILE`` is served at ``POST /NAME/v1/responses``; a router
for that arm uses ``--upstream http://provider:8080/NAME/v1``. With a single
script, ``POST /v1/responses`` answers from it too. ``GET /healthz`` answers
``{"ok": true}`` once it listens; ``GET /requests`` returns every request
record so far. Logs go to stderr.

What it guarantees (``docs/reference-equipment.md`` has the details):

- **Step from history.** The step answered is the number of model responses
  already in the request's ``input`` (each maximal run of model-output items
  counts once), so a retry of a request gets the same step.
- **Deterministic usage.** Tokens are byte counts divided by four, rounded up.
  A cached prefix is kept per ``prompt_cache_key``: the longest run of leading
  prompt units (the tools, then each input item) equal to one already seen
  under that key, rounded down to 64 tokens.
- **Turn state.** Each turn (``prompt_cache_key`` plus the number of user
  messages) gets its own ``x-codex-turn-state`` value on every 200 response,
  and every later request of that turn is recorded as carrying it
  ``unchanged``, ``changed`` or ``missing``; a first request that already
  carries one is ``unsolicited``.
- **Faults on demand** per step and attempt (see :mod:`hpbench.reference.script`).
- **Sanitized records**: sizes, hashes, counts and item types, never an
  authorization value or conversation text.
- **Key check** (``--api-key-env NAME``): every request but ``GET /healthz``
  without ``Authorization: Bearer <$NAME>`` gets a 401 and a ``refused``
  record; the key is read from the environment only and never recorded.
- **Request ids**: ``x-request-id`` is ``hpbench-scripted-req_<seq>``
  (:data:`~hpbench.reference.identity.SCRIPTED_REQUEST_ID_PREFIX`).

This module is the command line; requests are answered by
:mod:`hpbench.reference._scripted`.
"""

from __future__ import annotations

import argparse
import os
import ssl
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog

from hpbench._logging import configure
from hpbench.errors import HpbenchError
from hpbench.reference import _server
from hpbench.reference._scripted import Provider
from hpbench.reference.script import Script, load_script

log = structlog.get_logger("hpbench.reference.provider")

DEFAULT_SCRIPT = "default"


def _parse_scripts(values: Sequence[str]) -> dict[str, Script]:
    scripts: dict[str, Script] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = DEFAULT_SCRIPT, value
        if not name or "/" in name or name in ("v1", "responses", "requests", "healthz"):
            msg = f"--script wants NAME=FILE with a plain name, got {value!r}"
            raise HpbenchError(msg)
        if name in scripts:
            msg = f"--script {name} given twice"
            raise HpbenchError(msg)
        scripts[name] = load_script(Path(path))
    return scripts


def build_parser() -> argparse.ArgumentParser:
    """The provider's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m hpbench.reference.provider",
        description="Scripted Responses provider (test equipment; never a real model).",
    )
    _server.add_listener_arguments(parser)
    parser.add_argument(
        "--script",
        action="append",
        required=True,
        metavar="NAME=FILE",
        help="serve FILE at /NAME/v1/responses (repeatable)",
    )
    parser.add_argument("--record", type=Path, metavar="FILE", help="request records as JSONL")
    parser.add_argument(
        "--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate (chain)"
    )
    parser.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert")
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="refuse (401) every request but /healthz without Authorization: Bearer <$NAME>",
    )
    return parser


def _tls(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        given, missing = ("--tls-cert", "--tls-key") if key is None else ("--tls-key", "--tls-cert")
        msg = f"{given} needs {missing} (give both or neither)"
        raise HpbenchError(msg)
    return _server.tls_context(cert, key)


def _api_key(name: str | None) -> str | None:
    """The expected key, read from the environment variable ``name`` (never a flag)."""
    if name is None:
        return None
    if not name or "=" in name:
        msg = f"--api-key-env wants a variable name, got {name!r}"
        raise HpbenchError(msg)
    value = os.environ.get(name, "")
    if not value.strip():
        msg = f"--api-key-env {name}: the variable is not set or empty"
        raise HpbenchError(msg)
    if any(char.isspace() for char in value.strip()):
        msg = f"--api-key-env {name}: the key contains whitespace"
        raise HpbenchError(msg)
    return value.strip()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the provider until SIGTERM or SIGINT."""
    args = build_parser().parse_args(argv)
    configure(level=args.log_level)
    try:
        host, port = _server.parse_listen(args.listen)
        tls = _tls(args.tls_cert, args.tls_key)
        api_key = _api_key(args.api_key_env)
        provider = Provider(_parse_scripts(args.script), args.record, api_key=api_key)
    except (HpbenchError, ValueError) as exc:
        sys.stderr.write(f"provider: {exc}\n")
        return 2
    serving = _server.serve(
        provider.handle,
        host,
        port,
        log=log,
        tls=tls,
        scripts=sorted(provider.scripts),
        api_key_env=args.api_key_env,
    )
    return _server.run_until_signal(serving, "provider")


if __name__ == "__main__":
    sys.exit(main())
