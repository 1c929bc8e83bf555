"""What a file may hold never breaks the program (issue 26, items 1, 2(b), 7, 8, 9).

A time no calendar holds, a wrongly typed review item, a lone surrogate in a stored text: every
page still answers, ``stats``, ``export`` and the MCP server still work, and ``repair`` says
what it found. Every file the program writes into a data folder is known to ``repair`` and
``stats``; a backup never shares the live file's inode.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from flask import Flask
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.cli import run_cli
from tests.support.data import make_settings
from webapp import create_app
from webapp.attention.scanner import scan
from webapp.cli import load_demo
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore, ReviewQueue
from webapp.stores.timefmt import parse_ts, time_problem, to_iso

REPO = Path(__file__).resolve().parent.parent

# Values a time field of a file may hold that give no usable time.
UNUSABLE_TIMES: list[Any] = [
    "0001-01-01T00:00:00+14:00",  # before the year 1 in UTC
    "9999-12-31T23:59:59-14:00",  # after the year 9999 in UTC
    "9999-12-31T23:59:59.999Z",  # the calendar's last millisecond: one more overflows
    "0001-01-01T00:00:00Z",
    10**20,
    -(10**20),
    1e308,
    -1e308,
    float("nan"),
    float("inf"),
    [],
    ["2026-01-01T00:00:00Z"],
    {"at": 1},
    True,
    "",
    " ",
    "not a time",
    "2026-02-30T00:00:00Z",
    "x" * 200_000,
    "2" * 200_000,
]
# Odd but readable: a year before 1000 (written with four digits) and the widest UTC offset.
READABLE_ODD_TIMES: list[Any] = ["0999-06-01T00:00:00Z", "2026-01-01T00:00:00+23:59:59.999999"]
HOSTILE_TIMES = UNUSABLE_TIMES + READABLE_ODD_TIMES
HOSTILE_IDS = [f"t{i:02d}" for i in range(len(HOSTILE_TIMES))]


# ------------------------------------------------------------------ helpers
def demo_settings(tmp_path: Path, **changes: Any) -> Settings:
    """A data folder holding the demo (memories, threads, proposals, skills)."""
    settings = make_settings(tmp_path, **changes)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    load_demo(settings, force=False)
    return settings


def write_json(path: Path, data: Any) -> None:
    """Write as another program would (NaN and Infinity as Python's json writes them)."""
    path.write_text(json.dumps(data), encoding="utf-8")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def app_for(settings: Settings) -> Flask:
    app = create_app(settings)
    app.config.update(TESTING=True)
    return app


def failing_pages(app: Flask, **ids: list[str]) -> dict[str, int]:
    """Every page (GET) of the dashboard that answers with a server error, and its status.

    Pages that name a record are loaded for each id in ``ids`` (``memory_id=[...]``, ...).
    """
    client = app.test_client()
    failed: dict[str, int] = {}
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or ()) or rule.endpoint == "static":
            continue
        arguments = sorted(rule.arguments)
        if not arguments:
            urls = [rule.rule]
        elif len(arguments) == 1 and arguments[0] in ids:
            name = arguments[0]
            urls = [re.sub(r"<[^>]+>", value, rule.rule) for value in ids[name]]
        else:
            continue
        for url in urls:
            for htmx in (False, True):
                answer = client.get(url, headers={"HX-Request": "true"} if htmx else {})
                if answer.status_code >= 500:
                    failed[f"{url} (htmx)" if htmx else url] = answer.status_code
    return failed


def mcp_calls(
    settings: Settings, calls: list[dict[str, Any]], tool: str = "manage_memory"
) -> list[tuple[bool, str]]:
    """Run ``memory-curator mcp`` over the data folder and make each call of ``tool`` through
    the official SDK client; (is_error, text) of each."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(settings.data_dir)],
        env={},
        cwd=REPO,
    )

    async def scenario() -> list[tuple[bool, str]]:
        answers = []
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(60):
                        await session.initialize()
                        for arguments in calls:
                            result = await session.call_tool(tool, arguments)
                            answers.append((bool(result.is_error), result.content[0].text))
        return answers

    return anyio.run(scenario)


# ------------------------------------------------------------------ 1. times no calendar holds
@pytest.mark.parametrize("value", HOSTILE_TIMES, ids=HOSTILE_IDS)
def test_reading_a_time_never_raises_and_gives_a_time_safe_to_compute_with(value):
    moment = parse_ts(value)

    assert moment.tzinfo is not None and moment.utcoffset() == timedelta(0)
    # What the program does with a time it read: step it, format it, compare it, subtract.
    moment + timedelta(days=1)
    moment - timedelta(days=1)
    assert parse_ts(to_iso(moment)) == moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    assert (datetime.now(UTC) - moment).days is not None
    # ... and repair can say why a value holds no usable time.
    assert (time_problem(value) is None) == (value in READABLE_ODD_TIMES)


@pytest.mark.parametrize(
    "value", [None, "2026-01-01T00:00:00.000Z", "2026-01-01T09:00:00+09:00", 1731900000000]
)
def test_a_usable_or_absent_time_is_no_problem(value):
    assert time_problem(value) is None


def test_a_naive_time_is_read_as_utc():
    assert parse_ts("2026-01-01T10:00:00") == datetime(2026, 1, 1, 10, tzinfo=UTC)


@pytest.fixture
def odd_times(tmp_path: Path) -> Settings:
    """The demo, plus one memory per hostile time (in createdAt and updatedAt)."""
    settings = demo_settings(tmp_path)
    records = read_json(settings.memory_file)
    for record_id, value in zip(HOSTILE_IDS, HOSTILE_TIMES, strict=True):
        records.append(
            {
                "id": record_id,
                "content": f"odd time {record_id}",
                "createdAt": value,
                "updatedAt": value,
            }
        )
    records.append({"id": "bad000000002", "content": "x", "createdAt": "0001-01-01T00:00:00+14:00"})
    write_json(settings.memory_file, records)
    return settings


def test_memories_with_times_no_calendar_holds_leave_every_page_working(odd_times):
    app = app_for(odd_times)

    assert failing_pages(app, memory_id=[*HOSTILE_IDS, "bad000000002"]) == {}
    listed = app.test_client().get("/memories/?per_page=200").get_data(as_text=True)
    assert all(f"odd time {record_id}" in listed for record_id in HOSTILE_IDS)
    prompt = app.test_client().get("/prompt/").get_data(as_text=True)
    assert "odd time t00" in prompt  # kept, and still injected into every prompt
    memories = MemoryStore.from_settings(odd_times).get_all()
    scan(memories, today=datetime.now(UTC).date(), stale_days=90)  # Needs attention's scan


def test_a_memory_of_unknown_time_is_not_called_untouched_for_decades(odd_times):
    memories = MemoryStore.from_settings(odd_times).get_all()
    findings = scan(memories, today=datetime.now(UTC).date(), stale_days=90)

    aged = [
        f.memories[0].id
        for f in findings
        if f.reason.code in ("untouched", "expired_word")
        and f.memories[0].id in {*HOSTILE_IDS[: len(UNUSABLE_TIMES)], "bad000000002"}
    ]
    assert aged == []


def test_memories_with_odd_times_can_be_edited_deleted_and_restored(odd_times):
    store = MemoryStore.from_settings(odd_times)
    for record_id in [*HOSTILE_IDS, "bad000000002"]:
        memory = store.get(record_id)
        assert memory is not None, record_id
        store.update(record_id, f"edited {record_id}", expected_updated_at=memory.version)
        store.delete(record_id)
        store.restore(record_id)
        assert store.get(record_id).content == f"edited {record_id}"


def test_stats_export_and_repair_work_and_repair_names_the_unreadable_times(odd_times):
    stats = run_cli("stats", data_dir=odd_times.data_dir)
    assert stats.returncode == 0, stats.stderr
    assert "Traceback" not in stats.stderr

    exported = run_cli("export", data_dir=odd_times.data_dir)
    assert exported.returncode == 0, exported.stderr
    assert {r["id"] for r in json.loads(exported.stdout)} >= {*HOSTILE_IDS, "bad000000002"}

    before = odd_times.memory_file.read_bytes()
    repaired = run_cli("repair", data_dir=odd_times.data_dir)
    assert repaired.returncode == 0, repaired.stderr
    line = next(
        line for line in repaired.stdout.splitlines() if line.startswith(str(odd_times.memory_file))
    )
    assert f"{len(UNUSABLE_TIMES) + 1} records have a time that cannot be read" in line, line
    assert "'t00': createdAt '0001-01-01T00:00:00+14:00' is outside the calendar" in line
    assert "treated as unknown" in line
    assert odd_times.memory_file.read_bytes() == before  # reported, nothing changed or lost


UNREADABLE_IDS = HOSTILE_IDS[: len(UNUSABLE_TIMES)]


def same_value(a: Any, b: Any) -> bool:
    """``a == b``, with NaN equal to NaN (a file may hold NaN as a time)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def assert_times_as_on_disk(exported: list[dict[str, Any]], on_disk: list[dict[str, Any]]) -> None:
    """Each unreadable time of ``on_disk`` is in ``exported`` as it was, never the epoch."""
    got = {r["id"]: r for r in exported}
    was = {r["id"]: r for r in on_disk}
    for record_id in UNREADABLE_IDS:
        for name in ("createdAt", "updatedAt"):
            value = got[record_id][name]
            assert same_value(value, was[record_id][name]), (record_id, name, str(value)[:60])
    # it has no updatedAt: that is read as its createdAt, and exported as that was
    assert got["bad000000002"]["createdAt"] == "0001-01-01T00:00:00+14:00"
    assert got["bad000000002"]["updatedAt"] == "0001-01-01T00:00:00+14:00"
    for record in got.values():
        for name in ("createdAt", "updatedAt"):
            assert not str(record.get(name)).startswith("1970-01-01"), (record["id"], name)


def test_export_writes_an_unreadable_time_as_it_was_on_disk(odd_times):
    on_disk = read_json(odd_times.memory_file)

    exported = json.loads(MemoryStore.from_settings(odd_times).export())

    assert_times_as_on_disk(exported, on_disk)


def test_the_export_command_writes_an_unreadable_time_as_it_was_on_disk(odd_times, tmp_path):
    on_disk = read_json(odd_times.memory_file)
    target = tmp_path / "export.json"

    exported = run_cli("export", "--output", str(target), data_dir=odd_times.data_dir)

    assert exported.returncode == 0, exported.stderr
    assert_times_as_on_disk(read_json(target), on_disk)


def test_editing_deleting_and_restoring_keep_an_unreadable_created_time(odd_times):
    was = {r["id"]: r for r in read_json(odd_times.memory_file)}
    store = MemoryStore.from_settings(odd_times)
    for record_id in [*UNREADABLE_IDS, "bad000000002"]:
        store.update(record_id, f"edited {record_id}")
    now = {r["id"]: r for r in read_json(odd_times.memory_file)}
    for record_id in [*UNREADABLE_IDS, "bad000000002"]:
        created = now[record_id]["createdAt"]
        assert same_value(created, was[record_id]["createdAt"]), (record_id, str(created)[:60])
        updated = parse_ts(now[record_id]["updatedAt"])
        assert abs(datetime.now(UTC) - updated) < timedelta(minutes=5), record_id

    store.delete("t00")
    store.restore("t00")
    restored = next(r for r in read_json(odd_times.memory_file) if r["id"] == "t00")
    assert restored["createdAt"] == "0001-01-01T00:00:00+14:00"


def test_an_export_imported_into_an_empty_store_keeps_the_unreadable_times(odd_times, tmp_path):
    on_disk = read_json(odd_times.memory_file)
    exported = json.loads(MemoryStore.from_settings(odd_times).export())
    fresh = make_settings(tmp_path / "fresh")
    fresh.data_dir.mkdir(parents=True, exist_ok=True)

    counts = MemoryStore.from_settings(fresh).import_records(exported, allow_secrets=True)

    assert counts["added"] == len(on_disk)
    assert_times_as_on_disk(read_json(fresh.memory_file), on_disk)


def test_the_mcp_server_lists_searches_and_adds_over_memories_with_odd_times(odd_times):
    answers = mcp_calls(
        odd_times,
        [
            {"action": "list"},
            {"action": "search", "keyword": "odd time"},
            {"action": "add", "content": "Added beside odd times"},
            {"action": "list"},
        ],
    )
    assert [error for error, _ in answers] == [False] * 4, answers
    assert "odd time t00" in answers[1][1]
    assert "Added beside odd times" in answers[3][1]


def _odd_time(index: int) -> Any:
    return HOSTILE_TIMES[index % len(HOSTILE_TIMES)]


def test_odd_times_in_the_review_queue_state_and_job_file_break_nothing(tmp_path):
    settings = demo_settings(tmp_path)
    items = read_json(settings.review_file)
    for index, value in enumerate(HOSTILE_TIMES):
        template = dict(items[index % len(items)])
        template.update(
            id=f"r{index:02d}",
            content=f"odd proposal {index}",
            createdAt=value,
            evidenceAt=value,
            status="rejected" if index % 2 else "pending",
            decidedAt=value if index % 2 else None,
        )
        items.append(template)
    write_json(settings.review_file, items)
    conversations = read_json(settings.conversation_file)
    threads = list(conversations)
    turns = conversations[threads[0]]["turns"]
    for index, turn in enumerate(turns[:-1]):  # the last one readable: the thread is live
        turn["timestamp"] = _odd_time(index)
    conversations[threads[0]]["createdAt"] = "0001-01-01T00:00:00+14:00"
    write_json(settings.conversation_file, conversations)
    write_json(
        settings.review_file.with_name("extraction-state.json"),
        {
            thread: {"extractedAt": _odd_time(i), "lastTurnAt": _odd_time(i + 1)}
            for i, thread in enumerate(threads)
        },
    )
    write_json(
        settings.review_file.with_name("extraction-job.json"),
        {
            "id": "job1",
            "status": "running",
            "startedAt": "0001-01-01T00:00:00+14:00",
            "finishedAt": None,
            "todo": threads[1:],
            "claims": {threads[0]: "9999-12-31T23:59:59-14:00"},
            "total": len(threads),
            "done": 0,
        },
    )
    app = app_for(settings)

    assert (
        failing_pages(
            app,
            item_id=[f"r{i:02d}" for i in range(len(HOSTILE_TIMES))],
            conversation_id=threads,
        )
        == {}
    )
    review = app.test_client().get("/review/").get_data(as_text=True)
    assert "odd proposal 0" in review
    [(error, pending)] = mcp_calls(settings, [{}], tool="review_memory")
    assert not error and "odd proposal 0" in pending, pending
    for command in (["stats"], ["extract", "--all"], ["repair"]):
        done = run_cli(*command, data_dir=settings.data_dir)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
    # The claim no calendar holds belongs to nobody alive: the next step takes it over.
    client = app.test_client()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', client.get("/memories/").get_data(as_text=True))
    assert token
    step = client.post("/conversations/extract-all/step", headers={"X-CSRFToken": token.group(1)})
    assert step.status_code < 500


# ------------------------------------------------------------------ 9. wrongly typed review items
# Every field of a review item, with values of a type it never holds.
WRONG_REVIEW_FIELDS: list[tuple[str, Any]] = [
    ("id", ["r1"]),
    ("id", 7),
    ("id", ""),
    ("action", "explode"),
    ("action", ["add"]),
    ("content", {"text": "x"}),
    ("content", None),
    ("category", ["preference"]),
    ("category", {"a": 1}),
    ("confidence", "0.9"),
    ("confidence", [0.9]),
    ("confidence", float("nan")),
    ("confidence", True),
    ("extractor", ["llm"]),
    ("extractor", 1),
    ("conversationId", ["slack:1"]),
    ("conversationId", {"id": 1}),
    ("evidence", ["said so"]),
    ("evidence", 12),
    ("memoryId", ["m1"]),
    ("memoryId", {"id": "m1"}),
    ("currentContent", {"text": "x"}),
    ("currentContent", ["x"]),
    ("status", "maybe"),
    ("status", None),
    ("decidedBy", ["me"]),
    ("decidedBy", 3),
    ("extractorModel", ["openai/x"]),
    ("appliedMemoryId", ["m1"]),
    ("appliedContent", ["x"]),
    ("appliedContent", {"text": "x"}),
    ("appliedAction", ["add"]),
    ("appliedAction", "explode"),
    ("replacedInstead", ["m1"]),
    ("evidenceAt", ["2026-01-01T00:00:00Z"]),  # times: read as unknown, the item is kept
    ("createdAt", "0001-01-01T00:00:00+14:00"),
    ("decidedAt", "9999-12-31T23:59:59-14:00"),
]
TIME_FIELDS_OF_REVIEW = {"createdAt", "decidedAt", "evidenceAt"}


def _review_item(item_id: str, status: str, memory_id: str | None, fields: dict) -> dict:
    item = {
        "id": item_id,
        "action": "update" if memory_id else "add",
        "content": f"proposal {item_id}",
        "category": "preference",
        "confidence": 0.8,
        "extractor": "llm",
        "conversationId": None,
        "evidence": "I said so",
        "evidenceAt": "2026-01-01T00:00:00.000Z",
        "extractorModel": "openai/gpt",
        "memoryId": memory_id,
        "currentContent": "the old text" if memory_id else None,
        "status": status,
        "createdAt": "2026-01-02T00:00:00.000Z",
        "decidedAt": None if status == "pending" else "2026-01-03T00:00:00.000Z",
        "decidedBy": None if status == "pending" else "dashboard",
    }
    if status == "approved":
        item.update(appliedMemoryId=memory_id, appliedContent=item["content"], appliedAction="add")
    item.update(fields)
    return item


@pytest.fixture
def wrong_review(tmp_path: Path) -> tuple[Settings, list[str], list[str]]:
    """The demo, plus review items with one wrongly typed field each (pending, approved and
    rejected): (settings, ids of the wrong items, ids of items that must be kept)."""
    settings = demo_settings(tmp_path)
    memory_id = MemoryStore.from_settings(settings).get_all()[0].id
    items = read_json(settings.review_file)
    kept = [item["id"] for item in items]
    wrong: list[str] = []
    for index, (name, value) in enumerate(WRONG_REVIEW_FIELDS):
        for status in ("pending", "approved", "rejected"):
            item_id = f"w{index:02d}{status[0]}"
            items.append(_review_item(item_id, status, memory_id, {name: value}))
            if name in TIME_FIELDS_OF_REVIEW:
                kept.append(item_id)
            elif name != "id":
                wrong.append(item_id)
    write_json(settings.review_file, items)
    return settings, wrong, kept


def test_wrongly_typed_review_items_leave_every_page_working(wrong_review):
    settings, wrong, kept = wrong_review
    app = app_for(settings)

    assert failing_pages(app, item_id=[*wrong, *kept]) == {}
    queue = ReviewQueue.from_settings(settings)
    assert [item_id for item_id in wrong if queue.get(item_id) is not None] == []
    assert [item_id for item_id in kept if queue.get(item_id) is None] == []


def test_wrongly_typed_review_items_are_set_aside_by_repair_and_the_rest_keep_working(
    wrong_review,
):
    settings, wrong, kept = wrong_review
    count = len(read_json(settings.review_file)) - len(kept)

    repaired = run_cli("repair", data_dir=settings.data_dir)

    assert repaired.returncode == 0, repaired.stderr
    assert f"{settings.review_file}: {count} unusable records moved to" in repaired.stdout
    [aside] = settings.data_dir.glob("review.json.rejected-*")
    assert len(read_json(aside)) == count  # their bytes, kept for a person to look at
    assert {item["id"] for item in read_json(settings.review_file)} == set(kept)
    queue = ReviewQueue.from_settings(settings)
    for item in queue.pending():
        queue.reject(item.id)
        queue.undo(item.id)
    stats = run_cli("stats", data_dir=settings.data_dir)
    assert stats.returncode == 0, stats.stderr


# ------------------------------------------------------------------ 7. every file is known
TOKEN = "t" * 40
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_HTMX_CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"')


def _skill_zip(body: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tea/SKILL.md", f"---\nname: tea\ndescription: Tea.\n---\n{body}\n")
    return buffer.getvalue()


def use_every_feature(tmp_path: Path) -> Settings:
    """A data folder after the demo and everything a person and the assistant do with it:
    logins (one failed), extraction of every thread (the dashboard's job and the CLI), a
    dismissed finding, edits, a purge, skill uploads (one kept for its preview) and a
    deprecated skill, a repair of a damaged file and of a file with an unusable record, and a
    temp file a killed writer left behind."""
    settings = demo_settings(tmp_path, dashboard_token=TOKEN)
    app = app_for(settings)
    client = app.test_client()
    form = _CSRF.search(client.get("/login").get_data(as_text=True))
    assert form
    client.post("/login", data={"token": "wrong", "csrf_token": form.group(1)})
    assert (
        client.post("/login", data={"token": TOKEN, "csrf_token": form.group(1)}).status_code == 303
    )
    page = client.get("/memories/").get_data(as_text=True)
    headers = {"X-CSRFToken": _HTMX_CSRF.search(page).group(1)}  # type: ignore[union-attr]
    assert client.post("/conversations/extract-all", headers=headers).status_code < 400
    for _ in range(10):
        client.post("/conversations/extract-all/step", headers=headers)
    attention = client.get("/attention/")
    for _ in range(100):  # the scan runs in the background
        keys = re.findall(r'name="key" value="([^"]+)"', attention.get_data(as_text=True))
        if keys:
            break
        attention = client.get("/attention/")
    assert keys
    assert (
        client.post("/attention/dismiss", data={"key": keys[0]}, headers=headers).status_code < 400
    )
    upload = {"archive": (io.BytesIO(_skill_zip("Brew tea.")), "tea.zip")}
    assert client.post("/skills/import", data=upload, headers=headers).status_code < 400
    upload = {"archive": (io.BytesIO(_skill_zip("Brew green tea.")), "tea.zip")}
    assert client.post("/skills/import", data=upload, headers=headers).status_code < 400
    skills = client.get("/skills/").get_data(as_text=True)
    doc_id = re.search(r'/skills/([^/"]+)/deprecate', skills)
    assert doc_id
    assert client.post(f"/skills/{doc_id.group(1)}/deprecate", headers=headers).status_code < 400
    store = MemoryStore.from_settings(settings)
    memory = store.add("To be purged")
    store.update(memory.id, "To be purged, edited")
    store.delete(memory.id)
    store.purge(memory.id)
    assert run_cli("extract", "--all", data_dir=settings.data_dir).returncode == 0
    ConversationStore.from_settings(settings).add_exchange("cli:session-1", "Hi", "Hello")
    # Damage: a whole file, and one record of another; then repair.
    settings.review_file.with_name("extraction-state.json").write_bytes(b'{"cut')
    records = read_json(settings.memory_file)
    write_json(settings.memory_file, [*records, {"id": 5}])
    assert run_cli("repair", data_dir=settings.data_dir).returncode == 0
    (settings.data_dir / f".{settings.memory_file.name}.k1ll3dwr.tmp").write_bytes(b"[")
    return settings


def test_every_file_the_program_writes_is_known_to_repair_and_stats(tmp_path):
    settings = use_every_feature(tmp_path)
    curator = Curator.from_settings(settings)

    found = curator.folder_files()
    written = sorted(p for p in settings.data_dir.rglob("*") if p.is_file())
    assert written and sorted(found) == written
    assert {
        str(p.relative_to(settings.data_dir)): what for p, what in found.items() if not what
    } == {}
    stats, repair = (
        run_cli("stats", data_dir=settings.data_dir),
        run_cli("repair", data_dir=settings.data_dir),
    )
    assert stats.returncode == 0, stats.stderr
    assert repair.returncode == 0, repair.stderr
    for data_file in curator.data_files():
        if data_file.store.path.exists():
            assert str(data_file.store.path) in stats.stdout, data_file.name
            assert str(data_file.store.path) in repair.stdout, data_file.name
    for output in (stats.stdout, repair.stdout):
        assert "not written by Memory Curator" not in output, output
        assert "Also in the data folder:" in output, output


def test_an_unknown_file_in_the_data_folder_is_named_by_stats_and_repair(tmp_path):
    settings = demo_settings(tmp_path)
    (settings.data_dir / "notes.txt").write_text("mine")

    for command in ("stats", "repair"):
        done = run_cli(command, data_dir=settings.data_dir)
        assert done.returncode == 0, done.stderr
        assert (
            f"not written by Memory Curator (left alone): {settings.data_dir / 'notes.txt'}"
            in done.stdout
        )


DAMAGED_SMALL_FILES = [
    ("extraction-job.json", b'{"id": "j1", "status": "runn'),
    ("extraction-job.json", b'{"id": "j1", "status": "running", "total": "abc", "done": 0}'),
    ("attention-dismissed.json", b'{"contradiction:a+b:123": {"at": "2026-'),
    ("extraction-state.json", b"[1, 2"),
]


@pytest.mark.parametrize(
    "name, content",
    DAMAGED_SMALL_FILES,
    ids=["job cut", "job total abc", "dismissals cut", "state"],
)
def test_a_damaged_small_file_is_named_by_stats_and_repaired_by_repair(tmp_path, name, content):
    settings = demo_settings(tmp_path)
    path = settings.review_file.with_name(name)
    path.write_bytes(content)

    stats = run_cli("stats", data_dir=settings.data_dir)
    assert stats.returncode == 1
    assert str(path) in stats.stdout and "corrupt" in stats.stdout
    assert "memory-curator repair" in stats.stderr
    failing = failing_pages(app_for(settings))  # a page that reads it says what to do
    assert all(status == 503 for status in failing.values()), failing

    repaired = run_cli("repair", data_dir=settings.data_dir)

    assert repaired.returncode == 0, repaired.stderr
    assert f"{path}: damaged; moved to" in repaired.stdout
    [aside] = settings.data_dir.glob(f"{name}.corrupt-*")
    assert aside.read_bytes() == content
    assert failing_pages(app_for(settings)) == {}
    assert run_cli("stats", data_dir=settings.data_dir).returncode == 0


# ------------------------------------------------------------------ 8. the backup is its own file
def _foreign_records(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"foreign{i:03d}",
            "content": f"Written by another program {i}",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
        }
        for i in range(count)
    ]


def _same_file(one: Path, other: Path) -> bool:
    return os.stat(one).st_ino == os.stat(other).st_ino


def test_after_a_purge_the_backup_is_a_copy_and_repair_brings_back_every_record(tmp_path):
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    path, backup = settings.memory_file, settings.memory_file.with_name("memories.json.bak")
    write_json(path, _foreign_records(30))  # another program's records: in no history log
    store = MemoryStore.from_settings(settings)
    store.add("Ours")
    doomed = store.add("Delete me forever")
    store.delete(doomed.id)
    store.purge(doomed.id)

    assert "Delete me forever" not in backup.read_text(encoding="utf-8")
    # The other program rewrites the file in place (same inode) and dies halfway.
    with open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.truncate(size // 2)

    repaired = run_cli("repair", data_dir=settings.data_dir)

    assert repaired.returncode == 0, repaired.stderr
    assert "started from the last good backup" in repaired.stdout
    assert len(read_json(path)) == 31


def test_no_write_leaves_the_backup_sharing_the_live_file_or_a_stray_link(tmp_path):
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    path, backup = settings.memory_file, settings.memory_file.with_name("memories.json.bak")
    store = MemoryStore.from_settings(settings)
    first = store.add("first")
    second = store.add("second")
    store.delete(second.id)
    store.purge(second.id)
    assert not _same_file(path, backup)
    store.update(first.id, "first, changed")  # the first write after a purge

    assert not _same_file(path, backup)
    assert sorted(p.name for p in settings.data_dir.iterdir() if p.name.endswith(".tmp")) == []


def test_a_failed_replace_leaves_the_backup_a_file_of_its_own(tmp_path, monkeypatch):
    from webapp.stores import StoreWriteError

    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    path, backup = settings.memory_file, settings.memory_file.with_name("memories.json.bak")
    store = MemoryStore.from_settings(settings)
    store.add("first")
    real_replace = os.replace

    def failing_replace(source: Any, target: Any) -> None:
        if Path(target) == path:
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(StoreWriteError):
        store.add("second")
    monkeypatch.undo()

    assert not _same_file(path, backup)
    assert backup.read_bytes() == path.read_bytes()


# ------------------------------------------------------------------ 2(b). lone surrogates in files
LONE = "\ud800"  # half of a character: JSON can hold it ("\ud800"), UTF-8 cannot


@pytest.fixture
def lone_surrogates(tmp_path: Path) -> Settings:
    """The demo, with lone surrogates written (as JSON escapes) by another program into a
    memory's text, id, category and extra field, a review item, a conversation (its id and a
    message), a skill document, the extraction state and a dismissal."""
    settings = demo_settings(tmp_path)
    records = read_json(settings.memory_file)
    records += [
        {"id": "lone1", "content": f"Likes {LONE} tea", "note": f"x{LONE}", "category": "general"},
        {"id": f"lone2{LONE}", "content": f"\udfffHalf{LONE}", "category": f"tool{LONE}"},
        {"id": "lone3", "content": "Pair \ud83d\ude00 and a stray \udc00\ud800"},
    ]
    write_json(settings.memory_file, records)
    items = read_json(settings.review_file)
    items.append(
        _review_item(
            "lone-review", "pending", None, {"content": f"Tea{LONE}", "evidence": f"ok{LONE}"}
        )
    )
    write_json(settings.review_file, items)
    threads = read_json(settings.conversation_file)
    threads[f"slack:{LONE}"] = {
        "turns": [
            {"role": "user", "content": f"Hi{LONE}", "timestamp": to_iso(datetime.now(UTC))},
            {"role": "assistant", "content": "Hello", "timestamp": to_iso(datetime.now(UTC))},
        ],
        "createdAt": to_iso(datetime.now(UTC)),
        "trimmed": 0,
    }
    write_json(settings.conversation_file, threads)
    [skill] = settings.skills_dir.glob("poem-writer-skill-*.json")
    document = read_json(skill)
    document["content"] += f"\n\nA stray half {LONE} character."
    write_json(skill, document)
    state = settings.review_file.with_name("extraction-state.json")
    write_json(state, {f"slack:{LONE}": {"extractedAt": f"2026{LONE}"}})
    dismissed = settings.memory_file.with_name("attention-dismissed.json")
    write_json(dismissed, {f"stale:lone1:{LONE}": {"at": to_iso(datetime.now(UTC)), "by": "x"}})
    return settings


def _get(url: str) -> tuple[int, str]:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    try:
        with urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8")
    except HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def test_a_lone_surrogate_in_a_file_reaches_no_page_of_the_dashboard_process(lone_surrogates):
    from tests.support.web import start_server, stop_server

    server = start_server(lone_surrogates.data_dir)
    try:
        pages = {
            path: _get(server.url + path)
            for path in (
                "/prompt/",
                "/memories/",
                "/review/",
                "/conversations/",
                "/skills/",
                "/memories/export",
                "/memories/lone1/edit",
                "/attention/",
            )
        }
    finally:
        stop_server(server)

    assert {path: status for path, (status, _) in pages.items() if status != 200} == {}
    assert "Likes \ufffd tea" in pages["/prompt/"][1]
    assert "Likes \ufffd tea" in pages["/memories/export"][1]


def test_every_page_answers_over_lone_surrogates(lone_surrogates):
    app = app_for(lone_surrogates)
    skills = app.test_client().get("/skills/").get_data(as_text=True)
    doc_ids = re.findall(r'href="/skills/([0-9a-f-]{36})"', skills)

    assert (
        failing_pages(
            app,
            memory_id=["lone1", "lone2\ufffd", "lone3"],
            item_id=["lone-review"],
            conversation_id=["slack:\ufffd"],
            doc_id=doc_ids,
        )
        == {}
    )


def test_export_and_the_mcp_server_serve_memories_holding_lone_surrogates(lone_surrogates):
    exported = run_cli("export", data_dir=lone_surrogates.data_dir)
    assert exported.returncode == 0, exported.stderr
    contents = {r["id"]: r["content"] for r in json.loads(exported.stdout)}
    assert contents["lone1"] == "Likes \ufffd tea"
    assert contents["lone2\ufffd"] == "\ufffdHalf\ufffd"
    assert contents["lone3"] == "Pair \U0001f600 and a stray \ufffd\ufffd"  # the pair is kept

    answers = mcp_calls(
        lone_surrogates,
        [
            {"action": "list"},
            {"action": "search", "keyword": "tea"},
            {"action": "add", "content": "Still works"},
        ],
    )
    assert [error for error, _ in answers] == [False] * 3, answers
    assert "Likes \ufffd tea" in answers[0][1] and "Likes \ufffd tea" in answers[1][1]


def test_repair_writes_the_replacement_characters_and_says_so(lone_surrogates):
    repaired = run_cli("repair", data_dir=lone_surrogates.data_dir)

    assert repaired.returncode == 0, repaired.stderr
    line = next(
        line
        for line in repaired.stdout.splitlines()
        if line.startswith(f"{lone_surrogates.memory_file}:")
    )
    assert "6 texts held a lone surrogate" in line and "U+FFFD" in line, line
    for path in (
        lone_surrogates.memory_file,
        lone_surrogates.review_file,
        lone_surrogates.conversation_file,
    ):
        raw = path.read_bytes()
        assert b"\\ud8" not in raw and b"\\udc" not in raw and b"\\udf" not in raw, path
    assert read_json(lone_surrogates.memory_file)[-1]["content"] == (
        "Pair \U0001f600 and a stray \ufffd\ufffd"
    )


def test_a_memory_restored_from_a_history_line_with_a_lone_surrogate_is_clean(tmp_path):
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    store = MemoryStore.from_settings(settings)
    memory = store.add("Likes tea")
    store.delete(memory.id)
    log = settings.memory_file.with_name("memories.history.jsonl")
    log.write_text(
        log.read_text(encoding="utf-8").replace("Likes tea", "Likes \\ud800 tea"), encoding="utf-8"
    )

    assert store.restore(memory.id).content == "Likes \ufffd tea"
    assert "Likes \ufffd tea" in settings.memory_file.read_text(encoding="utf-8")


# A thread whose times cannot be read has an unknown age: it is kept, never expired by cleanup.
@pytest.mark.parametrize("bad", ["0001-01-01T00:00:00+14:00", "not a time", {"x": 1}, [], ""])
def test_a_thread_whose_every_time_is_unreadable_is_not_cleaned_up(tmp_path, bad):
    from webapp.stores import ConversationStore

    path = tmp_path / "conversations.json"
    turns = [
        {"role": "user", "content": "Keep this thread", "timestamp": bad},
        {"role": "assistant", "content": "Kept.", "timestamp": bad},
    ]
    path.write_text(
        json.dumps({"cli:odd": {"createdAt": bad, "turns": turns, "trimmed": 0}}), "utf-8"
    )
    store = ConversationStore(path, max_age_days=30).init()
    assert store.cleanup() == 0
    assert "cli:odd" in json.loads(path.read_text("utf-8"))
    assert [t.content for t in store.get_history("cli:odd")] == ["Keep this thread", "Kept."]
    assert [s.id for s in store.list_conversations()] == ["cli:odd"]
    assert store.list_conversations()[0].expires_at > datetime.now(UTC)  # not shown as expired
