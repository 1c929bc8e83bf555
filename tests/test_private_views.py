"""One person's private facts stay theirs in Review through MCP, in imports and exports, and in
Needs attention (issue 35, 3, 4 and 5): the MCP server as a real process through the SDK's own
client, ``memory-curator import``/``export`` as real processes, the dashboard through Flask's
test client."""

from __future__ import annotations

import html
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.cli import run_cli
from webapp import create_app
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import NotFoundError, Proposal

REPO = Path(__file__).resolve().parent.parent


def review_memory(settings: Settings, default_person: str = "") -> str:
    """``review_memory``'s answer from ``memory-curator mcp`` in a session scoped to
    ``default_person`` (MEMORY_MCP_DEFAULT_PERSON), through the SDK's client."""
    env = {"MEMORY_MCP_DEFAULT_PERSON": default_person} if default_person else {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "mcp", "--data-dir", str(settings.data_dir)],
        env=env,
        cwd=REPO,
    )

    async def scenario() -> str:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(60):
                        await session.initialize()
                        result = await session.call_tool("review_memory", {})
        assert not result.is_error
        text: str = result.content[0].text
        return text

    return anyio.run(scenario)


@pytest.fixture
def curator(settings: Settings) -> Curator:
    curator = Curator.from_settings(settings)
    curator.memories.init()
    return curator


# ------------------------------------------------------------------ 3. review_memory
def test_review_memory_lists_only_the_sessions_view_saying_whose(settings, curator):
    maya = curator.people.add("Maya")
    leo = curator.people.add("Leo")
    pregnant, party, bins, unsure = curator.review.submit(
        [
            Proposal("add", "Is pregnant", person=maya.id),
            Proposal("add", "Plans a surprise party for Maya", person=leo.id),
            Proposal("add", "Bins go out on Tuesday"),
            Proposal("add", "Has a criminal record", owner_undecided=True),
        ]
    )
    leos = review_memory(settings, "Leo")
    assert "Is pregnant" not in leos and "criminal" not in leos
    assert f"[{party.id}] add (general) Plans a surprise party for Maya — Leo's" in leos
    assert f"[{bins.id}] add (general) Bins go out on Tuesday — the household's" in leos
    mayas = review_memory(settings, maya.id)
    assert "Is pregnant — Maya's" in mayas and "surprise" not in mayas
    # No person: the household's only; a name nobody has: the same.
    for answer in (review_memory(settings), review_memory(settings, "Nobody")):
        assert "Bins go out on Tuesday" in answer
        assert not any(word in answer for word in ("pregnant", "surprise", "criminal"))
    assert unsure.owner_undecided and pregnant.person == maya.id


# ------------------------------------------------------------------ proposing, keeping what was said
def test_proposing_and_keeping_an_exchange_stay_within_the_curators_view(settings, curator):
    maya, leo = curator.add_person("Maya"), curator.add_person("Leo")
    secret = curator.remember("Is pregnant", person=maya.id)
    said = ["I am pregnant", "Congratulations"]
    curator.keep_exchange(conversation_id="slack:maya", said=said[0], reply=said[1], person=maya.id)
    leos = curator.within(leo.id)
    refusals = {
        "memory_gone": lambda: leos.propose(
            action="delete", content="Is pregnant", memory_id=secret.id
        ),
        "person_unknown": lambda: leos.propose(action="add", content="Is tired", person=maya.id),
        "conversation_not_found": lambda: leos.keep_exchange(
            conversation_id="slack:maya", said="What did Maya say?", reply="I cannot say."
        ),
    }
    for code, refused in refusals.items():
        with pytest.raises(NotFoundError) as exc:
            refused()
        assert exc.value.code == code
    with pytest.raises(NotFoundError, match="No person"):
        leos.keep_exchange(conversation_id="slack:leo", said="x", reply="y", person=maya.id)
    assert curator.review.pending() == []
    assert [t.content for t in curator.conversations.get_history("slack:maya")] == said
    assert curator.conversations.get_history("slack:leo") == []

    # Their own and the household's: queued once, kept as said by them.
    mine = leos.propose(action="add", content="Likes jazz", person=leo.id, evidence="I like jazz")
    assert mine is not None and mine.person == leo.id and mine.evidence == "I like jazz"
    assert leos.propose(action="add", content="Likes jazz", person=leo.id) is None
    update = curator.propose(action="update", content="Is pregnant with twins", memory_id=secret.id)
    assert update is not None and update.current_content == "Is pregnant"
    kept = leos.keep_exchange(conversation_id="slack:leo", said="I like jazz", reply="Noted")
    assert kept == "stored"
    assert [t.content for t in curator.conversations.get_history("slack:leo")] == [
        "I like jazz",
        "Noted",
    ]


# ------------------------------------------------------------------ 4. imports
def mem0_file(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    path = tmp_path / "mem0.json"
    results = [
        {"id": f"m{n}", "memory": text, "user_id": user} for n, (text, user) in enumerate(rows)
    ]
    path.write_text(json.dumps({"results": results}), encoding="utf-8")
    return path


def test_a_mem0_import_of_users_nobody_knows_keeps_them_apart_and_undecided(
    settings, curator, tmp_path
):
    curator.people.add("Maya")
    path = mem0_file(
        tmp_path,
        [
            ("Is pregnant", "u-7"),
            ("Is pregnant", "u-8"),
            ("Has a criminal record", "u-8"),
            ("Is allergic to cats", "Maya"),
            ("Bins go out on Tuesday", "household"),
        ],
    )
    run_cli("import", str(path), "--format", "mem0", data_dir=settings.data_dir, ok=True)
    maya = curator.person("Maya")
    got = {(i.content, i.person, i.owner_undecided) for i in curator.review.pending()}
    assert got == {
        ("u-7: Is pregnant", None, True),
        ("u-8: Is pregnant", None, True),
        ("u-8: Has a criminal record", None, True),
        ("Is allergic to cats", maya, False),
        ("Bins go out on Tuesday", None, False),
    }
    # "Approve all" keeps what has an owner and leaves the strangers' facts for a person.
    [source] = {i.imported_from for i in curator.review.pending()}
    decision = curator.approve_source(str(source))
    assert (decision.approved, decision.undecided) == (2, 3)
    assert {(m.content, m.person) for m in curator.memories.get_all()} == {
        ("Is allergic to cats", maya),
        ("Bins go out on Tuesday", None),
    }
    # A second import of the same strangers proposes nothing new, and never merges them.
    run_cli("import", str(path), "--format", "mem0", data_dir=settings.data_dir, ok=True)
    assert len(curator.review.pending()) == 3


def test_two_people_with_one_name_round_trip_an_export_to_each(settings, curator, tmp_path):
    alex_a = curator.people.add("Alex")
    alex_b = curator.people.add("alex")
    curator.remember("Is allergic to peanuts", person=alex_a.id)
    curator.remember("Plays the cello on Sundays", person=alex_b.id)
    curator.remember("Bins go out on Tuesday")
    for fmt, name in (("mcp-jsonl", "memory.jsonl"), ("mem0", "mem0.json")):
        exported = tmp_path / name
        exported.write_text(
            run_cli("export", "--format", fmt, data_dir=settings.data_dir, ok=True).stdout,
            encoding="utf-8",
        )
        fresh = make_empty(settings, tmp_path / fmt, curator)
        run_cli("import", str(exported), "--format", fmt, data_dir=fresh.data_dir, ok=True)
        got = {(i.content, i.person) for i in Curator.from_settings(fresh).review.pending()}
        assert got == {
            ("Is allergic to peanuts", alex_a.id),
            ("Plays the cello on Sundays", alex_b.id),
            ("Bins go out on Tuesday", None),
        }, fmt


def make_empty(settings: Settings, folder: Path, curator: Curator) -> Settings:
    """Another data folder with the same people and no memories."""
    from dataclasses import replace  # noqa: PLC0415

    fresh = replace(settings).with_data_dir(folder)
    folder.mkdir(parents=True)
    (folder / "people.json").write_bytes(Path(curator.people.path).read_bytes())
    Curator.from_settings(fresh).memories.init()
    return fresh


def test_an_import_never_proposes_to_change_a_persons_private_memory(settings, curator, tmp_path):
    sam = curator.people.add("Sam")
    curator.people.add("Alex")
    sams = curator.remember("Has a daughter named Maya who is 6.", person=sam.id)
    notes = tmp_path / "alex.txt"
    notes.write_text("Has a daughter named Maya who is 7.\nLikes long walks\n", encoding="utf-8")
    run_cli("import", str(notes), "--format", "text", data_dir=settings.data_dir, ok=True)
    assert [i for i in curator.review.pending() if i.memory_id == sams.id] == []
    [source] = {i.imported_from for i in curator.review.pending()}
    curator.approve_source(str(source))  # "Approve all"
    assert curator.memories.get(sams.id).content == sams.content


# ------------------------------------------------------------------ 5. Needs attention
@pytest.fixture
def client(settings: Settings) -> Any:
    app = create_app(settings)
    app.config.update(TESTING=True, WTF_CSRF_ENABLED=False)
    return app.test_client()


def settled(client: Any, url: str, deadline: float = 90.0) -> str:
    """The page once it shows a current scan (a scan by meaning may still be loading)."""
    stop = time.monotonic() + deadline
    while True:
        page: str = client.get(url).get_data(as_text=True)
        if 'http-equiv="refresh"' not in page or time.monotonic() > stop:
            return page
        time.sleep(0.2)


def form_fields(form: str) -> dict[str, str]:
    """The fields a form posts as the page rendered it (hidden inputs and its textarea)."""
    fields = {
        html.unescape(name): html.unescape(value)
        for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form)
    }
    for name, value in re.findall(
        r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.S
    ):
        fields[name] = html.unescape(value)
    return fields


def merge_form(page: str) -> dict[str, str]:
    """The fields of the finding's Merge form (the one with a textarea)."""
    forms = re.findall(r"<form[^>]*/attention/merge[^>]*>(.*?)</form>", page, re.S)
    [merge] = [f for f in forms if "<textarea" in f]
    return form_fields(merge)


@pytest.mark.parametrize("household_first", [True, False])
def test_the_default_merge_of_the_households_and_a_persons_keeps_the_private_words_private(
    settings, curator, client, household_first
):
    maya = curator.people.add("Maya")
    texts = ("Avoids sugar in desserts.", "Avoids sugar in desserts (diabetic).")
    if household_first:
        shared = curator.remember(texts[0])
        private = curator.remember(texts[1], person=maya.id, allow_similar=True)
    else:
        private = curator.remember(texts[1], person=maya.id)
        shared = curator.remember(texts[0], allow_similar=True)
    page = settled(client, "/attention/?kind=duplicate")
    fields = merge_form(page)
    assert fields["keep"] == shared.id and fields["drop"] == private.id
    assert "diabetic" not in fields["content"]
    answer = client.post("/attention/merge", data=fields, headers={"HX-Request": "true"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    [kept] = curator.memories.get_all()
    assert (kept.id, kept.person, kept.content) == (shared.id, None, texts[0])
    assert curator.memories.deleted(private.id) is not None  # restorable
    # The person's wording reaching the household is refused, whatever the form says.
    curator.restore(private.id)
    fields = merge_form(settled(client, "/attention/?kind=duplicate"))
    fields["content"] = texts[1]
    answer = client.post("/attention/merge", data=fields, headers={"HX-Request": "true"})
    assert answer.status_code == 422
    assert {m.content for m in curator.memories.get_all()} == set(texts)


def test_move_to_household_publishes_only_the_versions_the_page_showed(settings, curator, client):
    ana, leo = curator.people.add("Ana"), curator.people.add("Leo")
    first = curator.remember("The bins go out on Tuesday.", person=ana.id)
    curator.remember("The bins go out on Tuesday.", person=leo.id)
    page = settled(client, "/attention/?kind=duplicate")
    forms = re.findall(r"<form[^>]*/attention/household[^>]*>(.*?)</form>", page, re.S)
    assert forms, page
    form = forms[0]
    ids = re.findall(r'name="id" value="([^"]+)"', form)
    fields: dict[str, Any] = {"id": ids, "kind": "household"}
    fields |= {k: v for k, v in form_fields(form).items() if k.startswith("version-")}
    # Ana's copy is edited after the page offered the move: her new words stay hers.
    curator.revise(
        first.id, content="The bins go out on Tuesday; my pregnancy test is in the drawer."
    )
    answer = client.post("/attention/household", data=fields, headers={"HX-Request": "true"})
    assert answer.status_code == 409
    assert {m.person for m in curator.memories.get_all()} == {ana.id, leo.id}
    # Offered again, it moves the versions shown.
    curator.revise(first.id, content="The bins go out on Tuesday.")
    page = settled(client, "/attention/?kind=duplicate")
    form = re.findall(r"<form[^>]*/attention/household[^>]*>(.*?)</form>", page, re.S)[0]
    fields = {"id": re.findall(r'name="id" value="([^"]+)"', form), "kind": "household"}
    fields |= {k: v for k, v in form_fields(form).items() if k.startswith("version-")}
    assert client.post("/attention/household", data=fields).status_code == 303
    assert [(m.content, m.person) for m in curator.memories.get_all()] == [
        ("The bins go out on Tuesday.", None)
    ]
