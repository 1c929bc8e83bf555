"""The fact without the secret replaces only the clause that holds it.

A memory (or a sentence an extraction proposal is built from) often says more than the
secret: "Guest Wi-Fi password is tulip-Rocket-88; the network is HomeNet-Guest." The rewrite
offered instead must keep "the network is HomeNet-Guest" as written, or accepting it loses a
fact that was never secret. A text that is only the secret clause reads as before.
"""

from __future__ import annotations

import pytest

from webapp.sensitive.secrets import find_secrets


def fact_of(text: str) -> str:
    finding = find_secrets(text)
    assert finding is not None, text
    return finding.fact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Guest Wi-Fi password is tulip-Rocket-88; the network is HomeNet-Guest.",
            "Has a guest Wi-Fi password (not kept in memory); the network is HomeNet-Guest.",
        ),
        (
            "The network is HomeNet-Guest; the guest Wi-Fi password is tulip-Rocket-88.",
            "The network is HomeNet-Guest; has a guest Wi-Fi password (not kept in memory).",
        ),
        (
            "The garage door code is 4821 and the spare key is under the blue pot",
            "Has a garage door code (not kept in memory) and the spare key is under the blue pot.",
        ),
        (
            "The alarm code is 9157, the panel is behind the coat rack.",
            "Has an alarm code (not kept in memory), the panel is behind the coat rack.",
        ),
        (
            "I moved to Berlin last year, and my bank account number is 12345678.",
            "I moved to Berlin last year, and has a bank account number (not kept in memory).",
        ),
        (
            "訪客Wi-Fi密碼是 tulip-Rocket-88；網路名稱是 HomeNet-Guest。",
            "有訪客Wi-Fi密碼（內容不存在記憶裡）；網路名稱是 HomeNet-Guest。",
        ),
        (
            "大門密碼是 2580，信箱在大門左邊",
            "有大門密碼（內容不存在記憶裡），信箱在大門左邊。",
        ),
        (
            "访客Wi-Fi密码是 tulip-Rocket-88；网络名称是 HomeNet-Guest。",
            "有访客Wi-Fi密码（内容不存在记忆里）；网络名称是 HomeNet-Guest。",
        ),
        (
            "网络名称是 HomeNet-Guest，门禁密码是 2468。",
            "网络名称是 HomeNet-Guest，有门禁密码（内容不存在记忆里）。",
        ),
    ],
)
def test_only_the_clause_with_the_secret_is_rewritten(text: str, expected: str) -> None:
    fact = fact_of(text)
    assert fact == expected
    assert find_secrets(fact) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Remember the garage door code is 4821", "Has a garage door code (not kept in memory)."),
        ("Remember, the garage door code is 4821.", "Has a garage door code (not kept in memory)."),
        (
            "Guest Wi-Fi password is tulip-Rocket-88.",
            "Has a guest Wi-Fi password (not kept in memory).",
        ),
        ("大門密碼是 2580", "有大門密碼（內容不存在記憶裡）。"),
        ("记住，门禁密码是 2468。", "有门禁密码（内容不存在记忆里）。"),
    ],
)
def test_a_text_that_is_only_the_secret_clause_reads_as_before(text: str, expected: str) -> None:
    assert fact_of(text) == expected


def test_every_clause_with_a_secret_is_rewritten_and_none_survives() -> None:
    fact = fact_of("The door code is 4821; the alarm code is 9157; the gate is blue.")
    assert fact == (
        "Has a door code (not kept in memory); has an alarm code (not kept in memory); "
        "the gate is blue."
    )
    assert find_secrets(fact) is None


def test_a_secret_that_runs_over_a_clause_boundary_is_not_cut_in_two() -> None:
    # A passphrase of plain words may hold " and ": its clause is the whole of it.
    fact = fact_of("The wifi password is correct horse and battery staple")
    assert fact == "Has a wifi password (not kept in memory)."
    assert "battery" not in fact
