"""Which interpreter each known command name has: the one table of tools.

An interpreter gives an invocation its category and, for reads and searches,
its path operands (:mod:`~hpbench.commands.reads`,
:mod:`~hpbench.commands.searches`, :mod:`~hpbench.commands.toolchains`; ``git``
is :mod:`~hpbench.commands.git`). Unknown commands are ``other``. The option
tables list only the options that take a value, because those are what would
otherwise be mistaken for paths.
"""

from __future__ import annotations

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, Interpreter
from hpbench.commands.options import OptionSpec, parse_args
from hpbench.commands.reads import HEAD_TAIL, READ_PLAIN, awk, jq, reader, sed
from hpbench.commands.searches import grep, ripgrep, silver
from hpbench.commands.toolchains import (
    APT,
    CARGO,
    JS_PACKAGES,
    PIP,
    RUFF,
    go,
    python,
    subcommand,
)

_BAT = OptionSpec(
    short_values="lHrmp",
    long_values=frozenset({"--line-range", "--language", "--highlight-line", "--style", "--theme"}),
)


def _fixed(category: Category) -> Interpreter:
    def interpret(_ctx: Context) -> Interpretation:
        return Interpretation(category)

    return interpret


def _perl(ctx: Context) -> Interpretation:
    for word in ctx.args:
        text = word.text
        if text.startswith("-") and not text.startswith("--") and "i" in text[1:].split("e")[0]:
            return Interpretation(Category.EDIT)
    return Interpretation(Category.OTHER)


def _tee(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, OptionSpec())
    if ctx.writes_into_workspace(args.positionals):
        return Interpretation(Category.EDIT)
    return Interpretation(Category.OTHER)


def _find(ctx: Context) -> Interpretation:
    texts = {w.text for w in ctx.args}
    if "-delete" in texts:
        return Interpretation(Category.EDIT)
    return Interpretation(Category.DISCOVERY)


TOOLS: dict[str, Interpreter] = {
    # file reads
    "cat": reader(READ_PLAIN),
    "tac": reader(READ_PLAIN),
    "head": reader(HEAD_TAIL),
    "tail": reader(HEAD_TAIL),
    "nl": reader(OptionSpec(short_values="bdfhilnsvw")),
    "less": reader(OptionSpec(short_values="bhjkoOpPtTxyz")),
    "more": reader(OptionSpec(short_values="n")),
    "bat": reader(_BAT),
    "batcat": reader(_BAT),
    "wc": reader(READ_PLAIN),
    "od": reader(OptionSpec(short_values="AjNtw")),
    "xxd": reader(OptionSpec(short_values="cglos")),
    "hexdump": reader(OptionSpec(short_values="enfs")),
    "strings": reader(OptionSpec(short_values="ntTe")),
    "cut": reader(
        OptionSpec(
            short_values="bcdf",
            long_values=frozenset({"--delimiter", "--fields", "--bytes", "--characters"}),
        )
    ),
    "sort": reader(
        OptionSpec(
            short_values="kotST", long_values=frozenset({"--key", "--output", "--field-separator"})
        )
    ),
    "uniq": reader(OptionSpec(short_values="fsw")),
    "diff": reader(
        OptionSpec(
            short_values="UCLIxX", long_values=frozenset({"--label", "--unified", "--context"})
        )
    ),
    "cmp": reader(OptionSpec(short_values="inI")),
    "md5sum": reader(READ_PLAIN),
    "sha256sum": reader(READ_PLAIN),
    "sed": sed,
    "awk": awk,
    "gawk": awk,
    "mawk": awk,
    "jq": jq,
    # searches
    "grep": grep,
    "egrep": grep,
    "fgrep": grep,
    "zgrep": grep,
    "rgrep": grep,
    "rg": ripgrep,
    "hgrep": ripgrep,
    "ag": silver,
    "ack": silver,
    # discovery
    "ls": _fixed(Category.DISCOVERY),
    "ll": _fixed(Category.DISCOVERY),
    "tree": _fixed(Category.DISCOVERY),
    "find": _find,
    "fd": _fixed(Category.DISCOVERY),
    "fdfind": _fixed(Category.DISCOVERY),
    "du": _fixed(Category.DISCOVERY),
    "stat": _fixed(Category.DISCOVERY),
    "file": _fixed(Category.DISCOVERY),
    "locate": _fixed(Category.DISCOVERY),
    "realpath": _fixed(Category.DISCOVERY),
    "readlink": _fixed(Category.DISCOVERY),
    # tests and builds
    "go": go,
    "make": _fixed(Category.TEST_BUILD),
    "gmake": _fixed(Category.TEST_BUILD),
    "pytest": _fixed(Category.TEST_BUILD),
    "py.test": _fixed(Category.TEST_BUILD),
    "tox": _fixed(Category.TEST_BUILD),
    "nox": _fixed(Category.TEST_BUILD),
    "mypy": _fixed(Category.TEST_BUILD),
    "ctest": _fixed(Category.TEST_BUILD),
    "cmake": _fixed(Category.TEST_BUILD),
    "ninja": _fixed(Category.TEST_BUILD),
    "bazel": _fixed(Category.TEST_BUILD),
    "bazelisk": _fixed(Category.TEST_BUILD),
    "mvn": _fixed(Category.TEST_BUILD),
    "gradle": _fixed(Category.TEST_BUILD),
    "gradlew": _fixed(Category.TEST_BUILD),
    "staticcheck": _fixed(Category.TEST_BUILD),
    "golangci-lint": _fixed(Category.TEST_BUILD),
    "jest": _fixed(Category.TEST_BUILD),
    "vitest": _fixed(Category.TEST_BUILD),
    "tsc": _fixed(Category.TEST_BUILD),
    "cargo": subcommand(CARGO),
    "npm": subcommand(JS_PACKAGES),
    "yarn": subcommand(JS_PACKAGES, default=Category.UPSTREAM_FETCH),
    "pnpm": subcommand(JS_PACKAGES),
    "ruff": subcommand(RUFF),
    "python": python,
    "python3": python,
    # formatters
    "gofmt": _fixed(Category.FORMATTER),
    "goimports": _fixed(Category.FORMATTER),
    "gofumpt": _fixed(Category.FORMATTER),
    "black": _fixed(Category.FORMATTER),
    "isort": _fixed(Category.FORMATTER),
    "prettier": _fixed(Category.FORMATTER),
    "rustfmt": _fixed(Category.FORMATTER),
    "clang-format": _fixed(Category.FORMATTER),
    "shfmt": _fixed(Category.FORMATTER),
    "autopep8": _fixed(Category.FORMATTER),
    "yapf": _fixed(Category.FORMATTER),
    # upstream fetches
    "curl": _fixed(Category.UPSTREAM_FETCH),
    "wget": _fixed(Category.UPSTREAM_FETCH),
    "pip": subcommand(PIP),
    "pip3": subcommand(PIP),
    "apt": subcommand(APT),
    "apt-get": subcommand(APT),
    "gh": _fixed(Category.UPSTREAM_FETCH),
    # edits
    "apply_patch": _fixed(Category.EDIT),
    "applypatch": _fixed(Category.EDIT),
    "patch": _fixed(Category.EDIT),
    "perl": _perl,
    "tee": _tee,
    "rm": _fixed(Category.EDIT),
    "mv": _fixed(Category.EDIT),
    "cp": _fixed(Category.EDIT),
    "touch": _fixed(Category.EDIT),
    "mkdir": _fixed(Category.EDIT),
    "rmdir": _fixed(Category.EDIT),
    "ln": _fixed(Category.EDIT),
    "truncate": _fixed(Category.EDIT),
    "chmod": _fixed(Category.EDIT),
}
