"""A simple command of a script, with the context that decides its operands."""

from __future__ import annotations

import posixpath

import attrs

from hpbench.commands.words import Word


@attrs.frozen
class SimpleCommand:
    """One simple command of a script, with the context that decides its operands.

    Attributes:
        words: the command name and its arguments (wrappers such as ``env`` kept).
        writes: files its output is redirected into (``/dev/null`` and fd copies left out).
        stdin_file: the file its stdin is redirected from, if any.
        stdin_is_pipe: its stdin is a stream, not a file: it is not the first
            command of a pipeline, or it reads a heredoc or here-string.
        cwd: where it runs relative to where the script started (``.`` unless a
            ``cd`` moved it); ``None`` when a ``cd`` went somewhere unknown.
        ambiguous: it lies in or beside a part of the script that did not parse,
            or in a script that could not be unwrapped.
    """

    words: tuple[Word, ...]
    writes: tuple[Word, ...] = ()
    stdin_file: Word | None = None
    stdin_is_pipe: bool = False
    cwd: str | None = "."
    ambiguous: bool = False


def cwd_after(words: tuple[Word, ...], cwd: str | None) -> str | None:
    """Where later commands run after ``words`` ran in ``cwd`` (``None``: unknown).

    Only ``cd``/``pushd`` to one literal directory is followed; ``cd`` alone
    (home), ``cd -``, ``popd`` and ``cd $X`` make the directory unknown.
    """
    if not words or words[0].text not in ("cd", "pushd", "popd"):
        return cwd
    target = words[1] if len(words) == 2 else None
    if cwd is None or target is None or not target.literal or words[0].text == "popd":
        return None
    if target.text in ("-", ""):
        return None
    return posixpath.normpath(posixpath.join(cwd, target.text))
