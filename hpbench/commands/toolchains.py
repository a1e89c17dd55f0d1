"""Toolchains: tests, builds, formatters and fetches decided by a subcommand.

``go test`` builds and ``go get`` fetches; ``python -m pytest`` tests and
``python -m pip install`` fetches; package managers (``cargo``, ``npm``,
``pip``, ``apt``…) are one table each from their first non-option word.
"""

from __future__ import annotations

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, Interpreter


def go(ctx: Context) -> Interpretation:
    sub = ctx.args[0].text if ctx.args else ""
    rest = [w.text for w in ctx.args[1:]]
    if sub in ("test", "build", "vet", "run", "generate", "list") or (
        sub == "install" and not any("@" in text for text in rest)
    ):
        return Interpretation(Category.TEST_BUILD)
    if sub == "fmt":
        return Interpretation(Category.FORMATTER)
    if sub in ("get", "install"):
        return Interpretation(Category.UPSTREAM_FETCH)
    if sub == "mod" and rest and rest[0] in ("download", "tidy", "vendor"):
        return Interpretation(Category.UPSTREAM_FETCH)
    return Interpretation(Category.OTHER)


def python(ctx: Context) -> Interpretation:
    texts = [w.text for w in ctx.args]
    if len(texts) >= 2 and texts[0] == "-m":
        module = texts[1]
        if module in ("pytest", "unittest", "tox", "nox", "mypy", "compileall"):
            return Interpretation(Category.TEST_BUILD)
        if module in ("black", "isort", "autopep8", "yapf"):
            return Interpretation(Category.FORMATTER)
        if module == "pip" and len(texts) > 2 and texts[2] in ("install", "download"):
            return Interpretation(Category.UPSTREAM_FETCH)
    return Interpretation(Category.OTHER)


def subcommand(table: dict[str, Category], default: Category = Category.OTHER) -> Interpreter:
    def interpret(ctx: Context) -> Interpretation:
        for word in ctx.args:
            if not word.text.startswith("-"):
                return Interpretation(table.get(word.text, default))
        return Interpretation(default)

    return interpret


JS_PACKAGES = {
    "test": Category.TEST_BUILD,
    "run": Category.TEST_BUILD,
    "build": Category.TEST_BUILD,
    "install": Category.UPSTREAM_FETCH,
    "i": Category.UPSTREAM_FETCH,
    "ci": Category.UPSTREAM_FETCH,
    "add": Category.UPSTREAM_FETCH,
}
CARGO = {
    "test": Category.TEST_BUILD,
    "build": Category.TEST_BUILD,
    "check": Category.TEST_BUILD,
    "clippy": Category.TEST_BUILD,
    "run": Category.TEST_BUILD,
    "bench": Category.TEST_BUILD,
    "fmt": Category.FORMATTER,
    "fetch": Category.UPSTREAM_FETCH,
    "install": Category.UPSTREAM_FETCH,
    "update": Category.UPSTREAM_FETCH,
}
RUFF = {"format": Category.FORMATTER, "check": Category.TEST_BUILD}
PIP = {"install": Category.UPSTREAM_FETCH, "download": Category.UPSTREAM_FETCH}
APT = {"install": Category.UPSTREAM_FETCH, "update": Category.UPSTREAM_FETCH}
