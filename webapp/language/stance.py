"""How firmly a fact was said: in doubt, second-hand, or as an instruction about all of memory.

A fact is only as sure as the sentence it came from. ``stance(fact, evidence)`` reads the
fact's own words and the sentence it was taken from (its evidence) for:

- ``hedged``: the speaker is unsure, speculating, considering or asking ("maybe", "might",
  "I think", "probably", "someday", "not sure", "thinking about", "considering", a question;
  可能, 也許/也许, 說不定/说不定, 好像, 大概, 或許/或许, 要不要, 不確定/不确定, 考慮/考虑);
- ``hearsay``: someone else said it ("my neighbour says", "someone told me", "I heard",
  "apparently", "according to"; 聽說/听说, 據說/据说, 有人說, 表姊說, 网上有人说);
- ``unreliable``: the sentence itself calls its source unreliable: an unverified or unknown
  sender, a rumour, a low-confidence reading, a draft, an old or archived note ("an unverified
  text says", "from an unknown number", "the scan is low confidence", "an old note says";
  未經證實/未经证实, 陌生號碼/陌生号码, 傳言/传言, 草稿, 信心很低/置信度很低, 舊筆記/旧笔记, 封存, 歸檔/归档);
- ``bulk``: an instruction about many or all memories at once ("forget everything", "delete
  all memories", "clear your memory", "start over"; 全部刪掉/删掉, 全部忘掉, 清空記憶).

The look-alikes stated firmly stay plain: "Bin day is Thursday from now on", "Likes all kinds
of cheese", "Our neighbour's cat is called Mochi", "Forget the old hours, the pharmacy closes
at 8pm now" (one item), 所有的起司都喜歡, 隔壁鄰居的貓叫麻糬.

Text is read after ``fold`` (case, width, 繁→简), so each list is written once, in 简体 and
lower case; ``Stance.words`` gives the words that said so as they were written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..text import fold

Kind = Literal["hedged", "hearsay", "bulk", "unreliable"]
# The order they are looked for: "an unverified text says …" is unreliable before hearsay.
KINDS: tuple[Kind, ...] = ("bulk", "unreliable", "hearsay", "hedged")


@dataclass(frozen=True)
class Stance:
    """Why a fact is not said firmly: its kind and the words that say so (as written)."""

    kind: Kind
    words: str


def _alternatives(words: str) -> str:
    """A regex alternation of the ``|``-separated phrases, longest first."""
    phrases = sorted({p.strip() for p in words.split("|") if p.strip()}, key=len, reverse=True)
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)


# ------------------------------------------------------------------ hedged
_EN_HEDGES = _alternatives(
    "maybe|perhaps|possibly|probably|might|i think|i guess|i suppose|i believe|not sure|"
    "unsure|not certain|uncertain|no idea if|don't know if|do not know if|don't know whether|"
    "haven't decided|have not decided|not decided|undecided|yet to decide|someday|some day|"
    "one day|thinking about|thinking of|considering|wondering|debating|torn between|"
    "if we|whether to|whether we|should we|shall we|could we|what if|in case|kind of|"
    "sort of|hopefully|likely|unlikely|may be|may have|may move|may change|may switch|"
    "may need|may not|may go|could be|could move|could change|could switch|would like to try|"
    "i reckon|pretty sure|fairly sure|quite sure|reasonably sure|not 100%|not a hundred percent|"
    "don't quote me|if i remember right|if i remember correctly|if i recall|iirc|"
    "double-check|double check|need to check|have to check|to be confirmed|tbc|i'm told"
)
_EN_HEDGE = re.compile(rf"(?<![\w'])(?:{_EN_HEDGES})(?![\w'])")
_ZH_HEDGE = re.compile(
    "(?<!不)可能(?!性)|也许|说不定|好像|或许|要不要|要不然|要不|不确定|不一定|不知道|不清楚|"
    "考虑|在想|想想|似乎|看看|还没决定|没决定|未定|再说|大概(?![0-9一二两三四五六七八九十百半几])|"
    "估计|应该会|恐怕|如果|搞不好|有机会|不太确定|印象中|印象里|再查|再确认|还要确认|要确认|待确认|"
    "没把握|不敢肯定|应该是[^，,。.；;]{0,20}吧"
)
_QUESTION = re.compile(r"[?？]|(?:吗|么|嘛)\s*[。.!！]?\s*$")

# ------------------------------------------------------------------ hearsay
_EN_HEARSAY = re.compile(
    r"(?<![\w'])(?:"
    r"(?:i|we)(?:'ve|\s+have)?\s+(?:heard|was told|were told|read online|saw online)"
    r"|heard\s+(?:that|from|it)|apparently|reportedly|supposedly|allegedly|rumou?rs?"
    r"|according\s+to|word\s+is|the\s+word\s+on|people\s+(?:say|said|are\s+saying)"
    r"|they\s+(?:say|said|reckon)|(?:someone|somebody|everyone|everybody|a\s+friend|"
    r"a\s+colleague|a\s+neighbou?r)\s+(?:\w+\s+){0,4}?(?:said|says|told|tells|mentioned|"
    r"thinks|reckons|claims|claimed|posted)"
    r"|(?:my|our|his|her|their|the)\s+(?:[\w'-]+\s+){0,3}?(?:says|said|told\s+(?:me|us)|"
    r"tells\s+(?:me|us)|mentioned|reckons|claims|claimed|thinks|heard)"
    r"|[A-Z][a-z]+\s+(?:says|said|told\s+(?:me|us)|mentioned|reckons|claims)"
    r"|word\s+(?:around|in|at)\s+[\w\s]{1,20}?\s+is|told\s+(?:my|our|his|her)\s+\w+"
    r")(?![\w'])"
)
# Any sayer but the speaker ("a forwarded message says", "some email … says"): second-hand.
# Not "she said" / "the user said": an LLM's paraphrase of the speaker's own words.
_EN_REPORTED = re.compile(
    r"(?<![\w'])(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)(?<!\bas\s)(?<!\bhe\s)(?<!\bshe\s)"
    r"(?<!\buser\s)"
    r"(?:says|said|claims|claimed|states|stated|writes|wrote|reports|reported)\s+(?!so\b)"
)
_ZH_PEOPLE = (
    "邻居|朋友|同事|同学|老师|医生|护士|房东|老板|主管|经理|室友|网友|群友|大家|别人|人家|有人|"
    "他们|她们|他|她|妈妈|妈|爸爸|爸|老公|老婆|太太|先生|丈夫|妻子|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|"
    "表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|阿姨|叔叔|舅舅|婶婶|姑姑|奶奶|爷爷|外婆|外公|婆婆|公公|"
    "岳母|岳父|儿子|女儿|孩子|物业|管理员|店员|群里|网上"
)
_ZH_HEARSAY = re.compile(
    rf"听说|听人说|听别人说|据说|据悉|据报|传说|传闻|谣传|网传|好像听|"
    rf"(?<![给跟和对帮陪教替向])(?:{_ZH_PEOPLE})(?:们)?(?:跟我|跟我们|和我|对我)?(?:说|讲|提到|表示|告诉我|告诉我们|转告)|"
    rf"在传|传说|"
    # any sayer but the speaker: 自动摘要说, 一个不认识的号码发短信说, 清单上写着
    rf"(?<![我你小如以是再么用听])(?<!我们)(?:说|写着)(?![话明书服得过完好不])"
)

# ------------------------------------------------------------------ unreliable
_EN_UNRELIABLE = re.compile(
    r"(?<![\w'])(?:"
    r"unverified|unconfirmed|not\s+(?:been\s+)?(?:verified|confirmed)|can't\s+(?:verify|confirm)|"
    r"cannot\s+(?:verify|confirm)|couldn't\s+(?:verify|confirm)|anonymous|"
    r"unknown\s+(?:number|sender|source|caller|account|person)|(?:from\s+)?a\s+stranger|"
    r"rumou?red|(?:a|the)\s+rumou?r|hearsay|spam|chain\s+(?:message|email|letter)|"
    r"low[\s-]+confidence|not\s+confident|confidence\s+(?:is\s+)?low|blurry|hard\s+to\s+read|"
    r"(?:ocr|scanner|scan|auto[\s-]*transcri\w*|transcription)\s+(?:\w+\s+){0,2}?"
    r"(?:read|reads|says|said|guess\w*|thinks)|"
    r"drafts?|(?:an?|the|some)\s+(?:old|outdated|archived|stale)\s+(?:\w+\s+)?"
    r"(?:note|notes|file|email|message|list|record|document|doc|post|memo)|archived|outdated|"
    r"out\s+of\s+date|can't\s+vouch|cannot\s+vouch|random\s+(?:email|text|message|site|post)|"
    r"(?:number|sender|person)\s+i\s+don't\s+(?:recogni[sz]e|know)|"
    r"forwarded\s+(?:[\w'-]+\s+){0,2}?(?:message|text|email|post|chain)|auto[\s-]*generated|"
    r"(?:transcription|transcript|summary)[\w\s,'-]{0,40}?\s(?:says|said|claims|reads|thinks)|"
    r"often\s+wrong|rough\s+draft"
    r")(?![\w'])"
)
_ZH_UNRELIABLE = re.compile(
    r"未经证实|未经确认|未证实|未确认|无法证实|无法确认|没证实|没有证实|不明来源|来源不明|来路不明|"
    r"陌生号码|陌生人|不明号码|匿名|传言|谣言|小道消息|草稿|信心很低|信心不高|信心低|置信度|"
    r"可信度|辨识不清|识别不清|看不清|模糊|旧的(?:笔记|记录|便条|文件|资料|邮件|讯息|信息|备忘)|"
    r"旧(?:笔记|记录|便条|文件|资料|邮件|讯息|备忘)|封存|归档|存档|过时|过期的(?:资料|记录|笔记)|"
    r"转传|转发的|群组转|群发|来路不明|不认识的号码|不认识的人|语音转文字|语音转写|转写|"
    r"自动摘要|自动生成|经常出错|常常出错|很久以前的(?:清单|笔记|记录|资料|便条|文件)"
)

# ------------------------------------------------------------------ bulk
_EN_BULK = re.compile(
    r"(?<![\w'])(?:"
    r"(?:forget|delete|erase|remove|wipe|clear|purge|drop|reset|scrap|discard)\s+"
    r"(?:(?:\w+\s+){0,3}?)(?:everything|all\s+(?:of\s+)?(?:the\s+|my\s+|your\s+|our\s+|those\s+|these\s+)?"
    r"(?:memor\w*|facts?|notes?|data|info\w*|you\s+know|that|this|of\s+(?:it|them|this|that)|"
    r"stuff|things|about|entries|records)|every\s+(?:memory|fact|note|thing)|"
    r"(?:your|my|the|our)\s+(?:whole\s+|entire\s+)?(?:memory|memories|brain)|"
    r"what\s+you\s+(?:know|remember))"
    r"|(?:clear|wipe|reset|empty|erase|flush)\s+(?:out\s+)?(?:your|the|my|our)?\s*"
    r"(?:whole\s+|entire\s+)?(?:memory|memories|brain)"
    r"|start\s+(?:over|fresh|from\s+scratch)|fresh\s+start|clean\s+slate"
    r"|(?:forget|delete|erase|remove|wipe(?:\s+out)?|clear|purge|drop|scrap|scratch|discard|"
    r"throw\s+away|get\s+rid\s+of)\s+(?:all|every\w*|anything|the\s+lot|the\s+whole)"
    r")(?![\w'])"
)
_ZH_BULK = re.compile(
    r"(?:全部|所有|一切|通通|统统|全都|通通都|全|都)[^，,。.；;！!？?]{0,12}?"
    r"(?:删|忘|清除|清掉|清空|移除|抹掉|抹去|去掉|丢掉|作废)"
    r"|(?:删|忘|清|移除|抹)[掉光除了]{0,2}(?:全部|所有|一切|光)"
    r"|清空|忘光|删光|重新开始|从头开始|从零开始|格式化"
    r"|一律(?:删|作废|清|不要|不算)"
    r"|(?:记|存|说过|记住)[^，,。.；;！!？?]{0,8}?(?:都|全|全部|一律)[^，,。.；;！!？?]{0,3}?"
    r"(?:不要了|不算数|不算了|作废|删|清)"
    r"|(?:全|都)清(?:了|掉|光)"
)


def _found(pattern: re.Pattern[str], folded: str, text: str) -> str | None:
    """The words ``pattern`` finds in ``folded``, as ``text`` wrote them, or None."""
    match = pattern.search(folded)
    if match is None:
        return None
    if len(folded) == len(text):
        return text[match.start() : match.end()]
    return match.group(0)


def _read(text: str, kind: Kind) -> str | None:
    folded = fold(text)
    if kind == "bulk":
        return _found(_EN_BULK, folded, text) or _found(_ZH_BULK, folded, text)
    if kind == "unreliable":
        return _found(_EN_UNRELIABLE, folded, text) or _found(_ZH_UNRELIABLE, folded, text)
    if kind == "hearsay":
        # Names are read before folding (a capital says it is one): "Tom said".
        named = _EN_HEARSAY.search(text)
        if named is not None and named.group(0)[:1].isupper() and " " in named.group(0):
            return named.group(0)
        return (
            _found(_EN_HEARSAY, folded, text)
            or _found(_ZH_HEARSAY, folded, text)
            or _found(_EN_REPORTED, folded, text)
        )
    return (
        _found(_EN_HEDGE, folded, text)
        or _found(_ZH_HEDGE, folded, text)
        or _found(_QUESTION, folded.strip(), text.strip())
    )


def stance(fact: str, evidence: str | None = None) -> Stance | None:
    """Why ``fact`` (said in the sentence ``evidence``) is not a firm first-hand fact, or None:
    a bulk instruction first, then an unreliable source, hearsay, then doubt; the evidence is
    read before the fact's own words."""
    texts = [t for t in (evidence, fact) if t and t.strip()]
    for kind in KINDS:
        for text in texts:
            words = _read(text, kind)
            if words:
                return Stance(kind, words.strip())
    return None
