"""The classes issue 43's held-out list (h6) found missed: national ID numbers, seed phrases
with no name before them, codes keyed between star and pound, SIM PUK codes, a "secret word",
and the Chinese codes of alarms, bike locks, padlocks and tablets; each beside the look-alike
that must stay a memory (a phone number, an order number, a shopping list, "5 star")."""

from __future__ import annotations

import pytest

from webapp.sensitive.secrets import find_secrets


def found(text: str) -> tuple[str, str] | None:
    finding = find_secrets(text)
    if finding is None:
        return None
    span = finding.spans[0]
    return span.kind, text[span.start : span.end]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Put my SSN on the form: 523-41-8876", "id_number", "523-41-8876"),
        ("social security 212 55 0147", "id_number", "212 55 0147"),
        ("Grandpa's ID is H105672291 if the clinic asks", "id_number", "H105672291"),
        ("爸爸的身分證字號是 a123456789", "id_number", "a123456789"),
        ("爸爸身份证 440304199307124820", "id_number", "440304199307124820"),
        ("Her NI number is JK 482193 B", "id_number", "JK 482193 B"),
    ],
)
def test_a_national_id_number_is_a_secret(text: str, kind: str, value: str) -> None:
    assert found(text) == (kind, value)


@pytest.mark.parametrize(
    "text",
    [
        "Call the vet at 415-555-0199",
        "The zip is 10027-4411",
        "Order number 110105198804153219 shipped",  # 18 digits after the word for an order
        "The router model is R1234567890",
        "I renewed my ID card last week",
    ],
)
def test_numbers_of_other_kinds_are_no_id(text: str) -> None:
    assert found(text) is None


def test_twelve_seed_words_are_a_secret_by_their_checksum_or_a_wallet() -> None:
    phrase = "round fury damp blanket cause seminar novel arena gravity review sauce ahead"
    assert found(phrase) == ("password", phrase)  # its BIP39 checksum holds
    made_up = "apple river cloud tiger ocean piano forest candle rocket silver window garden"
    assert found(f"My crypto wallet: {made_up}") == ("password", made_up)
    assert found(f"Notes: {made_up}") is None  # twelve words, no wallet, no checksum


@pytest.mark.parametrize(
    "text",
    [
        "Groceries: milk, bread, butter, rice, coffee, sugar, lemon, garlic, onion, potato, "
        "tomato, cheese",
        "apple banana orange onion potato tomato lemon garlic pepper salmon cheese milk",
    ],
)
def test_a_shopping_list_of_seed_words_is_no_seed_phrase(text: str) -> None:
    assert found(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("For voicemail press star 6 0 2 9 pound", "6 0 2 9"),
        ("Garage keypad: star, then 8 8 1 4, then the pound key", "8 8 1 4"),
        ("Disarm with *7731#", "7731"),
        ("Dial star nine one two six hash", "nine one two six"),
        ("按星號 3 8 2 7 井號就開了", "3 8 2 7"),
        ("先按米字，再按 6 6 0 1，最后按井字", "6 6 0 1"),
    ],
)
def test_a_code_between_star_and_pound_is_a_secret(text: str, value: str) -> None:
    assert found(text) == ("access_code", value)


@pytest.mark.parametrize(
    "text",
    [
        "We rated it 4 star and paid 12 pounds",
        "A pound of butter and 3 eggs",
        "Press star to go back",
    ],
)
def test_stars_and_pounds_of_other_kinds_are_no_code(text: str) -> None:
    assert found(text) is None


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("My SIM PUK is 61029384", "access_code", "61029384"),
        ("PUK2 code: 7741 0093", "access_code", "7741 0093"),
        ("手機 SIM 的 PUK 碼：39201847", "access_code", "39201847"),
        ("The secret word for the babysitter is pelican", "password", "pelican"),
        ("掛鎖的號碼是 2 9 0 4", "access_code", "2 9 0 4"),
        ("自行车锁的组合是 7 3 1 8", "access_code", "7 3 1 8"),
        ("平板解鎖 0 5 0 5 1 9", "access_code", "0 5 0 5 1 9"),
        ("锁头的数字 8 1 6 2", "access_code", "8 1 6 2"),
        ("防盗器撤防 4 4 0 2", "access_code", "4 4 0 2"),
        ("孩子的安全詞是 紅豆餅", "password", "紅豆餅"),
        ("按米字号 1 3 5 7 井字号", "access_code", "1 3 5 7"),
        ("居留證號碼 AC01234567", "id_number", "AC01234567"),
    ],
)
def test_puk_secret_word_and_chinese_lock_codes_are_secrets(
    text: str, kind: str, value: str
) -> None:
    assert found(text) == (kind, value)


@pytest.mark.parametrize(
    "text",
    [
        "I asked the shop for the PUK",
        "The secret word is on the fridge",
        "掛鎖買了 3 個",
        "平板 2024 年買的",
        "自行车锁 45 块",
    ],
)
def test_mentions_and_amounts_are_no_code(text: str) -> None:
    assert found(text) is None
