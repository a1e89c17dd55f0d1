"""Reject a Go module cache that holds a benchmark-owned module.

The setup-only container fills a module cache from the history-free base
snapshot; both agents then get it read-only with network-backed resolution
off. If the cache held a downloadable copy of a module the benchmark owns (the
task's own module, another revision of it, a nested module under it), an agent
could read an implementation out of it. :func:`owned_module_findings` is a pure
computation on a directory: it walks the cache and reports every such copy.

What counts as a copy, in ``$GOMODCACHE``:

- ``cache/download/<escaped path>/@v/<version>.zip`` (and ``.mod``/``.info``
  beside it): what ``GOPROXY=file://$GOMODCACHE/cache/download`` would serve;
- ``<escaped path>@<version>/``: an extracted source tree;
- ``cache/vcs/<hash>/``: a version-control clone whose configuration names the
  prefix.

A prefix matches a module path at a path-element boundary:
``kvstore.example/kv`` matches itself and ``kvstore.example/kv/v2``, not
``kvstore.example/kvx``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from hpbench.findings import Finding

_DOWNLOAD_SUFFIXES = (".zip", ".mod", ".info", ".ziphash")


def escape_module_path(path: str) -> str:
    """The module cache's case encoding: each upper-case letter becomes ``!`` + lower case."""
    return "".join(f"!{c.lower()}" if "A" <= c <= "Z" else c for c in path)


def unescape_module_path(escaped: str) -> str:
    """Inverse of :func:`escape_module_path`."""
    out: list[str] = []
    bang = False
    for c in escaped:
        if bang:
            out.append(c.upper())
            bang = False
        elif c == "!":
            bang = True
        else:
            out.append(c)
    return "".join(out)


def matches_prefix(module: str, prefix: str) -> bool:
    """Whether ``module`` is ``prefix`` or lies under it at a path-element boundary."""
    prefix = prefix.rstrip("/")
    return module == prefix or module.startswith(prefix + "/")


def _owner(module: str, prefixes: Sequence[str]) -> str | None:
    for prefix in prefixes:
        if matches_prefix(module, prefix):
            return prefix
    return None


def _downloads(download_root: Path) -> Iterator[tuple[str, str, Path]]:
    """Each (module, version, file) that ``cache/download`` could serve."""
    for directory, _dirs, files in os.walk(download_root):
        here = Path(directory)
        if here.name != "@v":
            continue
        module = unescape_module_path(here.parent.relative_to(download_root).as_posix())
        for name in sorted(files):
            if name.endswith(_DOWNLOAD_SUFFIXES):
                version = unescape_module_path(name.rsplit(".", 1)[0])
                yield module, version, here / name


def _extracted(gomodcache: Path) -> Iterator[tuple[str, str, Path]]:
    """Each extracted ``module@version`` source tree (not descending into one)."""
    for directory, dirs, _files in os.walk(gomodcache):
        here = Path(directory)
        if here == gomodcache and "cache" in dirs:
            dirs.remove("cache")
        keep: list[str] = []
        for name in sorted(dirs):
            if "@" in name:
                escaped_module, _, version = name.partition("@")
                relative = (here / escaped_module).relative_to(gomodcache).as_posix()
                yield unescape_module_path(relative), unescape_module_path(version), here / name
            else:
                keep.append(name)
        dirs[:] = keep


def _vcs_clones(vcs_root: Path, prefixes: Sequence[str]) -> Iterator[tuple[str, Path]]:
    """Each clone under ``cache/vcs`` whose git configuration mentions a prefix."""
    if not vcs_root.is_dir():
        return
    for clone in sorted(p for p in vcs_root.iterdir() if p.is_dir()):
        config = clone / "config"
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for prefix in prefixes:
            if prefix.rstrip("/") in text:
                yield prefix, config


def owned_module_findings(gomodcache: Path, prefixes: Iterable[str]) -> list[Finding]:
    """Every benchmark-owned module copy in ``gomodcache``, one finding each.

    An empty list means the cache may be mounted into the agents. A missing
    directory is itself a finding: an unproved cache is never accepted.
    """
    wanted = [p for p in prefixes if p.strip()]
    if not gomodcache.is_dir():
        return [
            Finding(
                code="gomodcache.missing",
                message="no module cache directory here",
                file=str(gomodcache),
            )
        ]
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for module, version, path in _downloads(gomodcache / "cache" / "download"):
        prefix = _owner(module, wanted)
        if prefix is None or (module, version) in seen:
            continue
        seen.add((module, version))
        findings.append(
            Finding(
                code="gomodcache.owned.download",
                message=(
                    f"holds a downloadable copy of {module}@{version}, "
                    f"under the benchmark-owned prefix {prefix}"
                ),
                file=str(path.parent),
            )
        )
    for module, version, path in _extracted(gomodcache):
        prefix = _owner(module, wanted)
        if prefix is None:
            continue
        findings.append(
            Finding(
                code="gomodcache.owned.source",
                message=(
                    f"holds the source tree of {module}@{version}, "
                    f"under the benchmark-owned prefix {prefix}"
                ),
                file=str(path),
            )
        )
    for prefix, config in _vcs_clones(gomodcache / "cache" / "vcs", wanted):
        findings.append(
            Finding(
                code="gomodcache.owned.vcs",
                message=f"holds a version-control clone that names the benchmark-owned {prefix}",
                file=str(config.parent),
            )
        )
    return findings


__all__ = [
    "escape_module_path",
    "matches_prefix",
    "owned_module_findings",
    "unescape_module_path",
]
