"""hpbench: does an edit-tool router make a coding agent better or cheaper?"""

from hpbench.errors import ContractError, HpbenchError, PrerequisiteError
from hpbench.findings import Finding

__version__ = "0.1.0"

__all__ = [
    "ContractError",
    "Finding",
    "HpbenchError",
    "PrerequisiteError",
    "__version__",
]
