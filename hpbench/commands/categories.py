"""The command categories of spec 004, in the order reports list them."""

from __future__ import annotations

import enum


class Category(enum.Enum):
    """What an invocation does; every invocation has exactly one."""

    FILE_READ = "file-read"
    SEARCH = "search"
    DISCOVERY = "discovery"
    CONTENT_DIFF = "content-diff"
    DIFF_CHECK = "diff-check"
    DIFF_METADATA = "diff-metadata"
    GIT_STATUS = "git-status"
    TEST_BUILD = "test-build"
    FORMATTER = "formatter"
    UPSTREAM_FETCH = "upstream-fetch"
    EDIT = "edit"
    OTHER = "other"


LOOP_CATEGORIES = (Category.FILE_READ, Category.SEARCH, Category.CONTENT_DIFF)
"""The categories whose path operands are parsed and can form same-path loops."""
