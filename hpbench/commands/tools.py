"""How each known command is categorised and which of its arguments are paths.

Unknown commands are ``other``. The option tables list only the options that
take a value, because those are what would otherwise be mistaken for paths.
"""

from __future__ import annotations

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, Interpreter
from hpbench.commands.operands import supported_globs
from hpbench.commands.options import OptionSpec, ParsedArgs, parse_args
from hpbench.commands.words import Word

_HERE = Word(".", literal=True)


def _operands(
    ctx: Context,
    category: Category,
    args: ParsedArgs,
    *,
    leading: int = 0,
    pattern_options: tuple[str, ...] = (),
    searches_cwd: bool = False,
    globs: tuple[str, ...] = (),
) -> Interpretation:
    """Paths are the positionals after ``leading`` pattern/script positionals.

    With no path operand the tool reads its stdin (a redirected file, if any)
    or, when ``searches_cwd`` and stdin is not a pipe, searches the directory it runs in.
    """
    positionals = list(args.positionals)
    if leading and not args.has(*pattern_options):
        positionals = positionals[leading:]
    paths = [word for word in positionals if word.text != "-"]
    if not paths:
        if ctx.stdin_file is not None:
            paths = [ctx.stdin_file]
        elif searches_cwd and not ctx.stdin_is_pipe:
            paths = [_HERE]
    return Interpretation(category, ctx.resolve_all(paths, globs))


def _reader(
    spec: OptionSpec, *, leading: int = 0, pattern_options: tuple[str, ...] = ()
) -> Interpreter:
    def interpret(ctx: Context) -> Interpretation:
        args = parse_args(ctx.args, spec)
        return _operands(
            ctx, Category.FILE_READ, args, leading=leading, pattern_options=pattern_options
        )

    return interpret


def _fixed(category: Category) -> Interpreter:
    def interpret(_ctx: Context) -> Interpretation:
        return Interpretation(category)

    return interpret


# ---- file reads ---------------------------------------------------------------------------

_HEAD_TAIL = OptionSpec(
    short_values="ncs",
    long_values=frozenset({"--lines", "--bytes", "--pid", "--sleep-interval"}),
    numeric_flags=True,
)
_SED = OptionSpec(
    short_values="efl",
    long_values=frozenset({"--expression", "--file", "--line-length"}),
)
_AWK = OptionSpec(
    short_values="Fvf", long_values=frozenset({"--field-separator", "--assign", "--file"})
)


def _sed(ctx: Context) -> Interpretation:
    if any(w.text.startswith(("-i", "--in-place")) or _cluster_has(w, "i") for w in ctx.args):
        return Interpretation(Category.EDIT)
    args = parse_args(ctx.args, _SED)
    return _operands(
        ctx,
        Category.FILE_READ,
        args,
        leading=1,
        pattern_options=("-e", "--expression", "-f", "--file"),
    )


def _cluster_has(word: Word, letter: str) -> bool:
    """``-ni`` style clusters: is ``letter`` one of the flags (before any value letter)?"""
    text = word.text
    if not word.literal or not text.startswith("-") or text.startswith("--"):
        return False
    for char in text[1:]:
        if char == letter:
            return True
        if char in "efl":
            return False
    return False


def _awk(ctx: Context) -> Interpretation:
    texts = [w.text for w in ctx.args]
    if "-i" in texts and "inplace" in texts:
        return Interpretation(Category.EDIT)
    args = parse_args(ctx.args, _AWK)
    # Positional ``name=value`` are variable assignments, not files.
    kept = tuple(w for w in args.positionals if not _is_assignment(w.text))
    filtered = ParsedArgs(args.options, args.flags, kept, len(kept))
    return _operands(ctx, Category.FILE_READ, filtered, leading=1, pattern_options=("-f", "--file"))


def _is_assignment(text: str) -> bool:
    name, equals, _ = text.partition("=")
    return bool(equals) and name.isidentifier()


def _perl(ctx: Context) -> Interpretation:
    for word in ctx.args:
        text = word.text
        if text.startswith("-") and not text.startswith("--") and "i" in text[1:].split("e")[0]:
            return Interpretation(Category.EDIT)
    return Interpretation(Category.OTHER)


def _jq(ctx: Context) -> Interpretation:
    words = list(ctx.args)
    kept: list[Word] = []
    index = 0
    two_values = {"--arg", "--argjson", "--slurpfile", "--rawfile"}
    while index < len(words):
        text = words[index].text
        if text in two_values:
            index += 3
            continue
        if text in ("-f", "--from-file", "--indent", "--tab-width"):
            index += 2
            continue
        kept.append(words[index])
        index += 1
    args = parse_args(tuple(kept), OptionSpec())
    return _operands(ctx, Category.FILE_READ, args, leading=1, pattern_options=())


# ---- searches ----------------------------------------------------------------------------

_GREP = OptionSpec(
    short_values="efmABCdD",
    long_values=frozenset(
        {
            "--regexp",
            "--file",
            "--max-count",
            "--after-context",
            "--before-context",
            "--context",
            "--include",
            "--exclude",
            "--exclude-dir",
            "--exclude-from",
            "--label",
            "--binary-files",
            "--directories",
            "--devices",
            "--group-separator",
        }
    ),
)
_RG = OptionSpec(
    short_values="ABCeEfgjmMrtTd",
    long_values=frozenset(
        {
            "--after-context",
            "--before-context",
            "--context",
            "--regexp",
            "--encoding",
            "--file",
            "--glob",
            "--iglob",
            "--threads",
            "--max-count",
            "--max-columns",
            "--replace",
            "--type",
            "--type-not",
            "--max-depth",
            "--maxdepth",
            "--color",
            "--colors",
            "--sort",
            "--sortr",
            "--type-add",
            "--type-clear",
            "--max-filesize",
            "--pre",
            "--pre-glob",
            "--path-separator",
            "--ignore-file",
            "--engine",
            "--field-match-separator",
            "--field-context-separator",
            "--context-separator",
            "--dfa-size-limit",
            "--regex-size-limit",
            "--hostname-bin",
            "--hyperlink-format",
            "--generate",
        }
    ),
)
_AG = OptionSpec(short_values="ABCGmg", long_values=frozenset({"--ignore", "--type", "--depth"}))


def _grep(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _GREP)
    recursive = (
        args.has("-r", "-R", "--recursive", "--dereference-recursive")
        or any(v.text == "recurse" for v in args.values("-d", "--directories"))
        or ctx.name in ("rgrep",)
    )
    return _operands(
        ctx,
        Category.SEARCH,
        args,
        leading=1,
        pattern_options=("-e", "--regexp", "-f", "--file"),
        searches_cwd=recursive,
    )


def _ripgrep(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _RG)
    if args.has("--files"):
        return Interpretation(Category.DISCOVERY)
    if args.has("--type-list", "--help", "-h", "--version", "-V", "--generate"):
        return Interpretation(Category.OTHER)
    return _operands(
        ctx,
        Category.SEARCH,
        args,
        leading=1,
        pattern_options=("-e", "--regexp", "-f", "--file"),
        searches_cwd=True,
        globs=supported_globs(args.values("-g", "--glob")),
    )


def _silver(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _AG)
    if args.has("-g", "-l", "--files-with-matches", "-f") and not args.positionals:
        return Interpretation(Category.DISCOVERY)
    return _operands(ctx, Category.SEARCH, args, leading=1, searches_cwd=True)


# ---- everything else ---------------------------------------------------------------------


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


def _go(ctx: Context) -> Interpretation:
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


def _python(ctx: Context) -> Interpretation:
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


def _subcommand(table: dict[str, Category], default: Category = Category.OTHER) -> Interpreter:
    def interpret(ctx: Context) -> Interpretation:
        for word in ctx.args:
            if not word.text.startswith("-"):
                return Interpretation(table.get(word.text, default))
        return Interpretation(default)

    return interpret


_JS_PACKAGES = {
    "test": Category.TEST_BUILD,
    "run": Category.TEST_BUILD,
    "build": Category.TEST_BUILD,
    "install": Category.UPSTREAM_FETCH,
    "i": Category.UPSTREAM_FETCH,
    "ci": Category.UPSTREAM_FETCH,
    "add": Category.UPSTREAM_FETCH,
}
_CARGO = {
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
_RUFF = {"format": Category.FORMATTER, "check": Category.TEST_BUILD}
_PIP = {"install": Category.UPSTREAM_FETCH, "download": Category.UPSTREAM_FETCH}
_APT = {"install": Category.UPSTREAM_FETCH, "update": Category.UPSTREAM_FETCH}

_READ_PLAIN = OptionSpec()

TOOLS: dict[str, Interpreter] = {
    # file reads
    "cat": _reader(_READ_PLAIN),
    "tac": _reader(_READ_PLAIN),
    "head": _reader(_HEAD_TAIL),
    "tail": _reader(_HEAD_TAIL),
    "nl": _reader(OptionSpec(short_values="bdfhilnsvw")),
    "less": _reader(OptionSpec(short_values="bhjkoOpPtTxyz")),
    "more": _reader(OptionSpec(short_values="n")),
    "bat": _reader(
        OptionSpec(
            short_values="lHrmp",
            long_values=frozenset(
                {"--line-range", "--language", "--highlight-line", "--style", "--theme"}
            ),
        )
    ),
    "batcat": _reader(
        OptionSpec(
            short_values="lHrmp",
            long_values=frozenset(
                {"--line-range", "--language", "--highlight-line", "--style", "--theme"}
            ),
        )
    ),
    "wc": _reader(_READ_PLAIN),
    "od": _reader(OptionSpec(short_values="AjNtw")),
    "xxd": _reader(OptionSpec(short_values="cglos")),
    "hexdump": _reader(OptionSpec(short_values="enfs")),
    "strings": _reader(OptionSpec(short_values="ntTe")),
    "cut": _reader(
        OptionSpec(
            short_values="bcdf",
            long_values=frozenset({"--delimiter", "--fields", "--bytes", "--characters"}),
        )
    ),
    "sort": _reader(
        OptionSpec(
            short_values="kotST", long_values=frozenset({"--key", "--output", "--field-separator"})
        )
    ),
    "uniq": _reader(OptionSpec(short_values="fsw")),
    "diff": _reader(
        OptionSpec(
            short_values="UCLIxX", long_values=frozenset({"--label", "--unified", "--context"})
        )
    ),
    "cmp": _reader(OptionSpec(short_values="inI")),
    "md5sum": _reader(_READ_PLAIN),
    "sha256sum": _reader(_READ_PLAIN),
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "jq": _jq,
    # searches
    "grep": _grep,
    "egrep": _grep,
    "fgrep": _grep,
    "zgrep": _grep,
    "rgrep": _grep,
    "rg": _ripgrep,
    "hgrep": _ripgrep,
    "ag": _silver,
    "ack": _silver,
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
    "go": _go,
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
    "cargo": _subcommand(_CARGO),
    "npm": _subcommand(_JS_PACKAGES),
    "yarn": _subcommand(_JS_PACKAGES, default=Category.UPSTREAM_FETCH),
    "pnpm": _subcommand(_JS_PACKAGES),
    "ruff": _subcommand(_RUFF),
    "python": _python,
    "python3": _python,
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
    "pip": _subcommand(_PIP),
    "pip3": _subcommand(_PIP),
    "apt": _subcommand(_APT),
    "apt-get": _subcommand(_APT),
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
