"""The curator: every operation a person or an assistant does on the memory of one data folder,
each written once, with one policy (secrets, duplicates, people, versions, tombstones).

The doors (the dashboard, the command line, the MCP server, host programs) parse their input,
call one operation and present its result in their own words; none of them writes a store
itself. ``Curator.from_settings(settings)`` builds it for one data folder.
"""

from .core import Curator
from .errors import SimilarMemoryError, UnknownPersonError
from .remembering import SAID, Said
from .results import Forgetting, Revision

__all__ = [
    "SAID",
    "Curator",
    "Forgetting",
    "Revision",
    "Said",
    "SimilarMemoryError",
    "UnknownPersonError",
]
