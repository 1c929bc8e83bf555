"""Issue 44 in Review: what auto mode did not apply by itself says why, in the person's
language: an unreliable source, a statement older than the memory kept, an update nobody
framed as a change, a change of a memory the curator could not place."""

from __future__ import annotations

import re

import pytest

from webapp.stores import MemoryStore, Proposal, ReviewQueue

KEPT = "As of 2026, the family car is a Honda Civic"


def _words(response) -> str:
    return re.sub(r"<[^>]+>", "", response.get_data(as_text=True))


def _waiting(settings) -> None:
    store = MemoryStore.from_settings(settings)
    store.add(KEPT)
    ReviewQueue.from_settings(settings, store).submit(
        [
            Proposal(
                "add", "The plumber is FlowRight", doubt="unreliable", doubt_words="unverified"
            ),
            Proposal(
                "add",
                "As of 2019, the family car is a Ford Focus",
                current_content=KEPT,
                doubt="older",
                doubt_words="as of 2019",
            ),
            Proposal("add", "The car insurance renews in March", doubt="unframed"),
            Proposal("add", "The spare key is in the lockbox", doubt="unplaced"),
        ]
    )


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            [
                "calls unreliable",
                "Dated before what is kept",
                "Not said as a change",
                "of which kept memory is not sure",
            ],
        ),
        (
            "zh-TW",
            [
                "來源不可靠",
                "日期早於已記住的內容",
                "沒有說是已記住內容的變更",
                "不確定是哪一則已記住的記憶",
            ],
        ),
        (
            "zh-CN",
            [
                "来源不可靠",
                "日期早于已记住的内容",
                "没有说是已记住内容的变更",
                "不确定是哪一条已记住的记忆",
            ],
        ),
    ],
)
def test_review_says_why_each_waits(client, settings, language, said):
    _waiting(settings)
    page = client.get("/review/", headers={"Accept-Language": language})
    html = page.get_data(as_text=True)
    for code in ("unreliable", "older", "unframed", "unplaced"):
        assert f'data-doubt="{code}"' in html
    text = _words(page)
    for words in said:
        assert words in text, words
    assert "unverified" in text and "as of 2019" in text and KEPT in text
