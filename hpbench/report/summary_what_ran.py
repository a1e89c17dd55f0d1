"""summary.md's "What ran" table: every fact behind the numbers, and every stand-in.

Image ids and the git revision are cut to 12 hex digits (enough to find them in
``docker images`` and ``git log``; report.json keeps them whole). What a router said
about itself is untrusted text and goes through :func:`cell` like any evidence.
"""

from __future__ import annotations

from typing import Any

from hpbench.report.markdown import UNAVAILABLE, cell, table

_SHORT = 12


def _short_id(image_id: str | None) -> str:
    if image_id is None:
        return UNAVAILABLE
    algorithm, _, digest = image_id.partition(":")
    return f"{algorithm}:{digest[:_SHORT]}"


def _revision(revision: str | None) -> str:
    if revision is None:
        return UNAVAILABLE
    commit, dirty, _ = revision.partition("-dirty")
    return commit[:_SHORT] + (" (with uncommitted changes)" if dirty else "")


def _router_row(router: dict[str, Any]) -> tuple[str, str]:
    said = (
        f"says {cell(router['name'])} {cell(router['version'])}"
        if router["name"] is not None
        else f"identity {UNAVAILABLE}"
    )
    ran = f"{router['mode']} / {router['protocol']}" if router["mode"] is not None else UNAVAILABLE
    stand_in = f" **{router['stand_in']}**" if router["stand_in"] else ""
    return (
        f"{router['arm']} router",
        f"{cell(router['image'])} (`{_short_id(router['image_id'])}`), {said}; {ran}{stand_in}",
    )


def what_ran_section(report: dict[str, Any]) -> list[str]:
    """The "What ran" section: one row per fact, then the stand-ins and what is missing."""
    ran = report["provenance"]
    rows = [_router_row(router) for router in ran["routers"]]
    provider = ran["provider"] + (
        f" **{ran['provider_stand_in']}**" if ran["provider_stand_in"] else ""
    )
    rows += [
        (
            "Codex CLI",
            f"{cell(ran['codex_version'])} in the agent image "
            f"(`{_short_id(ran['agent_image_id'])}`)",
        ),
        ("provider", provider),
        ("task fingerprint", f"`{ran['task_fingerprint']}`"),
        ("hpbench", f"{ran['hpbench_version']} at `{_revision(ran['hpbench_revision'])}`"),
    ]
    lines = ["## What ran", "", *table(("", "what"), rows), ""]
    if ran["stand_ins"]:
        lines += [
            "Stand-ins (test equipment; nothing they did is a model's or a router's result): "
            + "; ".join(ran["stand_ins"])
            + ".",
            "",
        ]
    if ran["missing"]:
        lines += ["**Provenance incomplete**, so these results are refused:", ""]
        lines += [f"- {cell(item)}" for item in ran["missing"]]
        lines.append("")
    return lines
