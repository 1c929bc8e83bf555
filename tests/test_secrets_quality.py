"""The secrets detector against the labelled sentences of ``tests/data/secrets``.

The floors hold on the held-out file (written before the detector, never tuned against):
recall on secrets at least 0.95, false refusals of look-alikes at most 0.05. What a finding
offers instead of the secret (the masked text, the fact without it) is checked on the
development file, where failures may be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from webapp.sensitive.secrets import find_secrets, mask_secrets

DATA = Path(__file__).parent / "data" / "secrets"
MIN_RECALL = 0.95
MAX_FALSE_REFUSALS = 0.05
HELD_OUT_FILES = ("secrets.heldout.json", "secrets.heldout-h5.json", "secrets.heldout-h6.json")


def cases(name: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((DATA / name).read_text("utf-8"))
    return loaded


def test_the_labelled_files_are_big_enough_and_spread_over_the_languages() -> None:
    for name, least in (("secrets.heldout.json", 40), ("secrets.dev.json", 40)):
        found = cases(name)
        assert {c["lang"] for c in found} == {"en", "zh-Hant", "zh-Hans"}
        assert sum(c["secret"] for c in found) >= least
        assert sum(not c["secret"] for c in found) >= least
    dev = {c["text"] for c in cases("secrets.dev.json")}
    for name in HELD_OUT_FILES:
        # Counts only: a held-out sentence is never printed, so nobody tunes against it.
        shared = len({c["text"] for c in cases(name)} & dev)
        assert shared == 0, f"{shared} sentences of {name} are in the dev file too"


def test_held_out_recall_and_false_refusals_meet_the_floors() -> None:
    held_out = cases("secrets.heldout.json")
    secrets = [c for c in held_out if c["secret"]]
    lookalikes = [c for c in held_out if not c["secret"]]
    found = sum(find_secrets(c["text"]) is not None for c in secrets)
    refused = sum(find_secrets(c["text"]) is not None for c in lookalikes)
    # Counts only: the held-out sentences are not printed, so nobody tunes against them.
    assert found / len(secrets) >= MIN_RECALL, f"recall {found}/{len(secrets)}"
    assert refused / len(lookalikes) <= MAX_FALSE_REFUSALS, (
        f"false refusals {refused}/{len(lookalikes)}"
    )


@pytest.mark.parametrize(
    "case", [c for c in cases("secrets.dev.json") if c["secret"]], ids=lambda c: c["text"][:40]
)
def test_what_is_shown_instead_holds_no_secret(case: dict[str, Any]) -> None:
    finding = find_secrets(case["text"])
    assert finding is not None
    assert "••••" in finding.masked
    assert find_secrets(finding.masked) is None, finding.masked
    assert find_secrets(finding.fact) is None, finding.fact
    for span in finding.spans:
        assert case["text"][span.start : span.end] not in finding.masked
        assert case["text"][span.start : span.end] not in finding.fact


def test_the_fact_names_the_secret_in_the_texts_language() -> None:
    assert find_secrets("Remember the garage door code is 4821").fact == (  # type: ignore[union-attr]
        "Has a garage door code (not kept in memory)."
    )
    assert find_secrets("大門密碼是 2580").fact == "有大門密碼（內容不存在記憶裡）。"  # type: ignore[union-attr]
    assert find_secrets("门禁密码是 2468").fact == "有门禁密码（内容不存在记忆里）。"  # type: ignore[union-attr]


def test_a_card_shows_its_last_four_digits_and_a_key_its_vendor_prefix() -> None:
    assert mask_secrets("My Visa is 4111 1111 1111 1111") == "My Visa is ••••1111"
    assert mask_secrets("token ghp_" + "a1B2c3D4e5" * 4) == "token ghp_••••"
    assert mask_secrets("Prefers tea in the morning.") == "Prefers tea in the morning."
