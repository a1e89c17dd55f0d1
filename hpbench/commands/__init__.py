"""Command analysis: parsing, classifying and finding loops in what the agent ran."""

from hpbench.commands.analysis import (
    CategoryCount,
    CommandAnalysis,
    Invocation,
    PathLoop,
    WorkspaceDiffLoop,
    analyze_events,
    analyze_file,
    analyze_steps,
)
from hpbench.commands.categories import LOOP_CATEGORIES, Category
from hpbench.commands.classify import Classified, classify
from hpbench.commands.contract import SCHEMA, from_json, to_json
from hpbench.commands.findings import Observation, observations
from hpbench.commands.operands import Operands, covers
from hpbench.commands.shell import split_command
from hpbench.commands.simple import SimpleCommand
from hpbench.commands.words import Word

__all__ = [
    "LOOP_CATEGORIES",
    "SCHEMA",
    "Category",
    "CategoryCount",
    "Classified",
    "CommandAnalysis",
    "Invocation",
    "Observation",
    "Operands",
    "PathLoop",
    "SimpleCommand",
    "Word",
    "WorkspaceDiffLoop",
    "analyze_events",
    "analyze_file",
    "analyze_steps",
    "classify",
    "covers",
    "from_json",
    "observations",
    "split_command",
    "to_json",
]
