"""Every operation of the curator is a method written in a class body (issue #45): "go to
definition" on ``curator.remember`` lands in its body, and static tools (mypy, vulture, an
editor's signature help) see a method, not a module function bound as a class attribute."""

from __future__ import annotations

import inspect
import types
from typing import Any

from webapp.curator import Curator
from webapp.curator.base import CuratorBase


def _function(member: Any) -> types.FunctionType | None:
    """The function behind a class attribute (a method, a classmethod, a staticmethod, a
    property's getter), or None for data."""
    if isinstance(member, (classmethod, staticmethod)):
        member = member.__func__
    if isinstance(member, property):
        member = member.fget
    if isinstance(member, types.FunctionType):
        return member
    return None


def _bound_elsewhere(cls: type) -> list[str]:
    """The public callables of ``cls`` and its bases that were not written in the class body
    that holds them (a function of another module, or of another class, assigned as an
    attribute), with where each was written."""
    found = []
    for holder in cls.__mro__:
        if holder is object:
            continue
        for name, member in vars(holder).items():
            if name.startswith("_"):
                continue
            function = _function(member)
            if function is None:
                if callable(member):
                    found.append(f"{holder.__name__}.{name}: {member!r}")
                continue
            written_here = function.__qualname__ == f"{holder.__qualname__}.{function.__name__}"
            if not written_here or function.__module__ != holder.__module__:
                where = f"{function.__module__}.{function.__qualname__}"
                found.append(f"{holder.__name__}.{name} is {where}")
    return found


def test_every_operation_of_the_curator_is_a_method_written_in_its_class() -> None:
    assert _bound_elsewhere(Curator) == []


def test_the_operations_come_from_their_groups_on_the_base() -> None:
    # Every group of operations is a class on CuratorBase, each operation defined once.
    groups = [c for c in Curator.__mro__ if c not in (Curator, CuratorBase, object)]
    assert groups and all(issubclass(group, CuratorBase) for group in groups)
    defined: dict[str, str] = {}
    for group in groups:
        for name, member in vars(group).items():
            if not name.startswith("_") and _function(member) is not None:
                assert name not in defined, f"{name} in both {defined[name]} and {group.__name__}"
                defined[name] = group.__name__
    for operation in ("remember", "forget", "approve", "add_person", "stats", "extract"):
        assert operation in defined


def test_a_module_function_bound_as_an_operation_is_found() -> None:
    # The check itself: the facade of before (a module function taking the curator first,
    # attached as a class attribute) is caught, and so is a lambda or a builtin.
    def remember(curator: Curator, content: str) -> None:
        """A module function of the old facade."""

    facade = type("Facade", (Curator,), {"remember": remember, "__module__": Curator.__module__})
    assert _bound_elsewhere(facade) == [f"Facade.remember is {__name__}.{remember.__qualname__}"]
    borrowed = type("Borrowed", (Curator,), {"pending": len, "__module__": Curator.__module__})
    assert _bound_elsewhere(borrowed) == [f"Borrowed.pending: {len!r}"]
    signature = inspect.signature(Curator.remember)
    assert next(iter(signature.parameters)) == "self"


# The operations whose subject is two values: the two memories a merge makes one, an identity
# (its kind and value). Every other operation takes one subject at most by position.
TWO_PART_SUBJECTS = {"merge", "note_identity", "person_from"}


def test_past_its_subject_an_operation_takes_keywords_only() -> None:
    positional = {}
    for name in dir(Curator):
        member = inspect.getattr_static(Curator, name)
        function = _function(member)
        if name.startswith("_") or function is None or isinstance(member, property):
            continue
        parameters = list(inspect.signature(function).parameters.values())[1:]  # self, cls
        taken = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
        if len(taken) > (2 if name in TWO_PART_SUBJECTS else 1):
            positional[name] = taken
    assert positional == {}
