"""A property over random households (issue 35): whatever people, memories, threads, imports
and merges a household has, nothing one person keeps private reaches another person's view,
prompt (``compose_prompt`` for them), Review listing through the MCP tool, export, or the LLM
prompt of a thread they are not in.

Every private text carries a token of its own ("zq3"), so a leak is a plain substring. The
stores are real (a data folder per example); the LLM is a caller that keeps every prompt and
answers with a fact of the thread's speaker quoted loosely, as a real model does."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.curator.people import EVERYONE
from webapp.extraction.run import extract_conversation
from webapp.mcp.server import pending_review
from webapp.problems import CodedError
from webapp.prompts import compose_prompt, for_person
from webapp.stores import ConversationStore

NAMES = ("Maya", "Leo", "Ana")
STRANGERS = ("u-7", "u-8")


@dataclass
class Household:
    """What one example built: each person's private tokens."""

    curator: Curator
    people: dict[str, str]  # name → id
    private: dict[str, set[str]] = field(default_factory=dict)  # person id → tokens
    nobody: set[str] = field(default_factory=set)  # whose nobody could tell: in no view
    prompts: list[tuple[set[str | None], str]] = field(default_factory=list)


class LooseLlm:
    """An LLM caller that keeps each prompt and states one private fact of the thread's
    speaker with a quote that is not word for word."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def call(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return self.reply


memory_st = st.tuples(st.sampled_from((*NAMES, None)), st.integers(0, 999))
thread_st = st.tuples(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True), st.integers(0, 999)
)
import_st = st.lists(
    st.tuples(st.sampled_from((*NAMES, *STRANGERS, "household")), st.integers(0, 999)),
    max_size=4,
)


def build(folder: Path, people: list[str], memories: list[Any]) -> Household:
    curator = Curator.from_settings(make_settings(folder))
    curator.memories.init()
    made = {name: curator.people.add(name).id for name in people}
    house = Household(curator, made, {pid: set() for pid in made.values()})
    for index, (owner, n) in enumerate(memories):
        person = made.get(owner) if owner else None
        token = f"zq{index}x{n}"
        if owner and person is None:
            continue  # not a person of this household
        text = f"Keeps note {token} to themself" if person else f"Bins day is {token}"
        try:
            curator.remember(text, person=person, allow_similar=True)
        except CodedError:
            continue
        if person:
            house.private[person].add(token)
    return house


def run_threads(house: Household, folder: Path, threads: list[Any]) -> None:
    conversations = ConversationStore.from_settings(house.curator.settings).init()
    for index, (speakers, n) in enumerate(threads):
        ids = [house.people[name] for name in speakers if name in house.people]
        if not ids:
            continue
        thread = f"slack:T{index}:{n}"
        for pid in ids:
            conversations.add_exchange(thread, "I'm telling you something.", "OK.", person=pid)
        token = f"zt{index}x{n}"
        if len(ids) == 1:
            house.private[ids[0]].add(token)  # the only speaker's, whatever the quote
        else:
            house.nobody.add(token)  # undecided: it may be any speaker's
        reply = [
            {
                "content": f"Has a private matter {token}",
                "category": "general",
                "confidence": 0.95,
                "evidence": "they mentioned something",
            }
        ]
        caller = LooseLlm(json.dumps(reply))
        extract_conversation(house.curator.settings, thread, caller=caller)
        house.prompts += [(set(ids), prompt) for prompt in caller.prompts]


def run_import(house: Household, rows: list[Any]) -> None:
    if not rows:
        return
    results = []
    for index, (user, n) in enumerate(rows):
        token = f"zi{index}x{n}"
        results.append(
            {"id": f"m{index}", "memory": f"Has an imported note {token}", "user_id": user}
        )
        if user in house.people:
            house.private[house.people[user]].add(token)
        elif user != "household":
            house.nobody.add(token)  # a stranger's: it may be anyone's; no view may list it
    plan = house.curator.plan_import(json.dumps({"results": results}), fmt="mem0")
    house.curator.queue_import(plan)


def run_merges(house: Household, picks: list[tuple[int, int, bool]]) -> None:
    curator = house.curator
    for a, b, theirs in picks:
        kept = curator.memories.get_all()
        if len(kept) < 2:
            return
        keep, drop = kept[a % len(kept)], kept[b % len(kept)]
        if keep.id == drop.id:
            continue
        text = drop.content if theirs else keep.content
        versions = {keep.id: keep.version, drop.id: drop.version}
        try:
            curator.merge(keep.id, drop.id, content=text, expected=versions)
        except (CodedError, ValueError):
            continue


def approve_everything(house: Household) -> None:
    """A person approves every proposal as it stands (those whose owner is undecided stay)."""
    for item in house.curator.review.pending():
        try:
            house.curator.approve(item.id)
        except (CodedError, ValueError):
            continue


def check(house: Household) -> None:
    curator = house.curator
    everything = curator.memories.get_all()
    for name, pid in house.people.items():
        others = set().union(house.nobody, *(t for p, t in house.private.items() if p != pid))
        others -= house.private[pid]
        if not others:
            continue
        seen = {
            "view": "\n".join(m.content for m in curator.memories.for_person(pid)),
            "prompt": compose_prompt(everything, [], "hi", pid),
            "review": pending_review(curator, name),
            "export": curator.export("json", view=pid).decode("utf-8")
            + curator.export("mcp-jsonl", view=pid).decode("utf-8"),
        }
        for where, text in seen.items():
            leaked = sorted(token for token in others if token in text)
            assert not leaked, f"{where} of {name} shows {leaked}"
    household = compose_prompt(for_person(everything, None), [], "hi") + pending_review(curator)
    household += curator.export("markdown", view=None).decode("utf-8")
    hidden = set().union(house.nobody, *house.private.values())
    assert not sorted(token for token in hidden if token in household)
    assert curator.export("json", view=None)
    for speakers, prompt in house.prompts:
        for pid, tokens in house.private.items():
            if pid in speakers:
                continue
            leaked = sorted(token for token in tokens if token in prompt)
            assert not leaked, f"the LLM prompt of a thread of {speakers} shows {leaked}"


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    people=st.lists(st.sampled_from(NAMES), min_size=2, max_size=3, unique=True),
    memories=st.lists(memory_st, max_size=6),
    threads=st.lists(thread_st, max_size=2),
    imports=import_st,
    merges=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.booleans()), max_size=3),
)
def test_nothing_private_reaches_another_person(people, memories, threads, imports, merges):
    with tempfile.TemporaryDirectory(prefix="household-") as folder:
        root = Path(folder)
        house = build(root, people, memories)
        run_threads(house, root, threads)
        run_import(house, imports)
        approve_everything(house)
        run_merges(house, merges)
        check(house)
        assert house.curator.export("json", view=EVERYONE)
