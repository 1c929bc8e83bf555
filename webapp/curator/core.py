"""``Curator``: the stores of one data folder and every operation on them, each once."""

from __future__ import annotations

from ..settings import Settings
from .forgetting import Forgetting
from .household import Household
from .importing import Importing
from .merging import Merging
from .remembering import Remembering
from .reviewing import Reviewing
from .threads import Threads
from .undoing import Undoing
from .upkeep import Upkeep


class Curator(
    Undoing, Threads, Importing, Upkeep, Reviewing, Forgetting, Remembering, Merging, Household
):
    """Every operation on the memory of one data folder, with one policy whatever the door.

    ``actor`` is who acts (written in every history entry), ``via`` the door ("dashboard",
    "cli", "mcp", "library"); each operation takes its own ``actor`` when a door acts for
    several people (the dashboard behind Home Assistant). ``view`` is whose data it may see
    and change (``people.View``): EVERYONE for the household's curator (the command line, the
    dashboard standalone), one person's id for that person (theirs and the household's), None
    for the household's alone; ``within(view)`` gives the same curator kept to a view, and
    every operation of it refuses another person's memory, proposal or thread as unknown.
    Two curators of two data folders share nothing; the stores of one are built once and
    cached per file version.

    Each group of operations is a class of its own module, a method written once there
    (``Remembering`` in ``remembering``, ``Forgetting`` in ``forgetting``, ...), on
    ``CuratorBase`` (``base``: the stores, the view, what doors read); an operation that uses
    another group's inherits that group (``Undoing`` is ``Forgetting`` and ``Remembering``).
    ``tests/test_curator_methods.py`` checks that no operation is bound from elsewhere.
    """

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, actor: str = "library", via: str | None = None
    ) -> Curator:
        """The curator of the data folder ``settings`` name (read from the environment when
        None), acting as ``actor``. A Delete forever a killed process left half-way is
        finished first (``Forgetting.finish_interrupted``)."""
        curator = cls(settings or Settings.from_env(), actor=actor, via=via)
        curator.finish_interrupted()
        return curator
