"""Needs attention's LLM tier reaches past words: with an LLM configured (a real HTTP server on
127.0.0.1 speaking OpenAI's chat format), each memory's nearest neighbours by meaning are sent
to it, not only the pairs the rules flagged; its verdicts show as the model's; a pair whose
memories did not change is not asked again, even by another process; each scan stays within
its limits; and no request ever holds two people's private memories."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from html import unescape

import pytest

from tests.support.attention import (
    MODEL,
    OTHERS,
    TEETOTAL,
    WINE,
    answering,
    pairs_in,
    settled,
    wine_contradicts_teetotal,
)
from tests.support.llm import FakeLlmServer, openai_body
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.attention.llm_check import batch_prompt, estimate_tokens, pair_checker_from_settings
from webapp.attention.llm_tier import second_opinion, tier_pairs
from webapp.attention.pair_verdicts import pair_verdicts, verdict_path_for
from webapp.attention.scanner import scan
from webapp.attention.semantic import semantic_index
from webapp.curator import Curator
from webapp.stores import MemoryStore


@pytest.fixture
def server():
    with FakeLlmServer(openai_body) as running:
        running.reply_for = answering(lambda a, b: "different")
        yield running


def configured(settings, server, **changes):
    return dataclasses.replace(
        settings,
        llm_provider="openai",
        llm_model=MODEL,
        llm_base_url=server.url + "/v1",
        llm_timeout=10,
        **changes,
    )


def client_for(settings) -> CsrfClient:
    app = create_app(settings)
    app.config.update(TESTING=True)
    return CsrfClient(app.test_client())


def add(settings, *texts: str, person: str | None = None) -> list[str]:
    store = MemoryStore.from_settings(settings, actor="test")
    return [store.add(text, person=person).id for text in texts]


def asked(server) -> list[list[tuple[str, str]]]:
    """The pairs of each request the server received, in order."""
    return [pairs_in(payload) for _, _, payload in server.requests]


def text_of(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", html)))


def test_the_llm_is_asked_about_a_near_neighbour_the_rules_did_not_flag(settings, server):
    add(settings, TEETOTAL, WINE, *OTHERS)
    offline = client_for(settings)
    html = settled(offline, "/attention/?kind=contradiction")
    assert "Contradictions (0)" in html  # neither the rules nor the model link the two
    assert "Without an LLM" in text_of(html)
    assert "Possibly related" not in html  # the LLM's own tab, only with an LLM
    assert offline.get("/attention/?kind=related").status_code == 200

    server.reply_for = answering(wine_contradicts_teetotal)
    html = settled(client_for(configured(settings, server)), "/attention/?kind=contradiction")
    sent = [sorted(pair) for pairs in asked(server) for pair in pairs]
    assert sorted((TEETOTAL, WINE)) in sent
    assert "Contradictions (1)" in html
    page = text_of(html)
    assert f"checked by {MODEL}; the rules did not flag it" in page
    assert f"{MODEL} reads these as contradicting each other." in page
    assert TEETOTAL in page and WINE in page
    assert "Without an LLM" not in page


def test_a_pair_it_is_unsure_of_is_shown_as_possibly_related_and_nothing_changes(settings, server):
    add(settings, TEETOTAL, WINE, *OTHERS)
    before = sorted(m.content for m in MemoryStore.from_settings(settings).get_all())
    server.reply_for = answering(
        lambda a, b: "unsure" if {a, b} == {TEETOTAL, WINE} else "different"
    )
    html = settled(client_for(configured(settings, server)), "/attention/?kind=related")
    page = text_of(html)
    assert "Possibly related (1)" in page and "Contradictions (0)" in page
    assert f"{MODEL} reads these as possibly related, but is not sure." in page
    assert sorted(m.content for m in MemoryStore.from_settings(settings).get_all()) == before


def test_a_rescan_with_nothing_changed_asks_nothing_even_in_another_process(settings, server):
    add(settings, TEETOTAL, WINE, *OTHERS)
    server.reply_for = answering(wine_contradicts_teetotal)
    settled(client_for(configured(settings, server)))
    first = len(server.requests)
    assert first >= 1
    # a new dashboard (its own scanner and checker): the verdicts are read from the data folder
    html = settled(client_for(configured(settings, server)), "/attention/?kind=contradiction")
    assert len(server.requests) == first
    assert "Contradictions (1)" in html and f"checked by {MODEL}" in html
    # the file keeps the verdicts under keyed hashes, never a memory's words
    raw = verdict_path_for(settings.memory_file).read_bytes()
    assert all(text.encode() not in raw for text in (TEETOTAL, WINE, *OTHERS))


def test_delete_forever_takes_a_memorys_verdicts_out_of_the_kept_ones(settings, server):
    teetotal, _wine, *_ = add(settings, TEETOTAL, WINE, *OTHERS)
    server.reply_for = answering(wine_contradicts_teetotal)
    settled(client_for(configured(settings, server)))
    kept = pair_verdicts(settings.memory_file)
    key = semantic_index(settings.memory_file).text_key(TEETOTAL).hex()
    assert key in verdict_path_for(settings.memory_file).read_text()
    assert kept.get(MODEL, [(TEETOTAL, WINE)]) == {(TEETOTAL, WINE): "contradiction"}

    Curator.from_settings(settings).forget(teetotal, forever=True)
    assert kept.get(MODEL, [(TEETOTAL, WINE)]) == {}
    kept.put(MODEL, {(WINE, OTHERS[0]): "different"})  # the next write leaves it out
    assert key not in verdict_path_for(settings.memory_file).read_text()


def test_each_scan_stays_within_its_pairs_and_tokens(settings, server):
    limited = configured(settings, server, llm_pairs_per_scan=3)
    add(settings, TEETOTAL, WINE, *OTHERS)
    store = MemoryStore.from_settings(limited)
    memories = store.get_all()
    index = semantic_index(limited.memory_file)
    findings = scan(memories, today=datetime.now(UTC).date(), stale_days=180, semantic=index)
    pairs = tier_pairs(findings, memories, index)
    assert len(pairs.texts) > 6
    checker = pair_checker_from_settings(limited)
    assert checker is not None
    opinion = second_opinion(findings, pairs, checker)
    assert [len(p) for p in asked(server)] == [3] and opinion.more
    second_opinion(findings, pairs, checker)
    sent = [sorted(pair) for pairs_sent in asked(server) for pair in pairs_sent]
    assert [len(p) for p in asked(server)] == [3, 3] and len({tuple(p) for p in sent}) == 6

    # a token budget that one pair's request fits and two pairs' do not
    one = estimate_tokens(batch_prompt(pairs.texts[:1]))
    assert estimate_tokens(batch_prompt(pairs.texts[:2])) > one + 5
    few_tokens = pair_checker_from_settings(
        dataclasses.replace(limited, llm_tokens_per_scan=one + 5)
    )
    assert few_tokens is not None
    server.requests.clear()
    second_opinion(findings, pairs, few_tokens)
    assert [len(p) for p in asked(server)] == [1]


def test_the_dashboard_asks_a_bounded_number_of_pairs_a_scan_until_all_are_asked(settings, server):
    add(settings, TEETOTAL, WINE, *OTHERS)
    server.reply_for = answering(wine_contradicts_teetotal)
    html = settled(client_for(configured(settings, server, llm_pairs_per_scan=2)))
    assert all(len(pairs) <= 2 for pairs in asked(server))
    assert len(server.requests) >= 3  # the scans went on until every pair had a verdict
    assert "Contradictions (1)" in html


def test_no_request_holds_two_peoples_private_memories(settings, server):
    household = ("Dinner is at seven", "The family car is a blue Skoda")
    alice = ("Is teetotal", "Does not drink alcohol at parties", "Goes running at 6am")
    bob = ("Has a glass of wine with dinner", "Likes a cold beer on Fridays", "Runs at 7am")
    add(settings, *household)
    add(settings, *alice, person="alice")
    add(settings, *bob, person="bob")
    # the same fact kept by both: offered as the household's, never sent as a pair
    add(settings, "Prefers green tea", person="alice")
    add(settings, "prefers green tea.", person="bob")
    owner: dict[str, str | None] = {"Prefers green tea": "alice", "prefers green tea.": "bob"}
    owner |= {
        **dict.fromkeys(household),
        **dict.fromkeys(alice, "alice"),
        **dict.fromkeys(bob, "bob"),
    }
    server.reply_for = answering(lambda a, b: "unsure")
    html = settled(client_for(configured(settings, server, llm_pairs_per_scan=100)))
    requests = asked(server)
    assert requests
    people_asked = set()
    for pairs in requests:
        people = {owner[text] for pair in pairs for text in pair} - {None}
        assert len(people) <= 1, pairs
        people_asked |= people
    assert people_asked == {"alice", "bob"}  # each person's memories were asked about
    assert "Possibly related" in html


def test_the_verdict_file_is_listed_among_the_data_folders_files(settings, server):
    add(settings, TEETOTAL, WINE)
    settled(client_for(configured(settings, server)))
    listed = {path.name for path in Curator.from_settings(settings).folder_files()}
    assert verdict_path_for(settings.memory_file).name in listed
