"""``git``: one category per subcommand, and revision/path separation for content diffs.

``git diff`` decides which positionals are revisions by asking the repository;
the analysis cannot. Without ``--``, a positional that looks like a revision
(``HEAD~1``, ``a1b2c3d``, ``main``, ``A..B``, ``origin/x``) is taken as one; a
positional with a ``/`` or ``.`` is a path; anything else could be either and
is ambiguous.
"""

from __future__ import annotations

import posixpath
import re

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, path_operands
from hpbench.commands.operands import Operands
from hpbench.commands.options import OptionSpec, ParsedArgs, parse_args
from hpbench.commands.words import Word

_REVISION = re.compile(
    r"(?:HEAD|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD|CHERRY_PICK_HEAD|@)(?:[~^]\d*)*"
    r"|[0-9a-f]{7,40}(?:[~^]\d*)*"
    r"|(?![./]).*\.\..*"
    r"|.*@\{.*\}"
    r"|(?:origin|upstream)/\S+"
    r"|(?:main|master|trunk|develop)(?:[~^]\d*)*"
    r"|\S+[~^]\d*"
)
_METADATA_FLAGS = (
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--dirstat",
    "--raw",
    "--compact-summary",
    "--quiet",
    "--no-patch",
    "-s",
)
_DIFF = OptionSpec(short_values="SGO", long_values=frozenset({"--output"}))
_LOG = OptionSpec(
    short_values="SGOn",
    long_values=frozenset({"--author", "--grep", "--since", "--until", "--max-count", "--format"}),
)
_GREP = OptionSpec(short_values="efABCm", long_values=frozenset({"--max-depth", "--regexp"}))
_BLAME = OptionSpec(short_values="LS", long_values=frozenset({"--contents"}))
_FIXED = {
    "status": Category.GIT_STATUS,
    "fetch": Category.UPSTREAM_FETCH,
    "pull": Category.UPSTREAM_FETCH,
    "clone": Category.UPSTREAM_FETCH,
    "ls-remote": Category.UPSTREAM_FETCH,
    "submodule": Category.UPSTREAM_FETCH,
    "ls-files": Category.DISCOVERY,
    "ls-tree": Category.DISCOVERY,
    "apply": Category.EDIT,
    "am": Category.EDIT,
    "restore": Category.EDIT,
    "mv": Category.EDIT,
    "rm": Category.EDIT,
    "cat-file": Category.FILE_READ,
}


def _global_options(ctx: Context) -> tuple[Context, str | None, tuple[Word, ...]]:
    """Skip ``git``'s own options; ``-C DIR`` moves where the subcommand runs."""
    words = ctx.args
    cwd = ctx.cwd
    index = 0
    while index < len(words):
        text = words[index].text
        if text == "-C" and index + 1 < len(words):
            target = words[index + 1]
            cwd = posixpath.join(cwd, target.text) if cwd is not None and target.literal else None
            index += 2
        elif text in ("-c", "--git-dir", "--work-tree", "--namespace") and index + 1 < len(words):
            index += 2
        elif text.startswith("-"):
            index += 1
        else:
            moved = Context(ctx.name, words[index + 1 :], cwd, ctx.root, ctx.stdin_is_pipe, None)
            return moved, text, words[index + 1 :]
    return ctx, None, ()


def _is_revision(text: str) -> bool:
    return _REVISION.fullmatch(text) is not None


def _split_revisions(
    ctx: Context, args: ParsedArgs, *, first: int = 0
) -> tuple[list[str], Operands]:
    """Revisions and path operands among the positionals from index ``first``."""
    revisions: list[str] = []
    paths: list[Word] = []
    root_paths: list[Word] = []
    unknown: list[str] = []
    for index, word in enumerate(args.positionals[first:], start=first):
        text = word.text
        if index >= args.after_double_dash:
            paths.append(word)
        elif not word.literal:
            unknown.append(text)
        elif ":" in text and _is_revision(text.split(":", 1)[0] or "HEAD"):
            # REV:path names a blob by its path from the repository root.
            revision, _, path = text.partition(":")
            revisions.append(revision)
            if path.startswith("./"):
                paths.append(Word(path, literal=True))
            elif path:
                root_paths.append(Word(path, literal=True))
        elif _is_revision(text):
            revisions.append(text)
        elif "/" in text or "." in text:
            paths.append(word)
        else:
            unknown.append(text)
    operands = ctx.resolve_all(paths)
    if root_paths:
        at_root = Context(ctx.name, (), ".", ctx.root).resolve_all(root_paths)
        operands = Operands(
            paths=operands.paths + at_root.paths, ambiguous=operands.ambiguous + at_root.ambiguous
        )
    if unknown:
        operands = Operands(paths=operands.paths, ambiguous=operands.ambiguous + tuple(unknown))
    return revisions, operands


def _diff_category(args: ParsedArgs) -> Category:
    if args.has("--check"):
        return Category.DIFF_CHECK
    if args.has(*_METADATA_FLAGS) and not args.has("-p", "--patch", "-u"):
        return Category.DIFF_METADATA
    return Category.CONTENT_DIFF


def _diff(ctx: Context, sub_args: tuple[Word, ...]) -> Interpretation:
    args = parse_args(sub_args, _DIFF)
    category = _diff_category(args)
    if args.has("--no-index"):
        return Interpretation(category, ctx.resolve_all(list(args.positionals)))
    revisions, operands = _split_revisions(ctx, args)
    staged = args.has("--cached", "--staged")
    worktree = not staged and len(revisions) <= 1 and not any(".." in r for r in revisions)
    if worktree and not operands.paths and not operands.ambiguous:
        operands = Operands(workspace_wide=True)
    return Interpretation(category, operands)


def _show(ctx: Context, sub_args: tuple[Word, ...], log: bool = False) -> Interpretation:
    args = parse_args(sub_args, _LOG)
    if log and not args.has("-p", "--patch", "-u") and not args.has("--check", *_METADATA_FLAGS):
        # Plain ``git log`` lists commits; it shows neither content nor a diff.
        return Interpretation(Category.OTHER)
    category = _diff_category(args)
    _, operands = _split_revisions(ctx, args)
    return Interpretation(category, operands)


def _grep(ctx: Context, sub_args: tuple[Word, ...]) -> Interpretation:
    args = parse_args(sub_args, _GREP)
    first = 0 if args.has("-e", "--regexp", "-f") else 1
    _, operands = _split_revisions(ctx, args, first=first)
    if not operands.paths and not operands.ambiguous:
        return path_operands(
            ctx, Category.SEARCH, ParsedArgs((), frozenset(), (), 0), searches_cwd=True
        )
    return Interpretation(Category.SEARCH, operands)


def _blame(ctx: Context, sub_args: tuple[Word, ...]) -> Interpretation:
    args = parse_args(sub_args, _BLAME)
    _, operands = _split_revisions(ctx, args)
    return Interpretation(Category.FILE_READ, operands)


def interpret_git(ctx: Context) -> Interpretation:
    """Category and operands of a ``git …`` invocation."""
    moved, sub, sub_args = _global_options(ctx)
    if sub is None:
        return Interpretation(Category.OTHER)
    if sub in _FIXED:
        return Interpretation(_FIXED[sub])
    if sub in ("diff", "difftool"):
        return _diff(moved, sub_args)
    if sub == "show":
        return _show(moved, sub_args)
    if sub == "log":
        return _show(moved, sub_args, log=True)
    if sub == "grep":
        return _grep(moved, sub_args)
    if sub == "blame":
        return _blame(moved, sub_args)
    if sub == "stash" and sub_args and sub_args[0].text == "show":
        return _show(moved, sub_args[1:])
    if sub in ("stash", "checkout", "reset", "switch") and _rewrites_files(sub, sub_args):
        return Interpretation(Category.EDIT)
    return Interpretation(Category.OTHER)


def _rewrites_files(sub: str, sub_args: tuple[Word, ...]) -> bool:
    texts = [w.text for w in sub_args]
    if sub == "stash":
        return (
            not texts or texts[0] in ("pop", "apply", "push", "drop", "clear") or texts[0] == "-u"
        )
    if sub == "checkout":
        return "--" in texts or "." in texts
    if sub == "reset":
        return "--hard" in texts
    return False
