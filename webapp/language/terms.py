"""Key terms: the words a fact is about, one extractor for every judgement.

A fact's terms are its content words after folding (case, width, 繁→简): English words stemmed
by Snowball, Chinese cut into words by jieba's dictionary (rjieba), without the filler that says
who holds the fact or how strongly ("user", "prefers", 用户, 喜欢, 都…). Negations are counted and
the terms each one governs kept apart ("doesn't drink *oolong*", 不*喝*, 香菜都不吃), so "no" is
compared on the thing it is about; light verbs (喝, 吃, drink, eat) are kept apart too, as part
of the frame rather than the subject. ``terms`` gives all of it; the similarity judge, the
curation rules and the extraction's change matching read the same answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import rjieba
import snowballstemmer  # type: ignore[import-untyped]

from ..text import LATIN_FILLER, fold


def wordlist(text: str) -> list[str]:
    """The words of a space-separated list (the lexicons read better that way)."""
    return text.split()


_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English word's stem (likes → like)."""
    return str(_STEMMER.stemWord(word))


_EN_FILLER = frozenset(
    stem(w)
    for w in (LATIN_FILLER - {"never"})
    | set(
        wordlist(
            "as into been these those them enjoy enjoys fond normally generally much lot lots "
            "every each all any name names named called call set sets change changed switch "
            "switched move moved currently now has have had do does did get gets got go goes "
            "keep keeps make makes around about approximately roughly takes take took time "
            "times per week weekly day days some few couple kept target anymore any more "
            "longer still only mostly typically stand things thing person people after before "
            "until by off fall falls fell up"
        )
    )
)
_CJK_FILLER = frozenset(
    fold(w)
    for w in wordlist(
        "用户 使用者 我 我们 你 他 她 的 了 是 都 很 也 就 还 和 跟 把 给 喜欢 爱 偏好 偏爱 习惯 总是 一直 通常 一般 经常 常常 希望 比较 "
        "请 要 会 以后 今后 一律 使用 用 叫 叫做 名字 名叫 为 设 设在 设定 设为 定在 改成 改为 改到 改 调成 调到 现在 目前 最近 帮 帮我 在 "
        "有 个 大约 左右 差不多 才 只 只要 固定 会去 去 开 设置 已经 一点 些 这 那 时 时候 时候会 家里 家 我家 模式 点 到 着 过 呢 吧 啊 "
        "哦 喔 嘛 得 地 之 其 再 又 更 最 多 少 好 想 能 可以 应该 每 每个 每周 每週 每次 一下 一些 些许 自己 本人 大概 基本上 基本 记得 "
        "记住 注意 以上 以下 越 越好 坐 搭 乘 放 加 养 养了 还有 并且 而且 但是 不过 其实 真的 非常 特别 挺 蛮 太 超 超级 非常 喝 吃 对 者 "
        "市 县 区 交通工具 方式 骑 写"
    )
)
_CJK_NEGATION = re.compile(
    r"^(?:不再|不想|不能|不要|不用|不会|不|没有|没|别|无|从不|绝不|未|讨厌|受不了|戒了|戒|停止|取消|退订)"
)
# Words that start like a negation and are none: 不错 (good), 无论 (whatever), 未来 (future)…
_NOT_NEGATIONS = frozenset(
    fold(w)
    for w in wordlist(
        "不错 不过 不同 不少 不断 不久 不仅 不但 不然 不如 无论 没错 未来 别人 别的 不管"
    )
)
# Light verbs a negation reaches through to its object (不喝酒 negates 酒 as well).
_LIGHT = frozenset({"喝", "吃", "用", "加", "放", "去", "养", "看", "听", "坐", "搭", "骑", "写"})
# Characters stripped from the start of a word jieba made ("喝咖啡" → 咖啡, "爱喝" → 喝).
_LEADING = frozenset("喝吃看听爱也都会要去用写骑坐搭")
_FUNCTION_CHARS = frozenset("时开改设调在的了是都也就还会要把给用去坐搭骑写喝吃看听爱对成为到钟")
_EN_LIGHT = frozenset(
    stem(w) for w in wordlist("drink drinks eat eats have has use uses take takes like likes want")
)

CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(rf"[{CJK}]+")
_TOKEN = re.compile(rf"[{CJK}]+|[a-z0-9]+(?:'[a-z]+)?")

# Negations in English (after folding; "n't" endings count too).
_EN_NEGATORS = frozenset(
    wordlist(
        "not no never without cannot dont doesnt hate hates dislike dislikes avoid avoids "
        "stopped quit"
    )
)
# Where a value was taken out of a text: it ends a negation's reach ("不想看长篇大论的回复").
VALUE_SLOT = " zzvaluezz "


@dataclass(frozen=True)
class Terms:
    """What ``terms`` reads: content terms, the terms a negation governs, the light verbs used,
    and how many negations there are."""

    terms: frozenset[str]
    negated: frozenset[str]
    verbs: frozenset[str]
    negations: int


@functools.lru_cache(maxsize=65536)
def terms(text: str) -> Terms:
    """The key terms of ``text`` (folded, see ``webapp.text.fold``; cached per text)."""
    negations = 0
    found: set[str] = set()
    negated: set[str] = set()
    verbs: set[str] = set()
    pending = 0  # how many following content terms a negation still governs
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == VALUE_SLOT.strip():
            pending = 0
            continue
        if CJK_RUN.fullmatch(token):
            before: str | None = None  # the term just before a negation: 香菜都不能吃
            last: str | None = None
            for word in rjieba.cut(token):
                bare = _CJK_NEGATION.sub("", word)
                if bare != word and word not in _NOT_NEGATIONS:
                    pending, before = 1, last
                    negations += 1
                elif bare != word:
                    bare = word
                while len(bare) >= 2 and bare[0] in _LEADING:
                    bare = bare[1:]  # 喝咖啡 → 咖啡, 爱喝 → 喝
                if bare in _LIGHT:
                    verbs.add(bare)
                    continue
                if not bare or bare in _CJK_FILLER or all(ch in _FUNCTION_CHARS for ch in bare):
                    continue  # 时开, 改开: pieces jieba made of words that carry nothing
                found.add(bare)
                last = bare
                if pending:
                    negated.add(bare)
                    pending -= 1
            if pending and before is not None:
                negated.add(before)  # the negation came after its object (香菜都不吃)
                pending = 0
            continue
        if (
            token in _EN_NEGATORS
            or token.endswith("n't")
            or token == "gave"
            and text[match.end() : match.end() + 3] == " up"
        ):
            pending = 1
            negations += 1
            continue
        word = stem(token.removesuffix("'s"))
        if word in _EN_LIGHT:
            verbs.add(word)
            continue
        if word in _EN_FILLER or word.isdigit():
            continue
        found.add(word)
        if pending:
            negated.add(word)
            pending -= 1
    return Terms(frozenset(found), frozenset(negated), frozenset(verbs), negations)
