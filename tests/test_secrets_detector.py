"""The secrets detector, class by class: each way of writing a secret that it must see, and
the look-alikes of that way that it must leave alone.

Issue 35 (item 11) lists the phrasings that slipped through: digits said as words or split
("forty-eight twenty-one", "28 then 61"), codes named only by what they open ("Back shed:
6 0 4 7", 车库遥控 二五八零), abbreviations glued to Chinese (的pw是…), a clause between the
name and the value ("the code they texted me is …"), quoted and Chinese passphrases, seed
phrases, backup codes, ``user / password`` pairs without a login word, keys of more vendors.
Every sentence here is new (none is in ``tests/data/secrets``); each class has variants in
all the languages it occurs in.
"""

from __future__ import annotations

import time

import pytest

from webapp.sensitive.secrets import find_secrets


def found(text: str) -> tuple[str, str] | None:
    """The kind and the text of the first secret in ``text`` (None: none)."""
    finding = find_secrets(text)
    if finding is None:
        return None
    span = finding.spans[0]
    return span.kind, text[span.start : span.end]


def refused(text: str) -> bool:
    return find_secrets(text) is not None


# ------------------------------------------------------------------ digits as words, split


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The alarm code is forty-eight twenty-one", "access_code"),
        ("Gate code: nineteen eighty-four", "access_code"),
        ("My PIN is twelve thirty-four", "access_code"),
        ("The safe code is 28 then 61", "access_code"),
        ("Alarm code: 47, then 19", "access_code"),
        ("The door code is 4 - 8 - 2 - 1", "access_code"),
        ("大門密碼是 52 然後 84", "access_code"),
        ("保险箱密码先 36 然后 72", "access_code"),
    ],
)
def test_a_code_said_in_tens_or_split_across_then_is_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "We were married in nineteen eighty-four",
        "Take 2 then 3 tablets after dinner",
        "Dinner at 7 then the film at 9",
        "先坐 52 路然後轉 84 路",
        "twenty-one guests, then forty more",
    ],
)
def test_numbers_in_words_or_then_without_a_secret_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ codes named by what they open


@pytest.mark.parametrize(
    "text",
    [
        "Back shed: 6 0 4 7",
        "Keypad by the garage, 4471#",
        "The lockbox under the porch opens with 3-3-0-9",
        "Note: the numbers for the side gate are 7 7 1 3",
        "Mailbox: 2206",
        "The bike lock behind the shed is 8 1 5 0",
        "车库遥控 2580",
        "信箱下面的鑰匙盒，轉到5-1-7-2就開了",
        "後院工具間：9 3 3 1",
        "自行车锁 5172",
        "儲物櫃密碼 0428",
    ],
)
def test_a_code_after_what_it_opens_is_found(text: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == "access_code"  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "The shed is 2400 mm wide",
        "The gate closes at 2130 every night",
        "The garage, built in 2019, needs paint",
        "The mailbox is at 1450 Elm Street",
        "Our locker is number 214",
        "车库在 B2 层 3 号",
        "工具間是 2015 年蓋的",
        "自行车锁 58 元",
    ],
)
def test_a_number_after_a_door_that_is_no_code_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ abbreviations, PIN#


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("PIN# 6290 for the parcel locker", "access_code"),
        ("Door code # 4471", "access_code"),
        ("pin no. 5521 for the card", "access_code"),
        ("pass for the kids' tablet is Otter_44", "password"),
        ("pwd for the printer = Heron#82", "password"),
        ("信箱的pwd是 Mango_7781", "password"),
        ("學校網站的pw是 mapleLeaf42", "password"),
        ("电脑的password：Lotus_2024", "password"),
        ("銀行 app 的PIN 7719", "access_code"),
    ],
)
def test_abbreviations_are_read_as_the_secret_they_name(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "The bus pass for the kids is 20 dollars a month",
        "My boarding pass for the flight is on my phone",
        "Pass the salt to the kids at 6",
        "信箱的pwd忘了",
    ],
)
def test_an_abbreviation_without_a_value_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ a clause before the value


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The verification code they texted me is 583920", "one_time_code"),
        ("The login code the bank sent is 3 9 1 4 0 2", "one_time_code"),
        ("The password my sister set for the tablet is Otter_44", "password"),
        ("The PIN I use for the debit card is 8813", "access_code"),
    ],
)
def test_a_value_after_a_short_clause_is_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "The code they gave us is in the email",
        "The password I chose last week is too short",
        "The code for the gym we tried is 20 dollars",
    ],
)
def test_a_clause_that_says_where_the_value_is_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ quoted and Chinese passphrases


@pytest.mark.parametrize(
    "text",
    [
        "Guest wifi: network Pinecone, password is 'tulipfield2031'",
        'The password is "correct horse battery"',
        "The passphrase is “silver morning tide”",
        "家庭保險箱的通關密語是「山頂上的藍色風箏」",
        "口令：地振高岡",
        "口令是 春眠不觉晓99",
        "暗號是「老地方見」",
        "密碼是『海邊的小屋』",
    ],
)
def test_a_quoted_or_chinese_passphrase_is_found(text: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] in ("password", "access_code")  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "口令是什么来着",
        "通關密語忘記了",
        "口令在冰箱上的纸条上",
        "密码是6位数字",
        "The password field says 'required'",
        "Has a password (not kept in memory).",
    ],
)
def test_a_passphrase_mentioned_without_its_value_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ seed phrases, backup codes


@pytest.mark.parametrize(
    "text",
    [
        "Wallet seed phrase: lava tunnel prize orbit mango cable frost ivory sketch dune river "
        "plume",
        "The recovery words are bronze kitten salad eager humble wagon tilt laser civic vapor "
        "noble oxygen",
        "My 12 words: crane motor fiber lumber quiz ocean brief satin hollow arena bounce trophy",
        "助记词：lava tunnel prize orbit mango cable frost ivory sketch dune river plume",
        "錢包的恢復詞是 bronze kitten salad eager humble wagon tilt laser civic vapor noble oxygen",
        "钱包助记词是 天 地 玄 黄 宇 宙 洪 荒 日 月 盈 昃",
    ],
)
def test_a_seed_phrase_is_found(text: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == "password"  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Google backup codes: 5120-9981, 3307-4412", "one_time_code"),
        ("Recovery code for GitHub is 7a3f9-c21d8", "one_time_code"),
        ("Google備用碼：6612-0937、4408-1275", "one_time_code"),
        ("微软恢复码 3391-0827", "one_time_code"),
    ],
)
def test_backup_and_recovery_codes_are_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "I wrote my seed phrase on paper and put it in the safe",
        "The recovery phrase is somewhere in the blue folder",
        "助记词在保险柜里",
        "I printed the Google backup codes yesterday",
    ],
)
def test_a_seed_phrase_mentioned_without_its_value_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ user / password pairs


@pytest.mark.parametrize(
    "text",
    [
        "Camera web UI: admin / Ferret2291",
        "router admin / Quartz55",
        "NAS: root / Birch!river",
        "印表機 admin / Maple2024",
        "dana.lee@example.com / Sunset#19 for the school portal",
    ],
)
def test_a_user_password_pair_without_a_login_word_is_found(text: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == "password"  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "Open 192.168.1.1/admin in a browser",
        "The shop is open 24/7",
        "Add 1/2 cup of milk",
        "admin / staff meeting moved to Monday",
        "Read the docs at https://example.com/root/guide2",
    ],
)
def test_slashes_that_are_no_login_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ vendor keys, hex, colours


@pytest.mark.parametrize(
    "text",
    [
        "SendGrid SG.Zx4Qm8Rt2Wp6Ly0Nc3Vb7H.Kd9Fg1Hj5Ls8Pq2Wr6Ty0Ui4Op7As3Df1Gh5Jk9Lz2Xc6Vb8N",
        "Twilio SK3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c2e8b",
        "Mailgun key-7d3e9b1f5a2c8e4b6d0f9a3c1e7b5d2f",
        "shopify 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",
        "the droplet token dop_v1_" + "3e7a" * 16,
        "Notion secret_Kp3xV8mQ2wZ9rT5yN1bL7cF4hJ6dG0sA3eW8uI2oP5a",
        "Groq gsk_Q8mZ2rT5yN1bL7cF4hJ6dG0sA3eW8uI2oP5aKp3xV8mQ2wZ9",
        "doorbell bot 7261948305:AAGk2Lm9Qx7Wz3Vb8Nr5Tc1Yd6Ju4Hs0Fe",
        "騰訊雲 AKIDz8Qm2rT5yN1bL7cF4hJ6dG0sA3eW8uI2o",
        "阿里云 LTAI5tRk8Qw2Zm9Xn3Vb",
    ],
)
def test_keys_of_many_vendors_are_found(text: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == "api_key"  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "Reverted commit 4b7e9c2d1a3f5e6b8c0d2a4f6e8b1c3d5a7f9e0b",
        "The key colour is #ff8800 and the text #1a2b3c",
        "Model SK-4410 speaker",
        "The sha256 of the file is " + "9c" * 32,
        "switch.key_light_office turns on at 8",
    ],
)
def test_hashes_colours_and_ids_are_not_keys(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ cards and IBANs


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("card 4929.1903.8842.1371 expires 04/29", "card_number"),
        ("Visa 4929  1903  8842  1371", "card_number"),
        ("rent goes to fr14 2004 1010 0505 0001 3m02 606", "account_number"),
        ("my iban es9121000418450200051332", "account_number"),
    ],
)
def test_cards_and_ibans_in_any_spacing_or_case_are_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


# ------------------------------------------------------------------ the value before its name


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Enter 4409 at the front door", "access_code"),
        ("Punch in 7 3 1 8 on the garage keypad", "access_code"),
        ("6120 opens the garage", "access_code"),
        ("7731 unlocks the side gate", "access_code"),
        ("輸入 4409 就能開大門", "access_code"),
        ("先按 36 再按 72 就能開門", "access_code"),
        ("输入 5821 就能开车库门", "access_code"),
        ("Hunter2! is my email password", "password"),
        ("Kestrel77 is the wifi password", "password"),
    ],
)
def test_a_value_said_before_what_it_opens_or_is_is_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "Enter 2024 as the year on the form",
        "Type 1234 into the calculator",
        "Press 1 then 2 for the menu at the door",
        "1998 is the year the door was fitted",
        "按 1 再按 2 選中文",
        "輸入 2024 年份",
        "Sunday is my password reset day",
    ],
)
def test_a_number_before_a_door_that_opens_nothing_is_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ asides, quotes, links


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The password, by the way, is Kestrel77", "password"),
        ("The code for the front door? It's 7305", "access_code"),
        ('Gate code is "2580"', "access_code"),
        ('Gate: "7 7 1 3"', "access_code"),
        ("front door -> 3344", "access_code"),
        ("Door code was changed to 9090 yesterday", "access_code"),
        ("To turn off the alarm type 2 0 2 0", "access_code"),
        ("Wifi for guests -> Guest123!", "password"),
        ("家里wifi：Panda!2025", "password"),
        ("The safe combo is 22 left, 14 right, 7 left", "access_code"),
    ],
)
def test_a_value_after_an_aside_a_quote_or_an_arrow_is_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "The front door, 1920s oak, needs varnish",
        "The alarm, set for 0630, woke everyone",
        "WiFi: Lighthouse_5G",
        "Wi-Fi: 802.11ac",
        "The door code changed to something new",
        "The safe is 22 left of the 14 right shelf",
    ],
)
def test_look_alikes_of_asides_and_arrows_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ 2FA, CVV, user and pass, repeats


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("2FA: 449 128", "one_time_code"),
        ("MFA code 331 902", "one_time_code"),
        ("CVV 737", "card_number"),
        ("the cvc is 4412", "card_number"),
        ("信用卡安全码 737", "card_number"),
        ("user grandpa pass Fishing1955", "password"),
        ("帳號 dana88 密碼 Rose_1960", "password"),
        ("支付密碼六個八", "access_code"),
        ("银行卡密码是六个八", "access_code"),
        ("門禁密碼 4 八 2 一", "access_code"),
        ("The door code is 4 eight 2 one", "access_code"),
    ],
)
def test_short_names_repeats_and_mixed_digits_are_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "The CVV is on the back of the card",
        "2FA is turned on for my email",
        "user guide pass notes",
        "買了六個八寶粥",
        "I have 2 three-year-olds and 4 five-year-olds",
        "We need 4 eight-foot boards and 2 one-inch screws",
    ],
)
def test_look_alikes_of_short_names_and_repeats_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ more names, arrows, networks


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("保險箱 → 2468", "access_code"),
        ("Garage door opener: 4821", "access_code"),
        ("Key safe by the door has 1 9 9 0", "access_code"),
        ("Use 4821 for the door", "access_code"),
        ("进门输入 4821 再按井号", "access_code"),
        ("簡訊認證碼 4829 10", "one_time_code"),
        ("信箱授權碼：xkcdpqrsmnbv", "password"),
        ("錢包私鑰 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "api_key"),
        ("Wi-Fi: SSID Lighthouse, key 7hX!92pq", "password"),
        ("SSID Lighthouse psk Sunny!Days", "password"),
        ("Spotify: dana88 / Movies2024!", "password"),
    ],
)
def test_more_names_arrows_and_network_keys_are_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "Schedule: Mon / Wed2024",
        "Directions: Exit12 / Route66 north",
        "Ratio: 16 / 9",
        "Try 1500 for the gate budget",
        "Use 2024 for the garage sale sign",
        "The garage door opener has 3 buttons",
        "Wallet address 0x71C7656EC7ab88b098defB751B7401B5f6d8976F",
        "Transaction 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
        "授權碼已經寄到信箱了",
        "私鑰要放在安全的地方",
        "大門 → 左轉",
        "进门先换鞋",
        "SSID HomeNet, the router is in the hall",
    ],
)
def test_look_alikes_of_more_names_and_networks_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


# ------------------------------------------------------------------ digits listed, a network and its key


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("door code is 4,8,2,1", "access_code"),
        ("Gate code: 1 | 9 | 7 | 3", "access_code"),
        ("The gate code is 1/9/7/3", "access_code"),
        ("保險箱密碼 5/2/8/0", "access_code"),
        ("wifi: GuestNet / Welcome2024", "password"),
        ("家裡 Wi-Fi：HomeNet / Lotus#2025", "password"),
    ],
)
def test_digits_listed_and_a_network_with_its_key_are_found(text: str, kind: str) -> None:
    assert found(text) is not None, text
    assert found(text)[0] == kind  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "Gate: 1, 2, 3, 4 are the lanes",
        "boarding at gate 1, 2, 3, 4",
        "The door: 10/12 repainted",
        "The door code costs 1,000 yen to change",
        "wifi: GuestNet / 5GHz band",
    ],
)
def test_look_alikes_of_listed_digits_and_networks_are_not_refused(text: str) -> None:
    assert not refused(text), found(text)


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        find_secrets(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("unit", ["code 1 ", "door code 12 ", "pin 7 "])
def test_many_keywords_are_read_in_one_pass(unit: str) -> None:
    # "code 1 " 1,400 times took 0.5 s and four times as long at twice the length: each keyword
    # looked for the word before it from the start of the text. Every add reads the text.
    hostile = (unit * (10_000 // len(unit)))[:9_800]
    ordinary = ("The kids walk the dog after school on sunny days " * 200)[: len(hostile)]
    assert _seconds(hostile) < 10 * _seconds(ordinary) + 0.05
