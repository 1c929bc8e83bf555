"""One person's private facts stay theirs through extraction (issue 35, 1, 2 and 6):
``memory-curator extract`` as a real process, the LLM a real HTTP server on 127.0.0.1 speaking
OpenAI's chat-completions format, and each person's prompt read back through
``memory-curator prompt``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.llm import FakeLlmServer, openai_body
from webapp.curator import Curator
from webapp.curator.errors import OwnerUndecidedError
from webapp.extraction.attribution import UNDECIDED, attribute
from webapp.settings import Settings
from webapp.stores import ConversationStore
from webapp.stores.conversations import ConversationTurn

REPO = Path(__file__).resolve().parent.parent
THREAD = "slack:C9:1732000000.000100"


def llm_env(server: FakeLlmServer, mode: str = "auto") -> dict[str, str]:
    return {
        "MEMORY_REVIEW_MODE": mode,
        "MEMORY_LLM_PROVIDER": "openai",
        "MEMORY_LLM_MODEL": "local-model",
        "MEMORY_LLM_BASE_URL": server.url + "/v1",
        "MEMORY_LLM_API_KEY": "sk-test",
        "MEMORY_LLM_TIMEOUT": "20",
    }


def prompt_sent(server: FakeLlmServer, index: int = -1) -> str:
    """The text of every message of one chat-completions request the server received."""
    payload: dict[str, Any] = server.requests[index][2]
    return "\n".join(str(m.get("content")) for m in payload["messages"])


@pytest.fixture
def curator(settings: Settings) -> Curator:
    curator = Curator.from_settings(settings)
    curator.memories.init()
    return curator


@pytest.fixture
def household(curator: Curator) -> tuple[str, str]:
    maya = curator.people.add("Maya", identities=(("slack", "U1"),))
    leo = curator.people.add("Leo", identities=(("slack", "U2"),))
    return maya.id, leo.id


@pytest.fixture
def llm() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(openai_body) as server:
        yield server


def say(settings: Settings, *lines: tuple[str, str | None], thread: str = THREAD) -> None:
    """A thread where each (text, person id) is one user message and a short reply."""
    store = ConversationStore.from_settings(settings).init()
    for text, person in lines:
        store.add_exchange(thread, text, "OK.", person=person)


def fact(content: str, evidence: str, **more: Any) -> str:
    return json.dumps(
        [
            {"content": content, "category": "general", "confidence": 0.95, "evidence": evidence}
            | more
        ]
    )


# ------------------------------------------------------------------ 1. a loose quote
@pytest.mark.parametrize(
    "quote",
    [
        "she said she is pregnant",  # the LLM's paraphrase
        "I am expecting a baby",  # other words altogether
        "",  # no evidence at all
    ],
)
def test_a_loose_quote_from_the_only_speaker_is_theirs_never_the_households(
    settings, curator, household, llm, quote
):
    maya, leo = household
    say(settings, ("I'm pregnant, keep it between us.", maya))
    llm.reply = fact("Is pregnant", quote)
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm)},
        ok=True,
    )
    [kept] = curator.memories.get_all()
    assert (kept.content, kept.person) == ("Is pregnant", maya)
    assert (
        "pregnant"
        not in run_cli(
            "prompt", "hi", "--person", "Leo", data_dir=settings.data_dir, ok=True
        ).stdout
    )
    assert (
        "pregnant"
        not in run_cli("prompt", "hi", "--household", data_dir=settings.data_dir, ok=True).stdout
    )
    assert (
        "Is pregnant"
        in run_cli("prompt", "hi", "--person", "Maya", data_dir=settings.data_dir, ok=True).stdout
    )


def test_a_quote_matching_nobody_in_a_shared_thread_waits_with_its_owner_undecided(
    settings, curator, household, llm
):
    maya, leo = household
    say(
        settings,
        ("I'm pregnant, keep it between us.", maya),
        ("Let's order pizza tonight.", leo),
    )
    llm.reply = fact("Is pregnant", "someone here is expecting")
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm)},
        ok=True,
    )  # auto mode
    assert curator.memories.get_all() == []  # never written to the household
    [item] = curator.review.pending()
    assert item.content == "Is pregnant" and item.owner_undecided and item.person is None
    for who in ("--person", "Leo"), ("--person", "Maya"), ("--household",):
        assert (
            "pregnant"
            not in run_cli("prompt", "hi", *who, data_dir=settings.data_dir, ok=True).stdout
        )
    # Nobody's view lists it; approving it asks whose it is first.
    assert curator.pending(leo) == [] and curator.pending(None) == []
    with pytest.raises(OwnerUndecidedError):
        curator.approve(item.id)
    assert curator.memories.get_all() == []
    curator.approve(item.id, person=maya)
    assert [(m.content, m.person) for m in curator.memories.get_all()] == [("Is pregnant", maya)]


def test_a_paraphrase_clearly_closer_to_one_speakers_words_is_theirs(
    settings, curator, household, llm
):
    maya, leo = household
    say(
        settings,
        ("I have been learning to play the cello every evening.", maya),
        ("The weather is nice today.", leo),
    )
    llm.reply = fact("Plays the cello", "I've been learning to play the cello every evening")
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm, "manual")},
        ok=True,
    )
    [item] = curator.review.pending()
    assert item.person == maya and not item.owner_undecided


@pytest.mark.parametrize(
    "content, evidence, expected",
    [
        ("Is pregnant", "I'm pregnant", "maya"),  # word for word
        ("Is pregnant", "somebody is expecting", UNDECIDED),  # nobody's words
        ("Likes pizza", "LET'S ORDER PIZZA", "leo"),  # Leo's words, another case
        ("Likes pizza", "lets order a pizza tonight", "leo"),  # close to Leo's only
        ("Our Wi-Fi is Lighthouse", "nobody said this", None),  # the household's by its words
        ("Leo is allergic to nuts", "nobody said this", "leo"),  # named
        ("Is tired", "", UNDECIDED),
    ],
)
def test_whose_a_fact_is_in_a_thread_of_two(curator, household, content, evidence, expected):
    maya, leo = household
    stamp = ConversationTurn.from_dict({}).timestamp
    turns = [
        ConversationTurn("user", "I'm pregnant, keep it between us.", stamp, maya),
        ConversationTurn("assistant", "Of course.", stamp),
        ConversationTurn("user", "Let's order pizza tonight.", stamp, leo),
    ]
    wanted = {"maya": maya, "leo": leo}.get(expected, expected) if expected else expected
    assert attribute(content, evidence, turns, curator.people.people()) == wanted


# ------------------------------------------------------------------ 2. what the LLM is shown
def test_the_llm_reading_one_persons_thread_sees_only_their_view(settings, curator, household, llm):
    maya, leo = household
    party = curator.remember("Plans a surprise party for Maya on Friday.", person=leo)
    cats = curator.remember("Is allergic to cats.", person=maya)
    wifi = curator.remember("Our Wi-Fi is called Lighthouse.")
    say(settings, ("I started drinking oolong tea.", maya))
    llm.reply = "[]"
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm, "manual")},
        ok=True,
    )
    sent = prompt_sent(llm)
    assert f"[{cats.id}] Is allergic to cats." in sent
    assert f"[{wifi.id}] Our Wi-Fi is called Lighthouse." in sent
    assert party.id not in sent and "surprise party" not in sent
    # A thread nobody of the household speaks in: the household's memories only.
    ConversationStore.from_settings(settings).add_exchange("slack:C0:1.1", "Hi there.", "Hi!")
    run_cli(
        "extract",
        "--conversation",
        "slack:C0:1.1",
        data_dir=settings.data_dir,
        env={**llm_env(llm, "manual")},
        ok=True,
    )
    sent = prompt_sent(llm)
    assert wifi.id in sent and cats.id not in sent and party.id not in sent


def test_an_llm_change_may_name_only_a_memory_the_thread_may_see(settings, curator, household, llm):
    maya, leo = household
    party = curator.remember("Plans a surprise party for Maya on Friday.", person=leo)
    say(settings, ("Forget the party on Friday.", maya))
    llm.reply = json.dumps([{"action": "delete", "id": party.id, "confidence": 0.95}])
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm, "manual")},
        ok=True,
    )
    assert [i for i in curator.review.pending() if i.memory_id == party.id] == []
    assert curator.memories.get(party.id) is not None


def test_an_llm_update_of_the_speakers_own_memory_stays_theirs(settings, curator, household, llm):
    maya, _ = household
    tea = curator.remember("Drinks green tea every morning.", person=maya)
    say(settings, ("I switched to oolong.", maya))
    llm.reply = json.dumps(
        [
            {
                "action": "update",
                "id": tea.id,
                "content": "Drinks oolong tea every morning.",
                "confidence": 0.95,
                "evidence": "she switched",
            }
        ]
    )
    run_cli(
        "extract",
        "--conversation",
        THREAD,
        data_dir=settings.data_dir,
        env={**llm_env(llm, "manual")},
        ok=True,
    )
    [item] = curator.review.pending()
    assert (item.action, item.memory_id) == ("update", tea.id)


# ------------------------------------------------------------------ 6. tombstones per person
def test_one_persons_dont_propose_again_never_drops_anothers_fact(settings, curator, household):
    maya, leo = household
    jazz = curator.remember("Likes jazz", person=leo)
    run_cli("delete", jazz.id, "--dont-propose-again", data_dir=settings.data_dir, ok=True)
    [tombstone] = curator.tombstones.all()
    assert tombstone.person == leo and tombstone.no_propose
    say(settings, ("Remember that I like jazz.", maya))
    say(settings, ("Remember that I like jazz.", leo), thread="slack:C9:2.2")
    run_cli("extract", "--all", data_dir=settings.data_dir, ok=True)
    # Maya's is new for her; Leo's own stays dropped.
    assert [(i.content, i.person, i.tombstone_id) for i in curator.review.pending()] == [
        ("Likes jazz", maya, None)
    ]


@pytest.mark.parametrize("deleted_by", ["household", "maya"])
def test_a_deletion_marks_only_its_owners_fact(settings, curator, household, deleted_by):
    maya, leo = household
    owner = None if deleted_by == "household" else maya
    tea = curator.remember("Likes oolong tea", person=owner)
    curator.forget(tea.id)  # deleted, proposable again but marked
    say(settings, ("Remember that I like oolong tea.", leo))
    run_cli("extract", "--conversation", THREAD, data_dir=settings.data_dir, ok=True)
    [item] = curator.review.pending()
    assert (item.person, item.tombstone_id) == (leo, None)


def test_a_tombstone_from_before_owners_were_recorded_finds_its_owner_in_the_history(
    settings, curator, household
):
    maya, leo = household
    jazz = curator.remember("Likes jazz", person=leo)
    curator.forget(jazz.id, dont_propose_again=True)
    path = curator.tombstones.path
    records = json.loads(path.read_text(encoding="utf-8"))
    for record in records:
        del record["person"]  # as an older version wrote it
    path.write_text(json.dumps(records), encoding="utf-8")
    say(settings, ("Remember that I like jazz.", maya))
    say(settings, ("Remember that I like jazz.", leo), thread="slack:C9:2.2")
    run_cli("extract", "--all", data_dir=settings.data_dir, ok=True)
    assert [(i.content, i.person) for i in curator.review.pending()] == [("Likes jazz", maya)]


def test_an_old_export_brings_back_another_persons_same_fact(
    settings, curator, household, tmp_path
):
    maya, leo = household
    file = settings.memory_file
    before = file.read_bytes() if file.exists() else b"[]"
    hers = curator.remember("Likes jazz", person=maya)
    export = tmp_path / "backup.json"
    export.write_bytes(curator.memories.export())
    # Gone without a tombstone (the file put back from a copy older than her fact; a delete
    # through the library is remembered as forgotten since issue 43); the backup has it.
    file.write_bytes(before)
    his = curator.remember("Likes jazz", person=leo)
    curator.forget(his.id, dont_propose_again=True)
    run_cli("import", str(export), "--format", "json", data_dir=settings.data_dir, ok=True)
    assert [(m.id, m.person) for m in curator.memories.get_all()] == [(hers.id, maya)]
