"""Readiness probe for the provider and router containers (test equipment).

``python -m hpbench.reference.health [URL]`` exits 0 when ``URL`` (default
``http://127.0.0.1:8080/healthz``) answers 200 within two seconds, and 1
otherwise, so a Compose ``healthcheck`` needs neither curl nor wget.
"""

from __future__ import annotations

import sys
import urllib.request
from collections.abc import Sequence
from urllib.parse import urlsplit

DEFAULT_URL = "http://127.0.0.1:8080/healthz"


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether ``url`` answers 200 (http only: this probes a local listener)."""
    if urlsplit(url).scheme != "http":
        return False
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - http only
            return bool(response.status == 200)
    except OSError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0 when healthy, 1 otherwise."""
    args = list(sys.argv[1:] if argv is None else argv)
    return 0 if healthy(args[0] if args else DEFAULT_URL) else 1


if __name__ == "__main__":
    sys.exit(main())
