"""``memories``, ``people``, ``delete`` and ``prompt``: the household's memories and people, from
the command line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..curator import SAID, Curator
from ..curator.results import MARKER
from ..mcp.words import until_phrase
from ..prompts import compose_prompt
from ..settings import Settings
from ..stores import Memory, NotFoundError, PeopleStore
from ..stores.readers import PeopleReader
from .common import (
    conversation_store,
    curator_of,
    data_dir_option,
    friendly_errors,
    input_errors,
    load_settings,
    memory_store,
)


def people_store(settings: Settings) -> PeopleReader:
    """The household's people as the settings describe them."""
    return PeopleStore.from_settings(settings, actor="cli")


def person_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--person NAME`` to a command."""
    return click.option(
        "--person",
        default=None,
        metavar="NAME",
        help="A person's name (a first name does when nobody else goes by it), id or identity: "
        "act within their view (their own memories "
        "and the household's). Without it: the household (add) or everyone (list, search).",
    )(func)


def _curator(data_dir: str | None) -> Curator:
    """The curator of the data folder the command names, acting for the command line."""
    return Curator.from_settings(load_settings(data_dir), actor="cli")


def _person_id(settings: Settings, ref: str | None, *, reading: bool = False) -> str | None:
    """The id of the person ``--person`` names (``Curator.person``: a name nobody has is
    recorded on the People page and refused, exit status 2 — read commands read the
    household's instead)."""
    return Curator.from_settings(settings, actor="cli").person(ref, reading=reading)


def _whose(names: dict[str, str], memory: Memory) -> str:
    return "household" if memory.person is None else names.get(memory.person, memory.person)


@click.command(name="delete")
@click.argument("memory_id")
@click.option(
    "--dont-propose-again",
    "no_propose",
    is_flag=True,
    help="Drop a later proposal of the same fact instead of showing it in Review.",
)
@click.option(
    "--forever",
    is_flag=True,
    help="Remove its words from every file (history too); keep only a fingerprint that "
    "recognises the fact. Also for a memory deleted before.",
)
@data_dir_option
@friendly_errors
def delete_memory(memory_id: str, no_propose: bool, forever: bool, data_dir: str | None) -> None:
    """Delete a memory, remembering that it was deleted (a later proposal of the fact is marked
    in Review); the dashboard's Recently deleted can bring it back unless --forever."""
    try:
        done = curator_of(data_dir).forget(
            memory_id, dont_propose_again=no_propose, forever=forever
        )
    except NotFoundError:
        click.echo(f"Error: No memory with id {memory_id!r}. [memory_gone]", err=True)
        sys.exit(1)
    if done.memory is not None:
        click.echo(f"Deleted [{done.memory.id}] {done.memory.content}")
    if forever:
        if done.forever is None:
            click.echo(f"Error: No deleted memory with id {memory_id!r}.", err=True)
            sys.exit(1)
        click.echo(
            f"Deleted forever: its words are gone from {done.forever.history_entries} history "
            f"entries, {done.forever.review_items} review items and {done.forever.vectors} "
            "vectors; a fingerprint still recognises it."
            + (
                f" {done.forever.messages} conversation message(s) now say {MARKER} in their place."
                if done.forever.messages
                else ""
            )
        )
    if no_propose:
        click.echo("It will not be proposed again.")


@click.group()
def people() -> None:
    """The people of the household and the identities that map to them."""


@people.command(name="list")
@data_dir_option
@friendly_errors
def list_people(data_dir: str | None) -> None:
    """Each person with their id and identities, then the identities seen that map to nobody."""
    store = people_store(load_settings(data_dir))
    everyone = store.people()
    if not everyone:
        click.echo("No people yet: every memory is the household's.")
    for person in everyone:
        identities = ", ".join(f"{i.kind}:{i.value}" for i in person.identities)
        click.echo(f"[{person.id}] {person.name}" + (f"  ({identities})" if identities else ""))
    for identity in store.unlinked():
        label = f" ({identity.label})" if identity.label else ""
        click.echo(f"unlinked {identity.kind}:{identity.value}{label}")


@people.command(name="add")
@click.argument("name")
@click.option(
    "--identity",
    "identities",
    multiple=True,
    metavar="KIND:VALUE",
    help="An identity of theirs: ha:<user id>, slack:<user id> or name:<name> (repeatable).",
)
@data_dir_option
@friendly_errors
@input_errors
def add_person(name: str, identities: tuple[str, ...], data_dir: str | None) -> None:
    """Add a person to the household (an unlinked identity given here becomes theirs)."""
    household = Curator.from_settings(load_settings(data_dir), actor="cli")
    pairs = tuple(tuple(item.split(":", 1)) if ":" in item else ("", item) for item in identities)
    if any(kind == "" for kind, _ in pairs):
        click.echo("Error: an identity is KIND:VALUE, e.g. slack:U123.", err=True)
        sys.exit(2)
    person = household.add_person(name, identities=tuple((k, v) for k, v in pairs))
    click.echo(f"Added [{person.id}] {person.name}")


@people.command(name="new")
@click.argument("kind")
@click.argument("value")
@click.option("--name", default=None, help="Their name (default: what the identity was seen as).")
@data_dir_option
@friendly_errors
@input_errors
def new_person(kind: str, value: str, name: str | None, data_dir: str | None) -> None:
    """Make a new person of an identity seen (``people list`` shows the unlinked ones)."""
    person = _curator(data_dir).person_from(kind, value, name=name)
    click.echo(f"Added [{person.id}] {person.name}")


@people.command(name="rename")
@click.argument("person_id")
@click.argument("name")
@data_dir_option
@friendly_errors
@input_errors
def rename_person(person_id: str, name: str, data_dir: str | None) -> None:
    """Give a person another display name."""
    person = _curator(data_dir).rename_person(person_id, name=name)
    click.echo(f"Renamed [{person.id}] {person.name}")


@people.command(name="link")
@click.argument("person_id")
@click.argument("kind")
@click.argument("value")
@data_dir_option
@friendly_errors
@input_errors
def link_identity(person_id: str, kind: str, value: str, data_dir: str | None) -> None:
    """Map an identity (ha, slack or name, and its value) to a person."""
    person = _curator(data_dir).link_identity(person_id, kind=kind, value=value)
    click.echo(f"Linked {kind}:{value} to [{person.id}] {person.name}")


@people.command(name="unlink")
@click.argument("person_id")
@click.argument("kind")
@click.argument("value")
@data_dir_option
@friendly_errors
@input_errors
def unlink_identity(person_id: str, kind: str, value: str, data_dir: str | None) -> None:
    """Take an identity from a person (it is offered again as unlinked)."""
    person = _curator(data_dir).unlink_identity(person_id, kind=kind, value=value)
    click.echo(f"Unlinked {kind}:{value} from [{person.id}] {person.name}")


@people.command(name="remove")
@click.argument("person_id")
@data_dir_option
@friendly_errors
@input_errors
def remove_person(person_id: str, data_dir: str | None) -> None:
    """Take a person off the household (their identities are offered again as unlinked);
    refused while they own private memories or proposals waiting in Review: move or forget
    those first. ``people restore`` undoes it."""
    person = _curator(data_dir).remove_person(person_id)
    click.echo(
        f"Removed [{person.id}] {person.name}; undo with: memory-curator people restore {person.id}"
    )


@people.command(name="restore")
@click.argument("person_id")
@data_dir_option
@friendly_errors
@input_errors
def restore_person(person_id: str, data_dir: str | None) -> None:
    """Bring back a person ``people remove`` took off, with their name and identities."""
    person = _curator(data_dir).restore_person(person_id)
    click.echo(f"Restored [{person.id}] {person.name}")


@click.group()
def memories() -> None:
    """Add, list and search memories from the command line."""


@memories.command(name="add")
@click.argument("content")
@click.option("--category", default="general", show_default=True)
@click.option("--confirm-secret", is_flag=True, help="Keep it although it holds a secret.")
@click.option(
    "--add-similar", is_flag=True, help="Add it although a memory says it in other words."
)
@click.option(
    "--no-expiry",
    is_flag=True,
    help='Keep it for good although its words state an end ("until Friday").',
)
@person_option
@data_dir_option
@friendly_errors
@input_errors
def add_memory(
    content: str,
    category: str,
    confirm_secret: bool,
    add_similar: bool,
    no_expiry: bool,
    person: str | None,
    data_dir: str | None,
) -> None:
    """Remember a fact: the household's, or with --person that person's. A fact whose words
    state an end ("Is in Tokyo until Friday") expires then, in the household's timezone.
    Refused (exit status 2) when it is kept already, in these or other words, or holds a
    secret."""
    curator = curator_of(data_dir)
    memory = curator.remember(
        content,
        category=category,
        person=curator.person(person),
        confirm_secret=confirm_secret,
        allow_similar=add_similar,
        expires_at=None if no_expiry else SAID,
    )
    names = curator.people.names()
    click.echo(
        f"Added [{memory.id}] ({memory.category}) {memory.content} — {_whose(names, memory)}"
        f"{until_phrase(memory)}"
    )


@memories.command(name="update")
@click.argument("memory_id")
@click.argument("content")
@click.option("--category", default=None, help="A new category (default: unchanged).")
@click.option(
    "--version",
    "expected",
    default=None,
    help="The version you saw (`memories list --versions`): refused if it changed since.",
)
@click.option("--confirm-secret", is_flag=True, help="Keep it although it holds a secret.")
@data_dir_option
@friendly_errors
@input_errors
def update_memory(
    memory_id: str,
    content: str,
    category: str | None,
    expected: str | None,
    confirm_secret: bool,
    data_dir: str | None,
) -> None:
    """Change a memory's words (and category); new words that state an end ("until Sunday")
    set it, others keep the expiry as it was; a change made since --version is never
    overwritten (exit status 2)."""
    revision = curator_of(data_dir).revise(
        memory_id,
        content=content,
        category=category,
        expected=expected,
        confirm_secret=confirm_secret,
    )
    memory = revision.after
    click.echo(f"Updated [{memory.id}] ({memory.category}) {memory.content}{until_phrase(memory)}")


def _print_memories(settings: Settings, found: list[Memory], versions: bool = False) -> None:
    names = people_store(settings).names()
    for memory in found:
        version = f" version {memory.version}" if versions else ""
        click.echo(
            f"[{memory.id}]{version} ({memory.category}) {memory.content} — {_whose(names, memory)}"
        )


versions_option = click.option(
    "--versions",
    is_flag=True,
    help="Show each memory's version, for `memories update --version`.",
)


@memories.command(name="list")
@person_option
@versions_option
@data_dir_option
@friendly_errors
def list_memories(person: str | None, versions: bool, data_dir: str | None) -> None:
    """Every memory and whose it is; with --person, that person's and the household's."""
    settings = load_settings(data_dir)
    viewer = _person_id(settings, person, reading=True)
    _print_memories(settings, memory_store(settings).get_all(person=viewer), versions)


@memories.command(name="search")
@click.argument("keyword")
@person_option
@versions_option
@data_dir_option
@friendly_errors
def search_memories(keyword: str, person: str | None, versions: bool, data_dir: str | None) -> None:
    """Memories holding every word of KEYWORD; with --person, within their view."""
    settings = load_settings(data_dir)
    viewer = _person_id(settings, person, reading=True)
    found = memory_store(settings).search(keyword, person=viewer)
    _print_memories(settings, found, versions)


@click.command()
@click.argument("message")
@click.option("--conversation", default=None, help="A conversation's key: its history goes in.")
@person_option
@click.option(
    "--household",
    is_flag=True,
    help="The prompt of an unknown speaker (a shared room): the household's memories only.",
)
@data_dir_option
@friendly_errors
def prompt(
    message: str,
    conversation: str | None,
    person: str | None,
    household: bool,
    data_dir: str | None,
) -> None:
    """Print the exact prompt sent for MESSAGE: with --person, their own memories and the
    household's; with --household, the household's only; without either, every memory."""
    if person is not None and household:
        raise click.UsageError("Use either --person or --household, not both.")
    settings = load_settings(data_dir)
    history = conversation_store(settings).get_history(conversation) if conversation else []
    store = memory_store(settings)
    memories = store.for_person(None) if household else store.get_all()
    person_id = _person_id(settings, person)
    click.echo(compose_prompt(memories, history, message, person=person_id))
