"""One curator behind every door: the same input gives the same stored result and the same
refusal code through the library (``Curator``), the dashboard (Flask's test client), the
command line (a real ``memory-curator`` process) and the MCP tool (the MCP SDK's client over
stdio, and over HTTP against ``memory-curator serve``). Each case names the drift it closes;
each failed on the code before the curator layer (the doors each applied their own rules)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.assist import AssistClient
from tests.support.assist import context as assist_context
from tests.support.cli import run_cli
from tests.support.data import make_settings, on_disk
from tests.support.mcp_http import call_tool, session
from tests.support.mcp_http import dashboard as serving
from webapp import create_app
from webapp.curator import Curator
from webapp.library import MemoryStore as PublicMemoryStore
from webapp.problems import CodedError
from webapp.stores import ConversationStore, MemoryStore, Proposal
from webapp.stores.timefmt import to_iso

REPO = Path(__file__).resolve().parent.parent
SECRET = "The garage door code is 4821."
ID = re.compile(r"\[([0-9a-f]{6,})\]")


class Door:
    """One way in. Each operation returns "ok" or the refusal's code."""

    name = ""
    said = ""  # the words of the last refusal, as the door gave them
    declared: frozenset[str] = frozenset()  # the operations the running case says it calls

    def __init__(self, root: Path) -> None:
        self.settings = make_settings(root)
        self.data = self.settings.data_dir
        self.data.mkdir(parents=True, exist_ok=True)
        MemoryStore.from_settings(self.settings).init()

    def close(self) -> None:
        pass

    @classmethod
    def offers(cls, operation: str) -> bool:
        """Whether this door has ``operation`` (it overrides the base's refusal)."""
        return getattr(cls, operation) is not getattr(Door, operation)

    # the operations; a door that does not offer one raises NotOffered
    def remember(self, content: str) -> str:
        raise NotOffered

    def remember_for(self, person: str, content: str) -> str:
        """Remember a fact of the person named ``person``."""
        raise NotOffered

    def revise(self, memory_id: str, content: str) -> str:
        raise NotOffered

    def revise_seen(self, memory_id: str, content: str, version: str) -> str:
        """Change a memory as it was at ``version`` (the version a page or a caller saw)."""
        raise NotOffered

    def forget_again(self, memory_id: str) -> str:
        raise NotOffered

    def import_export(self, path: Path) -> str:
        raise NotOffered

    def import_file(self, path: Path, person: str, fmt: str = "text") -> str:
        raise NotOffered

    def approve(self, item_id: str, content: str | None = None) -> str:
        raise NotOffered

    def forget_forever(self, memory_id: str) -> str:
        raise NotOffered

    def undo(self, item_id: str) -> str:
        raise NotOffered

    def merge(self, keep: str, drop: str, content: str, versions: dict[str, str]) -> str:
        raise NotOffered

    def move_to_household(self, ids: list[str], versions: dict[str, str]) -> str:
        raise NotOffered

    def extract(self, conversation_id: str) -> str:
        raise NotOffered

    def add_person(self, name: str) -> str:
        raise NotOffered

    def remove_person(self, person_id: str) -> str:
        raise NotOffered

    def revise_as(self, person: str, memory_id: str, content: str) -> str:
        """Change a memory acting for ``person`` (a name): within their view."""
        raise NotOffered

    def forget_as(self, person: str, memory_id: str) -> str:
        raise NotOffered

    def recall_as(self, person: str | None) -> list[str]:
        """What ``person`` (a name; None: nobody known) is given back, newest first."""
        raise NotOffered


class NotOffered(Exception):
    """This door has no such operation."""


class Library(Door):
    name = "library"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.curator = Curator.from_settings(self.settings)

    def _do(self, run: Any) -> str:
        try:
            run()
        except CodedError as exc:
            self.said = str(exc)
            return exc.code
        return "ok"

    def remember(self, content: str) -> str:
        return self._do(lambda: self.curator.remember(content))

    def remember_for(self, person: str, content: str) -> str:
        return self._do(lambda: self.curator.remember(content, person=self.curator.person(person)))

    def recall_as(self, person: str | None) -> list[str]:
        owner = self.curator.person(person, reading=True) if person else None
        return [m.content for m in self.curator.memories.for_person(owner)]

    def revise(self, memory_id: str, content: str) -> str:
        return self._do(lambda: self.curator.revise(memory_id, content=content))

    def revise_seen(self, memory_id: str, content: str, version: str) -> str:
        return self._do(lambda: self.curator.revise(memory_id, content=content, expected=version))

    def forget_again(self, memory_id: str) -> str:
        return self._do(lambda: self.curator.forget(memory_id, dont_propose_again=True))

    def import_export(self, path: Path) -> str:
        records, _preview = self.curator.preview_export(path.read_text(encoding="utf-8"))
        return self._do(lambda: self.curator.import_export(records, source=path.name))

    def import_file(self, path: Path, person: str, fmt: str = "text") -> str:
        content = path.read_text(encoding="utf-8")
        owner = self.curator.person(person)
        return self._do(
            lambda: self.curator.queue_import(
                self.curator.plan_import(content, fmt=fmt, file_name=path.name, owner=owner)
            )
        )

    def approve(self, item_id: str, content: str | None = None) -> str:
        return self._do(lambda: self.curator.approve(item_id, content=content))

    def forget_forever(self, memory_id: str) -> str:
        return self._do(
            lambda: self.curator.forget(memory_id, dont_propose_again=True, forever=True)
        )

    def undo(self, item_id: str) -> str:
        return self._do(lambda: self.curator.undo_decision(item_id))

    def merge(self, keep: str, drop: str, content: str, versions: dict[str, str]) -> str:
        return self._do(lambda: self.curator.merge(keep, drop, content=content, expected=versions))

    def move_to_household(self, ids: list[str], versions: dict[str, str]) -> str:
        return self._do(lambda: self.curator.move_to_household(ids, expected=versions))

    def extract(self, conversation_id: str) -> str:
        return self._do(lambda: self.curator.extract(conversation_id))

    def add_person(self, name: str) -> str:
        return self._do(lambda: self.curator.add_person(name))

    def remove_person(self, person_id: str) -> str:
        return self._do(lambda: self.curator.remove_person(person_id))

    def revise_as(self, person: str, memory_id: str, content: str) -> str:
        scoped = self.curator.within(self.curator.person(person))
        return self._do(lambda: scoped.revise(memory_id, content=content))

    def forget_as(self, person: str, memory_id: str) -> str:
        scoped = self.curator.within(self.curator.person(person))
        return self._do(lambda: scoped.forget(memory_id))


class HostLibrary(Door):
    """The public library a host program uses as the README shows (``webapp.library``, the
    seed's names): ``add`` gives back the memory already kept for the same fact."""

    name = "host-library"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.store = PublicMemoryStore.from_settings(self.settings)

    def _do(self, run: Any) -> str:
        try:
            run()
        except CodedError as exc:
            self.said = str(exc)
            return exc.code
        return "ok"

    def remember(self, content: str, *, person: str | None = None) -> str:
        if person is not None:
            raise NotOffered  # a host program names a person by id (slack_person)
        before = {m.id for m in self.store.get_all()}
        kept: list[str] = []
        code = self._do(lambda: kept.append(self.store.add(content).id))
        return "duplicate_memory" if code == "ok" and kept[0] in before else code

    def revise(self, memory_id: str, content: str, version: str | None = None) -> str:
        return self._do(lambda: self.store.update(memory_id, content, expected=version))

    def recall_as(self, person: str | None) -> list[str]:
        if person is not None:
            raise NotOffered
        return [m.content for m in self.store.for_person(None)]


class Dashboard(Door):
    """The dashboard through Flask's test client; its answer read as a person reads it."""

    name = "dashboard"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        app = create_app(self.settings)
        app.config.update(TESTING=True, WTF_CSRF_ENABLED=False)
        self.client = app.test_client()

    def _post(self, url: str, data: dict[str, Any]) -> tuple[int, str]:
        answer = self.client.post(url, data=data, headers={"HX-Request": "true"})
        return answer.status_code, answer.get_data(as_text=True)

    @staticmethod
    def _code(status: int, html: str) -> str:
        if status < 400:
            return "ok"
        if status == 404:  # what it names is gone, or another person's: as unknown
            return "memory_gone"
        for marker, code in (
            ("was deleted forever", "deleted_forever"),
            ("deleted this fact forever", "deleted_forever"),
            ("Keep it anyway", "memory_secret"),
            ("holds a", "memory_secret"),
            ("Looks like a memory already kept", "similar_memory"),
            ("Already remembered", "duplicate_memory"),
            ("keeps its own words", "merge_private"),
            ("Nobody could tell whose this fact is", "owner_undecided"),
            ("as you saw it is missing", "version_missing"),
            ("is never merged into another", "merge_across_people"),
            ("Only copies of one fact", "household_not_one_fact"),
            ("Choose two different memories", "merge_same"),
            ("knows format 1 at most", "store_format_newer"),
            ("changed", "conflict"),
            ("is already a person of the household", "person_name_taken"),
            ("still owns", "person_owns_memories"),
        ):
            if marker in html:
                return code
        return f"http_{status}"

    def remember(self, content: str) -> str:
        return self._code(*self._post("/memories/", {"content": content, "person": "household"}))

    def revise(self, memory_id: str, content: str) -> str:
        current = Curator.from_settings(self.settings).memories.get(memory_id)
        assert current is not None
        return self.revise_seen(memory_id, content, current.version)

    def revise_seen(self, memory_id: str, content: str, version: str) -> str:
        data = {"content": content, "expected_updated_at": version}
        return self._code(*self._post(f"/memories/{memory_id}", data))

    def forget_again(self, memory_id: str) -> str:
        return self._code(*self._post(f"/memories/{memory_id}/forget", {}))

    def import_export(self, path: Path) -> str:
        answer = self.client.post(
            "/memories/import/confirm",
            data={"file": (path.open("rb"), path.name)},
            headers={"HX-Request": "true"},
            content_type="multipart/form-data",
        )
        return self._code(answer.status_code, answer.get_data(as_text=True))

    def import_file(self, path: Path, person: str, fmt: str = "text") -> str:
        owner = Curator.from_settings(self.settings).person(person)
        data = {"pasted": path.read_text(encoding="utf-8"), "format": fmt, "owner": owner}
        return self._code(*self._post("/memories/bring/confirm", data))

    def approve(self, item_id: str, content: str | None = None) -> str:
        data = {} if content is None else {"content": content}
        return self._code(*self._post(f"/review/{item_id}/approve", data))

    def forget_forever(self, memory_id: str) -> str:
        return self._code(*self._post(f"/memories/{memory_id}/forget", {"forever": "1"}))

    def undo(self, item_id: str) -> str:
        return self._code(*self._post(f"/review/{item_id}/undo", {}))

    def merge(self, keep: str, drop: str, content: str, versions: dict[str, str]) -> str:
        data = {"keep": keep, "drop": drop, "content": content, "kind": "all"}
        data.update({f"version-{i}": v for i, v in versions.items()})
        return self._code(*self._post("/attention/merge", data))

    def move_to_household(self, ids: list[str], versions: dict[str, str]) -> str:
        data: dict[str, Any] = {"id": ids, "kind": "all"}
        data.update({f"version-{i}": v for i, v in versions.items()})
        return self._code(*self._post("/attention/household", data))

    def extract(self, conversation_id: str) -> str:
        return self._code(*self._post(f"/conversations/extract/{conversation_id}", {}))

    def add_person(self, name: str) -> str:
        return self._code(*self._post("/people/new", {"name": name}))

    def remove_person(self, person_id: str) -> str:
        return self._code(*self._post(f"/people/{person_id}/remove", {}))

    def _as(self, person: str, url: str, data: dict[str, Any]) -> str:
        """A post by the Home Assistant user ``u-<person>`` through ingress's trusted proxy."""
        answer = self.client.post(
            url,
            data=data,
            headers={"HX-Request": "true", "X-Remote-User-Id": f"u-{person.lower()}"},
            environ_base={"REMOTE_ADDR": "172.30.32.2"},
        )
        return self._code(answer.status_code, answer.get_data(as_text=True))

    def revise_as(self, person: str, memory_id: str, content: str) -> str:
        current = Curator.from_settings(self.settings).memories.get(memory_id)
        version = current.version if current is not None else ""
        data = {"content": content, "expected_updated_at": version}
        return self._as(person, f"/memories/{memory_id}", data)

    def forget_as(self, person: str, memory_id: str) -> str:
        return self._as(person, f"/memories/{memory_id}/delete", {})


class Cli(Door):
    """``memory-curator`` as a real process; its refusals end with ``[code]``."""

    name = "cli"

    def _run(self, *args: str) -> str:
        done = run_cli(*args, data_dir=self.data, env={"MEMORY_LOCK_TIMEOUT": "5"}, timeout=120)
        if done.returncode == 0:
            return "ok"
        self.said = done.stderr
        found = re.search(r"\[([a-z_]+)\]\s*$", done.stderr.strip())
        return found.group(1) if found else f"exit_{done.returncode}: {done.stderr[-300:]}"

    def remember(self, content: str) -> str:
        return self._run("memories", "add", content)

    def remember_for(self, person: str, content: str) -> str:
        return self._run("memories", "add", content, "--person", person)

    def revise(self, memory_id: str, content: str) -> str:
        return self._run("memories", "update", memory_id, content)

    def revise_seen(self, memory_id: str, content: str, version: str) -> str:
        return self._run("memories", "update", memory_id, content, "--version", version)

    def forget_again(self, memory_id: str) -> str:
        return self._run("delete", memory_id, "--dont-propose-again")

    def forget_forever(self, memory_id: str) -> str:
        return self._run("delete", memory_id, "--forever", "--dont-propose-again")

    def import_export(self, path: Path) -> str:
        return self._run("import", str(path), "--format", "json")

    def import_file(self, path: Path, person: str, fmt: str = "text") -> str:
        return self._run("import", str(path), "--format", fmt, "--person", person)

    def extract(self, conversation_id: str) -> str:
        return self._run("extract", "--conversation", conversation_id)

    def add_person(self, name: str) -> str:
        return self._run("people", "add", name)

    def remove_person(self, person_id: str) -> str:
        return self._run("people", "remove", person_id)


class Mcp(Door):
    """The ``manage_memory`` tool through the MCP SDK's own client over stdio."""

    name = "mcp"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._portal_cm = start_blocking_portal(backend="asyncio")
        self.portal = self._portal_cm.__enter__()
        self._errlog = (root / "mcp-stderr.txt").open("w+", encoding="utf-8")
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "webapp", "mcp", "--data-dir", str(self.data)],
            env={"MEMORY_LOCK_TIMEOUT": "5"},
            cwd=REPO,
        )
        self._session_cm = self.portal.wrap_async_context_manager(self._connect(params))
        self.session = self._session_cm.__enter__()

    def _connect(self, params: StdioServerParameters) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def connect() -> Any:
            async with stdio_client(params, errlog=self._errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session

        return connect()

    def close(self) -> None:
        self._session_cm.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)
        self._errlog.close()

    def _result(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        result = self.portal.call(self.session.call_tool, "manage_memory", arguments)
        return bool(result.is_error), result.content[0].text

    def listed_tools(self) -> list[Any]:
        return list(self.portal.call(self.session.list_tools).tools)

    def _recall(self, arguments: dict[str, Any]) -> str:
        result = self.portal.call(self.session.call_tool, "recall", arguments)
        return str(result.content[0].text)

    def recall_as(self, person: str | None) -> list[str]:
        block = self._recall({"person": person} if person else {})
        return [line[2:] for line in block.splitlines() if line.startswith("- ")]

    def _call(self, **arguments: Any) -> str:
        is_error, text = self._result(arguments)
        self.said = text
        if text.startswith("Already remembered"):
            return "duplicate_memory"
        if is_error and text.startswith("No memory has the id"):
            return "memory_gone"
        if not is_error:
            return "ok"
        found = re.search(r"Refused \(([a-z_]+)\)", text)
        return found.group(1) if found else f"error: {text[:300]}"

    def remember(self, content: str) -> str:
        return self._call(action="add", content=content)

    def remember_for(self, person: str, content: str) -> str:
        return self._call(action="add", content=content, person=person)

    # no revise_seen: the tool changes the version it reads, never an older one
    def revise(self, memory_id: str, content: str) -> str:
        return self._call(action="update", id=memory_id, content=content)

    def revise_as(self, person: str, memory_id: str, content: str) -> str:
        return self._call(action="update", id=memory_id, content=content, person=person)

    def forget_as(self, person: str, memory_id: str) -> str:
        return self._call(action="delete", id=memory_id, person=person)


class McpHttp(Mcp):
    """The same tool over streamable HTTP: ``memory-curator serve`` as a real process, one
    session per call through the MCP SDK's client (as Home Assistant calls it)."""

    name = "mcp-http"

    def __init__(self, root: Path) -> None:
        Door.__init__(self, root)
        self._served = serving(self.data, MEMORY_LOCK_TIMEOUT="5")
        self.served = self._served.__enter__()

    def close(self) -> None:
        self._served.__exit__(None, None, None)

    def _result(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        return anyio.run(call_tool, self.served.mcp_url, "manage_memory", arguments)

    def _recall(self, arguments: dict[str, Any]) -> str:
        return anyio.run(call_tool, self.served.mcp_url, "recall", arguments)[1]

    def listed_tools(self) -> list[Any]:
        async def listed() -> list[Any]:
            async with session(self.served.mcp_url) as client:
                return list((await client.list_tools()).tools)

        return anyio.run(listed)


class AssistHttp(Door):
    """The Home Assistant integration's path: the Assist API's tools over real HTTP against
    ``memory-curator serve``, each call with the context Home Assistant gives (whose memory
    is the add-on's to decide: a Home Assistant user linked to a person is that person)."""

    name = "assist-http"

    def __init__(self, root: Path) -> None:
        Door.__init__(self, root)
        self._served = serving(self.data, MEMORY_LOCK_TIMEOUT="5")
        self.served = self._served.__enter__()
        self.api = AssistClient(self.served.base)

    def close(self) -> None:
        self.api.close()
        self._served.__exit__(None, None, None)

    def _user_of(self, person: str) -> str:
        """The Home Assistant user linked to the person named ``person``."""
        found = Curator.from_settings(self.settings).people.find(person)
        users = [i.value for i in found.identities if i.kind == "ha"] if found else []
        if not users:
            raise NotOffered  # the integration speaks for Home Assistant users only
        return users[0]

    def _code(self, answer: dict[str, Any]) -> str:
        if answer["ok"]:
            outcome = answer["result"].get("outcome")
            return "duplicate_memory" if outcome == "already_known" else "ok"
        self.said = answer["error"]["message"]
        code = str(answer["error"]["code"])
        return "memory_gone" if code == "not_found" else code

    # no remember_for: whose a fact is, is who speaks; no person is named
    def remember(self, content: str) -> str:
        return self._code(self.api.tool("remember", assist_context(), fact=content))

    def forget_as(self, person: str, memory_id: str) -> str:
        ctx = assist_context(self._user_of(person))
        return self._code(self.api.tool("forget", ctx, memory_id=memory_id))

    def recall_as(self, person: str | None) -> list[str]:
        ctx = assist_context(self._user_of(person) if person else None)
        return [m["content"] for m in self.api.tool("recall", ctx)["result"]["memories"]]


DOORS = [Library, HostLibrary, Dashboard, Cli, Mcp, McpHttp, AssistHttp]


def uses(*operations: str) -> pytest.MarkDecorator:
    """The door operations a case calls: a door that does not offer one of them is skipped
    before anything is started (no server, no process)."""
    return pytest.mark.door_operations(*operations)


@pytest.fixture(params=DOORS, ids=[d.name for d in DOORS])
def door(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Door]:
    kind: type[Door] = request.param
    marker = request.node.get_closest_marker("door_operations")
    operations = marker.args if marker else ()
    for operation in operations:
        if not kind.offers(operation):
            pytest.skip(f"the {kind.name} door has no {operation}")
    made = kind(tmp_path)
    made.declared = frozenset(operations)
    yield made
    made.close()


def memories(door: Door) -> list[dict[str, Any]]:
    return on_disk(door.settings.memory_file)


def offered_list(door: Door, operation: str, *args: Any) -> list[str]:
    """What a reading operation gives back; skips a door that has no such operation."""
    if operation not in door.declared:
        pytest.fail(f"a case that calls {operation} says so with @uses({operation!r})")
    try:
        return list(getattr(door, operation)(*args))
    except NotOffered:
        pytest.skip(f"the {door.name} door has no {operation}")


def call(door: Door, operation: str, *args: Any, **kwargs: Any) -> str:
    if operation not in door.declared:
        pytest.fail(f"a case that calls {operation} says so with @uses({operation!r})")
    try:
        return str(getattr(door, operation)(*args, **kwargs))
    except NotOffered:
        pytest.skip(f"the {door.name} door has no {operation}")


# ------------------------------------------------------------------ remember
@uses("remember")
def test_the_same_fact_twice_is_kept_once_everywhere(door: Door) -> None:
    # Drift: `memory-curator memories add` stored the exact duplicate.
    assert call(door, "remember", "Prefers tea without sugar.") == "ok"
    assert call(door, "remember", "prefers tea without sugar") == "duplicate_memory"
    assert [m["content"] for m in memories(door)] == ["Prefers tea without sugar."]


@uses("remember")
def test_a_memory_file_in_a_newer_format_is_read_and_never_written_everywhere(
    door: Door,
) -> None:
    # Rule (stores/formats.py): a store file whose <file>.format names a format newer than
    # this release knows is never written, whichever door asks; before, nothing read the
    # sidecar and a write put this release's format under a newer release's data.
    assert call(door, "remember", "Prefers tea without sugar.") == "ok"
    memory_file = door.settings.memory_file
    newer = {"store": "memories", "format": 9, "writtenBy": "memory-curator 9.0.0"}
    memory_file.with_name(memory_file.name + ".format").write_text(json.dumps(newer))
    before = memory_file.read_bytes()
    assert call(door, "remember", "Waters the balcony plants on Sundays.") == ("store_format_newer")
    assert memory_file.read_bytes() == before
    assert [m["content"] for m in memories(door)] == ["Prefers tea without sugar."]


def _end_of_next_friday() -> str:
    today = datetime.now(UTC).date()
    friday = today + timedelta(days=(4 - today.weekday()) % 7)
    return to_iso(datetime.combine(friday + timedelta(days=1), time(0), tzinfo=UTC))


@uses("remember")
def test_a_fact_that_says_when_it_ends_expires_then_everywhere(door: Door) -> None:
    # Drift: the Add form read "until Friday" into an expiry; Assist (MCP), the CLI and the
    # library kept the same words for good, so "Is in Tokyo until Friday" stayed in every
    # prompt after Friday.
    before = _end_of_next_friday()
    assert call(door, "remember", "Is in Tokyo until Friday.") == "ok"
    assert call(door, "remember", "Prefers window seats.") == "ok"
    # a time that is a habit, not an end: nobody reviews this reading, and a durable fact
    # that expired would leave every prompt
    assert call(door, "remember", "Prefers meetings before 3pm.") == "ok"
    assert call(door, "remember", "The cleaner comes on Thursday.") == "ok"
    kept = {m["content"]: m.get("expiresAt") for m in memories(door)}
    assert kept["Is in Tokyo until Friday."] in {before, _end_of_next_friday()}
    assert kept["Prefers window seats."] is None
    assert kept["Prefers meetings before 3pm."] is None
    assert kept["The cleaner comes on Thursday."] is None


@uses("remember")
def test_an_end_with_its_year_keeps_the_year_everywhere(door: Door) -> None:
    # Drift: "until December 31, <year>" and 到<year>年底 ended at this year's end, the year
    # dropped; 鋼琴課改到星期六早上上 (a weekly habit) was read as ending on Saturday.
    year = datetime.now(UTC).year + 2
    assert (
        call(door, "remember", f"Works from the Berlin office until December 31, {year}.") == "ok"
    )
    assert call(door, "remember", f"到{year}年底都在台北工作") == "ok"
    assert call(door, "remember", "孩子的鋼琴課改到星期六早上上") == "ok"
    kept = {m["content"]: m.get("expiresAt") for m in memories(door)}
    new_year = to_iso(datetime(year + 1, 1, 1, tzinfo=UTC))
    assert kept[f"Works from the Berlin office until December 31, {year}."] == new_year
    assert kept[f"到{year}年底都在台北工作"] == new_year
    assert kept["孩子的鋼琴課改到星期六早上上"] is None


def _end_of_next(weekday: int) -> str:
    today = datetime.now(UTC).date()
    day = today + timedelta(days=(weekday - today.weekday()) % 7)
    return to_iso(datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC))


@uses("revise")
def test_a_revision_that_says_a_new_end_expires_then_everywhere(door: Door) -> None:
    # Drift: the dashboard's Edit read "until Sunday" from the new words; the MCP tool's and
    # the CLI's update kept the old end, so the memory vanished from prompts on Friday.
    kept = _one(door, "Is in Tokyo until Friday.")
    sunday = _end_of_next(6)
    assert call(door, "revise", kept["id"], "Is in Tokyo until Sunday.") == "ok"
    [after] = [m for m in memories(door) if m["id"] == kept["id"]]
    assert after["expiresAt"] in {sunday, _end_of_next(6)}
    assert call(door, "revise", kept["id"], "Is in Tokyo with Mia.") == "ok"
    [again] = [m for m in memories(door) if m["id"] == kept["id"]]
    assert again["expiresAt"] == after["expiresAt"]  # words with no end keep the end


@uses("remember")
def test_the_same_fact_in_other_words_is_refused_everywhere(door: Door) -> None:
    # Drift: the MCP tool and the CLI never checked meaning duplicates.
    assert call(door, "remember", "Prefers tea without sugar.") == "ok"
    assert call(door, "remember", "Likes tea with no sugar.") == "similar_memory"
    assert len(memories(door)) == 1


@uses("remember")
def test_a_secret_is_refused_everywhere(door: Door) -> None:
    assert call(door, "remember", SECRET) == "memory_secret"
    assert memories(door) == []


@uses("remember")
def test_an_id_number_a_seed_phrase_and_a_star_pound_code_are_refused_everywhere(
    door: Door,
) -> None:
    # Issue 43: these held no word the detector knew, so every door kept them.
    for said in (
        "Dad's social is 523-41-8876",
        "我的身分證字號是 H105672291",
        "round fury damp blanket cause seminar novel arena gravity review sauce ahead",
        "The alarm: star 4 4 1 9 pound",
    ):
        assert call(door, "remember", said) == "memory_secret", said
    assert call(door, "remember", "We stayed at a 5 star hotel") == "ok"
    assert [m["content"] for m in memories(door)] == ["We stayed at a 5 star hotel"]


@uses("remember_for")
def test_a_person_nobody_knows_is_refused_and_recorded(door: Door) -> None:
    # Drift: recorded as seen by MCP, exit 2 from the CLI without recording.
    assert call(door, "remember_for", "Maya", "Is allergic to cats.") == "unknown_person"
    assert memories(door) == []
    people = json.loads((door.data / "people.json").read_text(encoding="utf-8"))
    assert "Maya" in json.dumps(people, ensure_ascii=False)


@pytest.mark.parametrize("again", ["alex", "ALEX ", "Ａｌｅｘ"])
@uses("add_person")
def test_a_name_a_person_cannot_tell_from_another_is_refused(door: Door, again: str) -> None:
    # Drift: "alex" beside "Alex" was accepted without a word on the People page and by the
    # CLI, and later stopped an import from mapping to Alex.
    assert call(door, "add_person", "Alex") == "ok"
    assert call(door, "add_person", again) == "person_name_taken"
    people = json.loads((door.data / "people.json").read_text(encoding="utf-8"))["people"]
    assert [p["name"] for p in people.values()] == ["Alex"]


@uses("remove_person")
def test_a_person_leaves_without_their_private_memories_becoming_the_households(
    door: Door,
) -> None:
    # Drift (issue 36): the People page could not remove a person; a removal must never
    # leave their private memories owned by nobody or hand them to everyone.
    curator = Curator.from_settings(door.settings)
    sam = curator.people.add("Sam")
    hers = curator.remember("Is allergic to penicillin.", person=sam.id)
    assert call(door, "remove_person", sam.id) == "person_owns_memories"
    assert [(m["content"], m.get("person")) for m in memories(door)] == [(hers.content, sam.id)]
    curator.forget(hers.id)
    assert call(door, "remove_person", sam.id) == "ok"
    assert Curator.from_settings(door.settings).people.get(sam.id) is None


@uses("remember_for")
def test_a_person_is_found_by_first_name_and_a_name_two_share_is_refused_everywhere(
    door: Door,
) -> None:
    # Drift (issue 42): "Ana Souza", added from Home Assistant, was unknown to an assistant
    # saying "Ana" (refused, and "Ana" noted as a stranger); a shared first name must be
    # refused, never guessed, and the refusal must not tell the caller who lives here.
    curator = Curator.from_settings(door.settings)
    curator.note_identity("ha", "u-ana", label="Ana Souza")
    souza = curator.person_from("ha", "u-ana")
    assert call(door, "remember_for", "ana", "Plays the cello.") == "ok"
    assert [(m["content"], m.get("person")) for m in memories(door)] == [
        ("Plays the cello.", souza.id)
    ]
    lima = curator.add_person("Ana Lima")
    assert call(door, "remember_for", "Ana", "Likes jazz.") == "person_ambiguous"
    assert len(memories(door)) == 1
    for private in ("Souza", "Lima", souza.id, lima.id):
        assert private not in door.said
    assert call(door, "remember_for", "ana lima", "Likes jazz.") == "ok"
    assert Curator.from_settings(door.settings).people.unlinked() == []  # no stranger noted


# ------------------------------------------------------------------ revise
def _one(door: Door, text: str = "The boiler is serviced in May.") -> dict[str, Any]:
    memory = Curator.from_settings(door.settings).memories.add(text)
    return memory.to_dict() | {"version": memory.version}


@uses("revise")
def test_a_revision_to_a_secret_is_refused_everywhere(door: Door) -> None:
    memory = _one(door)
    assert call(door, "revise", memory["id"], "The boiler PIN is 4821.") == "memory_secret"
    assert [m["content"] for m in memories(door)] == [memory["content"]]


@uses("revise_seen")
def test_a_revision_of_a_changed_memory_is_refused_everywhere(door: Door) -> None:
    # Drift: an MCP update, Keep this one, Merge overwrote whatever was there.
    memory = _one(door)
    seen = memory["version"]
    Curator.from_settings(door.settings).revise(
        memory["id"], content="The boiler is serviced in June."
    )
    assert call(door, "revise_seen", memory["id"], "The boiler is serviced in July.", seen) == (
        "conflict"
    )
    assert [m["content"] for m in memories(door)] == ["The boiler is serviced in June."]


# ------------------------------------------------------------------ forget
@uses("forget_again")
def test_dont_propose_again_works_for_a_memory_another_program_deleted(door: Door) -> None:
    # Drift: recorded by the dashboard, exit 1 from the CLI; a library delete left no tombstone.
    memory = _one(door)
    MemoryStore.from_settings(door.settings).delete(memory["id"])
    assert call(door, "forget_again", memory["id"]) == "ok"
    tombstones = Curator.from_settings(door.settings).tombstones.all()
    assert [(t.memory_id, t.no_propose) for t in tombstones] == [(memory["id"], True)]


def _offered_or_library(door: Door, operation: str, *args: Any) -> str:
    """The operation through ``door``, or through the library where the door has none (the
    MCP tool has no Delete forever and no Review), so every door's case runs to the end."""
    try:
        return str(getattr(door, operation)(*args))
    except NotOffered:
        return str(getattr(Library(door.settings.data_dir.parent), operation)(*args))


@uses("remember")
def test_a_fact_deleted_forever_is_refused_when_told_again_everywhere(door: Door) -> None:
    # Drift (issue 45): Delete forever kept the fact from extraction only; the Add form, the
    # CLI, the MCP tool and the library kept it again when told it in the same words.
    memory = _one(door)
    Curator.from_settings(door.settings).forget(memory["id"])  # as Recently deleted offers it
    assert _offered_or_library(door, "forget_forever", memory["id"]) == "ok"
    assert call(door, "remember", memory["content"]) == "deleted_forever"
    assert memories(door) == []


def test_delete_forever_of_an_edited_proposal_leaves_no_word_and_undo_is_refused(
    door: Door,
) -> None:
    # Drift (round four): the review item of a proposal edited before approval kept the
    # proposal's words (review.json and its backup, Review's Decided tab) after Delete
    # forever, and Undo then Approve put the fact back.
    curator = Curator.from_settings(door.settings)
    (item,) = curator.review.submit(
        [Proposal("add", "Plays chess with Grandpa on Wednesdays", evidence="We play chess.")],
        conversation_id="cli:doors",
    )
    done = curator.approve(item.id, content="Has a weekly chess game with Grandpa")
    assert done.applied_memory_id is not None
    curator.forget(done.applied_memory_id)  # deleted first, as Recently deleted offers it
    assert _offered_or_library(door, "forget_forever", done.applied_memory_id) == "ok"
    held = [
        path.name
        for path in door.data.rglob("*")
        if path.is_file() and b"chess" in path.read_bytes().lower()
    ]
    assert held == []
    assert _offered_or_library(door, "undo", item.id) == "deleted_forever"
    assert _offered_or_library(door, "approve", item.id) == "deleted_forever"
    assert not any("chess" in m["content"].lower() for m in memories(door))


# ------------------------------------------------------------------ import
@uses("import_export")
def test_importing_an_old_export_does_not_bring_back_a_deleted_fact(
    door: Door, tmp_path: Path
) -> None:
    # Drift: `memory-curator import FILE --format json` brought back what a person deleted.
    curator = Curator.from_settings(door.settings)
    kept = curator.remember("Waters the plants on Sundays.")
    gone = curator.remember("Drinks oolong tea every morning.")
    export = tmp_path / "backup.json"
    export.write_bytes(curator.memories.export())
    curator.forget(gone.id)
    assert call(door, "import_export", export) == "ok"
    assert [m["id"] for m in memories(door)] == [kept.id]


@uses("import_file")
def test_an_import_is_its_owners_and_never_changes_another_persons_memory(
    door: Door, tmp_path: Path
) -> None:
    # Drift (issue 36): everything imported landed as the household's although the panel
    # knew who was importing.
    curator = Curator.from_settings(door.settings)
    maya = curator.people.add("Maya")
    leo = curator.people.add("Leo")
    hers = curator.remember("Likes jazz on Sunday mornings.", person=maya.id)
    notes = tmp_path / "notes.txt"
    notes.write_text("Likes jazz on Sunday mornings.\nThe bins go out on Tuesday.\n", "utf-8")
    assert call(door, "import_file", notes, "Leo") == "ok"
    pending = Curator.from_settings(door.settings).review.pending()
    assert sorted((p.action, p.person, p.memory_id) for p in pending) == [
        ("add", leo.id, None),
        ("add", leo.id, None),
    ]
    assert [(m["id"], m["content"]) for m in memories(door)] == [(hers.id, hers.content)]


@uses("import_file")
def test_an_owned_import_keeps_what_each_fact_is_about_everywhere(
    door: Door, tmp_path: Path
) -> None:
    # Drift (issue 42): an MCP memory graph imported as Ben's proposed the dog's "Is a
    # beagle" as a private fact of Ben's; only what is about Ben himself loses the name.
    curator = Curator.from_settings(door.settings)
    ben = curator.people.add("Ben Okafor")
    graph = tmp_path / "memory.jsonl"
    entities = [("Biscuit", "dog", "Is a beagle"), ("Ben Okafor", "person", "Is allergic to cats")]
    lines = [
        {"type": "entity", "name": name, "entityType": kind, "observations": [fact]}
        for name, kind, fact in entities
    ]
    graph.write_text("\n".join(json.dumps(line) for line in lines) + "\n", "utf-8")
    assert call(door, "import_file", graph, "Ben Okafor", "mcp-jsonl") == "ok"
    pending = Curator.from_settings(door.settings).review.pending()
    assert sorted((p.content, p.person) for p in pending) == [
        ("Biscuit: Is a beagle", ben.id),
        ("Is allergic to cats", ben.id),
    ]
    assert memories(door) == []


# ------------------------------------------------------------------ review and merge
def _proposal(door: Door) -> str:
    curator = Curator.from_settings(door.settings)
    (item,) = curator.review.submit([Proposal("add", "The garage door code changed.")])
    return item.id


@uses("approve")
def test_an_edited_proposal_holding_a_secret_is_refused(door: Door) -> None:
    # Drift: editing a Review item and approving it skipped the secrets check.
    item_id = _proposal(door)
    assert call(door, "approve", item_id, SECRET) == "memory_secret"
    assert memories(door) == []
    item = Curator.from_settings(door.settings).review.get(item_id)
    assert item is not None and item.status == "pending"


@uses("merge")
def test_a_merge_into_a_secret_is_refused(door: Door) -> None:
    # Drift: the Needs-attention merge skipped the secrets check.
    a = _one(door, "The garage door opens slowly.")
    b = _one(door, "The garage door is slow to open.")
    versions = {a["id"]: a["version"], b["id"]: b["version"]}
    assert call(door, "merge", a["id"], b["id"], SECRET, versions) == "memory_secret"
    assert len(memories(door)) == 2


@uses("merge")
def test_a_merge_of_a_memory_changed_since_the_page_is_refused(door: Door) -> None:
    a = _one(door, "The garage door opens slowly.")
    b = _one(door, "The garage door is slow to open.")
    versions = {a["id"]: a["version"], b["id"]: b["version"]}
    Curator.from_settings(door.settings).revise(b["id"], content="The garage door squeaks.")
    assert call(door, "merge", a["id"], b["id"], a["content"], versions) == "conflict"
    assert sorted(m["content"] for m in memories(door)) == [
        "The garage door opens slowly.",
        "The garage door squeaks.",
    ]


@uses("merge")
def test_a_merge_without_the_versions_seen_is_refused_not_unchecked(door: Door) -> None:
    # Drift: a merge whose form left out the version fields skipped the conflict check.
    a = _one(door, "The garage door opens slowly.")
    b = _one(door, "The garage door is slow to open.")
    Curator.from_settings(door.settings).revise(b["id"], content="The garage door squeaks.")
    assert call(door, "merge", a["id"], b["id"], a["content"], {}) == "version_missing"
    assert call(door, "merge", a["id"], a["id"], a["content"], {a["id"]: a["version"]}) == (
        "merge_same"
    )
    assert len(memories(door)) == 2


@uses("move_to_household")
def test_only_copies_of_one_fact_each_a_persons_move_to_the_household(door: Door) -> None:
    # Drift: a crafted "Move to household" made Ana's fact the household's and deleted Leo's
    # other fact; the same id twice deleted the memory it had just moved.
    curator = Curator.from_settings(door.settings)
    ana, leo = curator.people.add("Ana"), curator.people.add("Leo")
    bins = curator.memories.add("The bins go out on Tuesday.", person=ana.id)
    diet = curator.memories.add("Is diabetic.", person=leo.id)
    copy = curator.memories.add("The bins go out on Tuesday.", person=leo.id)
    versions = {m.id: m.version for m in (bins, diet, copy)}
    assert call(door, "move_to_household", [bins.id, diet.id], versions) == (
        "household_not_one_fact"
    )
    assert call(door, "move_to_household", [bins.id, bins.id], versions) == "merge_same"
    assert call(door, "move_to_household", [bins.id, copy.id], {bins.id: bins.version}) == (
        "version_missing"
    )
    assert len(memories(door)) == 3
    assert call(door, "move_to_household", [bins.id, copy.id], versions) == "ok"
    assert sorted((m["content"], m.get("person")) for m in memories(door)) == [
        ("Is diabetic.", leo.id),
        ("The bins go out on Tuesday.", None),
    ]


@uses("merge")
def test_a_merge_of_two_peoples_memories_is_refused_everywhere(door: Door) -> None:
    curator = Curator.from_settings(door.settings)
    ana, leo = curator.people.add("Ana"), curator.people.add("Leo")
    mine = curator.memories.add("Prefers tea.", person=ana.id)
    theirs = curator.memories.add("Prefers green tea.", person=leo.id)
    versions = {mine.id: mine.version, theirs.id: theirs.version}
    assert call(door, "merge", mine.id, theirs.id, mine.content, versions) == (
        "merge_across_people"
    )
    assert len(memories(door)) == 2


# ------------------------------------------------------------------ extraction
@uses("extract")
def test_a_fact_a_host_program_deleted_is_not_proposed_as_new(door: Door) -> None:
    # Drift: a host that deleted through the library (MemoryStore.delete) left no tombstone,
    # so extraction proposed (auto mode: saved) the fact again as new.
    store = MemoryStore.from_settings(door.settings)
    gone = store.add("Drinks oolong tea every morning.")
    store.delete(gone.id)
    thread = "cli:doors"
    ConversationStore.from_settings(door.settings).add_exchange(
        thread, "Remember that I drink oolong tea every morning.", "Noted."
    )
    assert call(door, "extract", thread) == "ok"
    curator = Curator.from_settings(door.settings)
    assert [t.memory_id for t in curator.tombstones.all()] == [gone.id]
    (proposal,) = curator.review.pending()
    assert proposal.tombstone_id is not None  # marked as deleted before, not proposed as new
    assert memories(door) == []


@uses("extract")
def test_a_forgotten_fact_said_again_with_a_filler_is_not_proposed_everywhere(
    door: Door,
) -> None:
    # Drift (issue 44): the rules kept "just so you know" in what they proposed, so a fact a
    # person said not to propose again came back past its tombstone.
    curator = Curator.from_settings(door.settings)
    kept = curator.memories.add("Is left-handed")
    curator.forget(kept.id)  # deleted first, as Recently deleted offers "don't propose again"
    assert _offered_or_library(door, "forget_again", kept.id) == "ok"
    thread = "cli:doors"
    ConversationStore.from_settings(door.settings).add_exchange(
        thread, "Oh and I'm left-handed, just so you know.", "Noted."
    )
    assert call(door, "extract", thread) == "ok"
    assert Curator.from_settings(door.settings).review.pending() == []
    assert memories(door) == []


@uses("extract")
def test_a_fact_said_outright_is_proposed_in_fact_form_everywhere(door: Door) -> None:
    # Drift (issue 44): the rules proposed nothing for a statement with no "I prefer" or
    # "remember that", and read 我家 (the household's) as the speaker's 我.
    thread = "cli:doors"
    conversations = ConversationStore.from_settings(door.settings)
    conversations.add_exchange(thread, "Quick note: I take my coffee black.", "Noted.")
    conversations.add_exchange(thread, "跟你說，我家的狗叫豆豆。", "好的。")
    assert call(door, "extract", thread) == "ok"
    pending = Curator.from_settings(door.settings).review.pending()
    assert sorted(p.content for p in pending) == ["Takes their coffee black", "我家的狗叫豆豆"]
    assert memories(door) == []


# ------------------------------------------------------------------ private stays private
@uses("forget_again")
def test_a_deletion_remembers_whose_the_fact_was_everywhere(door: Door) -> None:
    # Drift (issue 35): tombstones named no person, so Leo's "don't propose again" dropped
    # Maya's same fact.
    curator = Curator.from_settings(door.settings)
    leo = curator.people.add("Leo")
    jazz = curator.remember("Likes jazz", person=leo.id)
    MemoryStore.from_settings(door.settings).delete(jazz.id)  # a program's, without one
    assert call(door, "forget_again", jazz.id) == "ok"
    [tombstone] = Curator.from_settings(door.settings).tombstones.all()
    assert (tombstone.memory_id, tombstone.person, tombstone.no_propose) == (jazz.id, leo.id, True)


@uses("approve")
def test_a_proposal_nobody_could_tell_the_owner_of_is_not_approved_as_the_households(
    door: Door,
) -> None:
    # Drift (issue 35): a loose LLM quote made a private fact the household's by default.
    curator = Curator.from_settings(door.settings)
    (item,) = curator.review.submit([Proposal("add", "Is pregnant", owner_undecided=True)])
    assert call(door, "approve", item.id) == "owner_undecided"
    assert memories(door) == []
    pending = Curator.from_settings(door.settings).review.get(item.id)
    assert pending is not None and pending.status == "pending"


@uses("merge")
def test_a_merge_never_carries_a_persons_words_into_the_households_memory(door: Door) -> None:
    curator = Curator.from_settings(door.settings)
    maya = curator.people.add("Maya")
    shared = curator.remember("Avoids sugar in desserts.")
    private = curator.remember(
        "Avoids sugar in desserts (diabetic).", person=maya.id, allow_similar=True
    )
    versions = {shared.id: shared.version, private.id: private.version}
    assert call(door, "merge", shared.id, private.id, private.content, versions) == (
        "merge_private"
    )
    assert sorted(m["content"] for m in memories(door)) == sorted([shared.content, private.content])
    assert call(door, "merge", shared.id, private.id, shared.content, versions) == "ok"
    assert [(m["content"], m.get("person")) for m in memories(door)] == [(shared.content, None)]


# ------------------------------------------------------------------ whose it is
@uses("revise_as", "forget_as")
def test_nobody_changes_or_forgets_another_persons_memory_acting_for_themselves(
    door: Door,
) -> None:
    # Issue 42: behind Home Assistant's ingress every user could edit or delete every person's
    # private memory. Acting for Ben, Ana's is as unknown as one that does not exist.
    curator = Curator.from_settings(door.settings)
    ana = curator.people.add("Ana", identities=(("ha", "u-ana"),))
    curator.people.add("Ben", identities=(("ha", "u-ben"),))
    hers = curator.remember("Is allergic to penicillin.", person=ana.id)
    assert call(door, "revise_as", "Ben", hers.id, "Is not allergic to anything.") == "memory_gone"
    assert call(door, "forget_as", "Ben", hers.id) == "memory_gone"
    assert [(m["id"], m["content"]) for m in memories(door)] == [(hers.id, hers.content)]
    assert call(door, "revise_as", "Ana", hers.id, "Is allergic to penicillin and aspirin.") == "ok"


@uses("recall_as")
def test_a_persons_fact_is_never_recalled_for_another_person_or_the_household(
    door: Door,
) -> None:
    # Issue 41 (Assist): Ana's private fact must never reach Ben's request, nor one nobody
    # is known for (a household device, a guest), through the door that reads for a speaker.
    curator = Curator.from_settings(door.settings)
    ana = curator.people.add("Ana", identities=(("ha", "u-ana"),))
    curator.people.add("Ben", identities=(("ha", "u-ben"),))
    curator.remember("Is allergic to penicillin.", person=ana.id)
    curator.remember("The bins go out on Tuesday.")

    def recalled(person: str | None) -> list[str]:
        return sorted(offered_list(door, "recall_as", person))

    assert recalled("Ana") == ["Is allergic to penicillin.", "The bins go out on Tuesday."]
    assert recalled("Ben") == ["The bins go out on Tuesday."]
    assert recalled(None) == ["The bins go out on Tuesday."]


# ------------------------------------------------------------------ the tools, as clients read them
def home_assistant_reads(annotations: Any) -> dict[str, bool]:
    """A tool's hints as Home Assistant's ``mcp`` integration reads them (its coordinator's
    ``_tool_annotations`` into ``llm.ToolAnnotations``): a hint left out is the least safe."""
    least_safe = {"read_only": False, "destructive": True, "idempotent": False, "open_world": True}
    if annotations is None:
        return least_safe
    declared = {
        "read_only": annotations.read_only_hint,
        "destructive": annotations.destructive_hint,
        "idempotent": annotations.idempotent_hint,
        "open_world": annotations.open_world_hint,
    }
    return {name: least_safe[name] if value is None else value for name, value in declared.items()}


@pytest.mark.parametrize("mcp_door", [Mcp, McpHttp], ids=["mcp", "mcp-http"])
def test_the_read_only_tools_are_not_destructive_as_home_assistant_reads_them(
    mcp_door: type[Mcp], tmp_path: Path
) -> None:
    # Drift (issue 42): review_memory declared only readOnlyHint, and Home Assistant took the
    # destructiveHint it left out for true, so Assist treated listing the queue as destructive.
    door = mcp_door(tmp_path)
    try:
        hints = {tool.name: home_assistant_reads(tool.annotations) for tool in door.listed_tools()}
    finally:
        door.close()
    reading = {"read_only": True, "destructive": False, "idempotent": True, "open_world": False}
    assert hints["recall"] == reading
    assert hints["review_memory"] == reading
    # manage_memory deletes and overwrites: Home Assistant must keep treating it as destructive
    assert hints["manage_memory"] == {
        "read_only": False,
        "destructive": True,
        "idempotent": False,
        "open_world": False,
    }
