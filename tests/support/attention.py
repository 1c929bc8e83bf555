"""Needs attention's LLM tier as its tests drive it: the model's name, a fake LLM that
answers the pair check, and the memories whose pairs it is asked about."""

from __future__ import annotations

import json
import re
import time
from typing import Any

MODEL = "judge-model"


def pairs_in(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """The pairs of texts a request asks about, read back from its JSON strings."""
    prompt = payload["messages"][0]["content"]
    found = re.findall(r"^\d+\. A: (\".*\")\n   B: (\".*\")$", prompt, re.M)
    return [(json.loads(a), json.loads(b)) for a, b in found]


def answering(rule):
    """A reply_for that gives each pair the verdict ``rule(a, b)``."""

    def reply(payload: dict[str, Any]) -> str:
        verdicts = [
            {"pair": n, "verdict": rule(a, b)} for n, (a, b) in enumerate(pairs_in(payload), 1)
        ]
        return "```json\n" + json.dumps(verdicts) + "\n```"

    return reply


def settled(client, url: str = "/attention/", deadline: float = 90.0) -> str:
    """The page once its scan is current and the LLM's verdicts are in (reloading as a person
    would when the page says they are on their way)."""
    stop = time.monotonic() + deadline
    while True:
        html = client.get(url).get_data(as_text=True)
        waiting = 'http-equiv="refresh"' in html or "is checking these pairs" in html
        if not waiting or time.monotonic() > stop:
            return html
        time.sleep(0.2)


TEETOTAL = "Is teetotal"


WINE = "Has a glass of wine with dinner"


OTHERS = (
    "The bins go out on Tuesday evening",
    "The router is in the hallway cupboard",
    "Mia's piano lesson is on Saturday at 10:00",
    "The car is due for its service in March",
)


def wine_contradicts_teetotal(a: str, b: str) -> str:
    return "contradiction" if {a, b} == {TEETOTAL, WINE} else "different"
