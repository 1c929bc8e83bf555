"""A sentence the user said, rewritten as the fact it states about the user.

"I prefer the hallway lights at 30% after 22:00" → "Prefers the hallway lights at 30% after
22:00"; "我喜歡喝無糖綠茶" → "喜歡喝無糖綠茶" (``as_user_fact``: only a sentence that opens
with the speaker — "I …", "I'm …", "My …", 我…, 我的… — is rewritten). The words around a fact
that add nothing to it go first (``without_fillers``: "by the way", "also", "from now on",
對了, 順便, 以后帮我…的时候), and an instruction becomes the preference it implies
(``as_preference``: "Write my automations in YAML" → "Prefers automations written in YAML").
"""

from __future__ import annotations

import re

# Words between "I" and the verb that stay as they are: "I really prefer" → "Really prefers".
_ADVERBS = frozenset(
    [
        "always",
        "usually",
        "normally",
        "generally",
        "never",
        "often",
        "sometimes",
        "rarely",
        "really",
        "much",
        "strongly",
        "also",
        "still",
        "only",
        "just",
        "mostly",
        "typically",
        "definitely",
        "absolutely",
    ]
)
# Words between "I" and the verb that say nothing about the fact: "I also like" → "Likes".
_DROPPED_ADVERBS = frozenset(["also", "actually", "btw", "too"])
# Verbs that do not take an -s: "I can't stand" → "Can't stand".
_MODALS = frozenset(
    [
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "will",
        "won't",
        "would",
        "wouldn't",
        "should",
        "shouldn't",
        "must",
        "mustn't",
        "might",
        "may",
        "shall",
    ]
)
_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "’m": "is",
    "have": "has",
    "'ve": "has",
    "’ve": "has",
    "do": "does",
    "don't": "doesn't",
    "don’t": "doesn’t",
    "'d": "would",
    "’d": "would",
    "'ll": "will",
    "’ll": "will",
    "was": "was",
}
_OPENING_I = re.compile(r"^I(?=\s|['’](?:m|ve|d|ll)\b)(?P<contraction>['’](?:m|ve|d|ll))?\s*", re.I)
# "My new phone number is …" → "Phone number is …": what is kept is the number now.
_OPENING_MY = re.compile(r"^my\s+(?:(?:new|current|latest)\s+)?(?=\S)", re.I)
_WORD = re.compile(r"^(?P<word>[A-Za-z'’-]+)(?P<rest>.*)$", re.S)
# 我 at the start, not 我們/我们 (the user's team speaks for several people) nor 我家 (the
# household's: 我家的狗叫豆豆).
_OPENING_WO = re.compile(r"^我(?![們们家])(?:的)?")


def third_person(verb: str) -> str:
    """The verb as it goes after "he" or "she": prefer → prefers, go → goes, study → studies."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _MODALS or lower.endswith(("n't", "n’t")):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def is_first_person(text: str) -> bool:
    """True when the text is the user's own sentence ("I prefer…", "My…", "我喜歡…")."""
    stripped = text.strip()
    return bool(
        _OPENING_I.match(stripped) or _OPENING_MY.match(stripped) or _OPENING_WO.match(stripped)
    )


# "I take my coffee black" → "Takes their coffee black": the user's words for themselves
# further on in their own sentence.
_INNER_FIRST_PERSON = re.compile(r"\b(?:my|me|myself)\b")
_THEIR = {"my": "their", "me": "them", "myself": "themselves"}


def _their(rest: str) -> str:
    return _INNER_FIRST_PERSON.sub(lambda found: _THEIR[found.group(0)], rest)


def as_user_fact(text: str) -> str:
    """``text`` rewritten from the user's first person into a fact about the user."""
    stripped = text.strip()
    if _OPENING_WO.match(stripped):
        rest = _OPENING_WO.sub("", stripped, count=1).lstrip("，,、 ")
        return rest or stripped
    if _OPENING_MY.match(stripped):
        return _capitalised(_OPENING_MY.sub("", stripped, count=1))
    opening = _OPENING_I.match(stripped)
    if opening is None:
        return stripped
    rest = stripped[opening.end() :]
    rest = _their(rest)
    if opening.group("contraction"):
        verb = third_person(opening.group("contraction"))
        return _capitalised(f"{verb} {rest}".strip())
    words: list[str] = []
    while True:
        found = _WORD.match(rest)
        if found is None:
            return stripped  # "I" followed by no verb: leave the sentence as it was
        word, rest = found.group("word"), found.group("rest")
        if word.lower() in _DROPPED_ADVERBS:
            rest = rest.lstrip()
            continue
        if word.lower() in _ADVERBS:
            words.append(word)
            rest = rest.lstrip()
            continue
        words.append(third_person(word))
        return _capitalised(" ".join(words) + rest)


# ----------------------------------------------------------------------------- fillers
_I = re.IGNORECASE
# Said around a fact, never part of it: "Also,", "By the way", "From now on," and at the end
# ", by the way", " too", " please". "Always"/"never" stay: they are the fact.
_EN_LEADING = re.compile(
    r"^(?:(?:also|and|oh|ok|okay|hey|anyway|btw|by the way|one more thing|actually|fyi|"
    r"just so you know|for the record|from now on|going forward|from today on|"
    r"starting (?:today|now)|in (?:the )?future|please|heads up|for what it'?s worth|"
    r"for your information|you know what|to be honest|honestly|quick note|"
    r"(?:i )?(?:just )?(?:wanted|want) (?:you )?to (?:tell you|let you know|know|say|mention)"
    r"(?: that)?|i should (?:mention|say)(?: that)?|let me tell you|"
    r"(?:please )?(?:remember|note|keep in mind|don't forget|do not forget) that|"
    r"ok(?:ay)? so|so|"
    r"(?:(?:i'?m )?not sure if|i don'?t know if|in case) i (?:(?:already|ever|didn'?t) )?"
    r"(?:mentioned|told you|said|mention|tell you)(?: (?:it|this|that))?(?:,? but)?|"
    r"i'?d like you to|i want you to|i need you to)\b[,:]?\s*)+",
    _I,
)
_EN_TRAILING = re.compile(
    r"(?:[,;]?\s+(?:by the way|btw|too|as well|also|actually|from now on|going forward|"
    r"from today on|in (?:the )?future|for the record|please|thanks|thank you|"
    r"just so you know|fyi|for what it'?s worth|for your information|if that helps|"
    r"you know|ok|okay)\b[\s.!;,]*)+$",
    _I,
)
# 對了/对了 (by the way), 順便/顺便, 另外 (also), 其實/其实 (actually) …
_ZH_LEADING = re.compile(
    r"^(?:(?:另外|還有|还有|對了|对了|順便(?:說一下|说一下|提一下|講一下|讲一下)?|"
    r"顺便(?:说一下|提一下|讲一下)?|其實|其实|話說|话说|說真的|说真的|老實說|老实说|"
    r"(?:我)?(?:跟你|和你)(?:說|说|講|讲)(?:一下)?|告訴你|告诉你|讓你知道(?:一下)?|"
    r"让你知道(?:一下)?|提一下|說一下|说一下|說實話|说实话|講真|讲真|"
    r"(?:偷偷|悄悄)(?:告訴|告诉)你|"
    r"不知道(?:有沒有|有没有)?(?:跟你)?(?:說過|说过|提過|提过)(?:沒有|没有)?|"
    r"喔|哦|嗯|啊|那個|那个)[喔哦啊呀，,：:、\s]*)+"
)
# 以後/以后… (from now on): the fact holds from now on, which is what a memory is.
_ZH_FROM_NOW_ON = re.compile(
    r"^(?:以後|以后|今後|今后|往後|往后|從今以後|从今以后|從現在開始|从现在开始|從現在起|"
    r"从现在起|從今天開始|从今天开始|從今天起|从今天起)[，,\s]*(?:都|也)?"
)
# 請/请 (please), 幫我/帮我 (for me): a request's wrapping around what the user wants done.
_ZH_REQUEST = re.compile(r"^(?:請你|请你|請|请|麻煩你|麻烦你|麻煩|麻烦|你)?(?:幫我|帮我|替我)")
_ZH_POLITE = re.compile(r"^(?:請|请)(?=\S)")
# "帮我写自动化的时候都用 YAML" → "写自动化时都用 YAML": 的時候/的时候 (when) as 時/时.
_ZH_WHEN = re.compile(r"^(?P<task>[^，,。；;]{1,30}?)的(?P<when>時候|时候)")
_ZH_TRAILING = re.compile(
    r"[，,\s]*(?:謝謝|谢谢|拜託|拜托|順便(?:說|说|提|講|讲)一下|顺便(?:说|提|讲)一下|"
    r"(?:跟你|和你)(?:說|说|講|讲)(?:一下|一聲|一声)|讓你知道一下|让你知道一下|就好|就行|就可以了|"
    r"好嗎|好吗|好不好|喔|哦|啦|吧|哈|呀|耶)+$"
)
_ENDS = " \t\n.,;:!。，；：！、"
# 我最討厭香菜了: the 了 of "most" says how much, not what.
_ZH_MOST = re.compile(r"^(?P<fact>我?最\S+?)了$")


def without_fillers(text: str) -> str:
    """``text`` without the words around the fact that add nothing to it, in English, 繁體 and
    简体: "by the way", "also", "from now on", "please" at either end, 對了/对了, 順便/顺便,
    另外, 以後/以后 at the start, and a request's 請/帮我 with its 的時候 ("以后帮我写自动化的
    时候都用 YAML 格式" → "写自动化时都用 YAML 格式"). The fact itself is left as it was."""
    previous = None
    text = text.strip().strip(_ENDS)
    while text != previous:
        previous = text
        text = _EN_LEADING.sub("", text)
        text = _EN_TRAILING.sub("", text).strip().strip(_ENDS)
        text = _ZH_LEADING.sub("", text)
        text = _ZH_FROM_NOW_ON.sub("", text)
        request = _ZH_REQUEST.match(text)
        if request is not None:
            text = re.sub(r"^(?:都)?(?:把|將|将)(?=\S)", "", text[request.end() :])
            when = _ZH_WHEN.match(text)
            if when is not None:
                mark = "時" if when.group("when") == "時候" else "时"
                text = when.group("task") + mark + text[when.end() :]
        text = _ZH_POLITE.sub("", text)
        text = _ZH_TRAILING.sub("", text).strip().strip(_ENDS)
        text = _ZH_MOST.sub(r"\g<fact>", text)
    return text or previous or ""


# ----------------------------------------------------------------------------- instructions
# "Use YAML for automations" → "Prefers YAML for automations".
_USE = re.compile(r"^(?:use|go with|stick (?:to|with))\s+(?P<rest>\S.*)$", _I)
# "Answer in Traditional Chinese" → "Prefers replies in Traditional Chinese".
_REPLY = re.compile(
    r"^(?:answer|reply|respond|write back|talk to me|speak to me)\s+(?P<rest>(?:in|with|using)\s.+)$",
    _I,
)
# "Write my automations in YAML" → "Prefers automations written in YAML": a verb whose object
# reads well before its participle, the object, and what follows from a preposition on.
_PARTICIPLES = {
    "write": "written",
    "format": "formatted",
    "send": "sent",
    "save": "saved",
    "store": "stored",
    "show": "shown",
    "display": "displayed",
    "list": "listed",
    "sort": "sorted",
    "name": "named",
    "schedule": "scheduled",
    "print": "printed",
    "translate": "translated",
    "label": "labelled",
    "measure": "measured",
    "spell": "spelled",
    "set": "set",
    "turn": "turned",
    "switch": "switched",
}
_VERB_OBJECT = re.compile(
    rf"^(?P<verb>{'|'.join(_PARTICIPLES)})(?:\s+(?P<particle>on|off|up|down))?\s+"
    r"(?P<object>(?!(?:in|into|with|as|using|at|on|for|to|it|them|this|that)\b)\S.*?)\s+"
    r"(?P<rest>(?:in|into|with|as|using|at|on|for|before|after|by|to|from|under|without|"
    r"every|each)\s.+)$",
    _I,
)


# "Always give me temperatures in Celsius" → "Wants temperatures in Celsius".
_GIVE_ME = re.compile(
    r"^(?:always\s+)?(?:give|show|tell|send|bring)\s+me\s+(?P<rest>(?!to\b|that\b)\S.*)$", _I
)
# "Always call me Sam" → "Wants to be called Sam".
_CALL_ME = re.compile(r"^(?:always\s+)?(?:call|address)\s+me\s+(?P<name>\S.*)$", _I)
# 以後都叫我小安 → 希望被叫小安.
_ZH_CALL_ME = re.compile(r"^(?:都)?(?:叫|稱呼|称呼)我(?P<name>\S.*)$")
# "Always use metric units" → "Prefers metric units": "always" before an instruction the
# preference already says.
_ALWAYS = re.compile(r"^always\s+(?=(?:use|go with|stick|answer|reply|respond|write)\b)", _I)
# 回答我 / 傳給我: the "me" of a request adds nothing to the preference.
_ZH_TO_ME = re.compile(
    r"(?<=回答|回覆|回复|告訴|告诉|通知)我$|(?<=傳|传|發|发|寄)給我$|(?<=傳|传|發|发|寄)给我$"
)


# "Keep your answers short" → "Prefers short answers".
_KEEP = re.compile(
    r"^keep\s+(?:your|the)\s+(?P<what>answers|replies|responses|messages|summaries)\s+"
    r"(?P<how>[a-z-]+(?:\s+and\s+[a-z-]+)?)$",
    _I,
)
# "Don't ever give me recipes with peanuts", "Stop suggesting meat recipes" → "Doesn't want
# recipes with peanuts", "Doesn't want meat recipes".
_NOT_WANTED = re.compile(
    r"^(?:(?:don't|do not|don’t|never)\s+(?:ever\s+)?(?:give|show|send|suggest|recommend|offer)"
    r"|stop\s+(?:giving|showing|sending|suggesting|recommending|offering))"
    r"\s+(?:me\s+)?(?P<what>(?!to\b|that\b)\S.*?)(?:\s+(?:ever|again|anymore|any more))?$",
    _I,
)
# 不要給我推薦…, …給我: the "me" of a request adds nothing to the preference.
_ZH_GIVE_ME = re.compile(r"^(?P<not>不要|別|别|不用)(?:給|给)我(?=\S)|(?<=\S)(?:給|给)我$")
# 早上的簡報請加上新聞頭條 → 早上的簡報加上新聞頭條; 一律用…回答 → 用…回答.
_ZH_INNER_PLEASE = re.compile(r"^(?P<topic>[^，,。我]{2,12}?)(?:請|请)(?=\S)")
_ZH_ALL = re.compile(r"^(?:一律|統一|统一)(?=用|以)")


def as_preference(text: str) -> str:
    """An instruction ("Write my automations in YAML", "Use metric units", "Always give me
    temperatures in Celsius", "Call me Sam") as the preference it implies ("Prefers automations
    written in YAML", "Prefers metric units", "Wants temperatures in Celsius", "Wants to be
    called Sam"); anything else (a rule with "never", a statement) is returned unchanged."""
    stripped = _ALWAYS.sub("", text.strip())
    found = _KEEP.match(stripped)
    if found is not None:
        return f"Prefers {found.group('how')} {found.group('what')}"
    found = _NOT_WANTED.match(stripped)
    if found is not None:
        return "Doesn't want " + _object(found.group("what"))
    zh = _ZH_ALL.sub("", _ZH_INNER_PLEASE.sub(r"\g<topic>", _ZH_GIVE_ME.sub(r"\g<not>", stripped)))
    if zh != stripped:
        return as_preference(zh)
    found = _GIVE_ME.match(stripped)
    if found is not None:
        return "Wants " + _object(found.group("rest"))
    found = _CALL_ME.match(stripped)
    if found is not None:
        return "Wants to be called " + found.group("name")
    found = _ZH_CALL_ME.match(stripped)
    if found is not None:
        return "希望被叫" + found.group("name")
    if _ZH_TO_ME.search(stripped):
        return _ZH_TO_ME.sub("", stripped)
    if stripped != text.strip() and not (
        _USE.match(stripped) or _REPLY.match(stripped) or _VERB_OBJECT.match(stripped)
    ):
        stripped = text.strip()  # "Always brush…": the rule is the fact, "always" and all
    found = _USE.match(stripped)
    if found is not None:
        return "Prefers " + _object(found.group("rest"))
    found = _REPLY.match(stripped)
    if found is not None:
        return "Prefers replies " + found.group("rest")
    found = _VERB_OBJECT.match(stripped)
    if found is None:
        return stripped
    particle = f" {found.group('particle')}" if found.group("particle") else ""
    participle = _PARTICIPLES[found.group("verb").lower()]
    return f"Prefers {_object(found.group('object'))} {participle}{particle} {found.group('rest')}"


def _object(words: str) -> str:
    """The object of the user's instruction, without their "my" ("my automations")."""
    return re.sub(r"^my\s+", "", words.strip(), flags=_I)


def is_instruction(text: str) -> bool:
    """True when ``text`` still reads as an instruction to change something ("Switch …",
    "Change …", 把…改成…), which is never a memory's content."""
    stripped = text.strip()
    return bool(
        re.match(r"^(?:please\s+)?(?:switch|change|move|shift|bump|push)\b", stripped, _I)
        or re.match(r"^(?:請|请)?(?:把|將|将)", stripped)
        or re.search(r"改成|改為|改为|換成|换成|調成|调成|調到|调到", stripped)
    )


# ----------------------------------------------------------------------------- hedges
# The doubt is the proposal's mark (read from the sentence it came from, which stays its
# evidence: ``webapp.language.stance``), never its text: "I think I prefer window seats" →
# "Prefers window seats", 我好像比較喜歡… → 比較喜歡….
_EN_HEDGE_LEADING = re.compile(
    r"^(?:(?:i think|i guess|i believe|i suppose|i reckon|probably|maybe|perhaps|possibly|"
    r"i'?m (?:pretty|fairly|quite|almost) sure|if i remember (?:right|rightly|correctly))"
    r"(?: that)?\b[,]?\s*)+",
    _I,
)
_EN_HEDGE_INSIDE = re.compile(
    r"(?<=\s)(?:probably|maybe|perhaps|possibly|kind of|sort of)\s+(?=\S)", _I
)
_EN_HEDGE_TRAILING = re.compile(r"[,]?\s+(?:i think|i guess|i believe|probably|maybe)[\s.!]*$", _I)
_ZH_HEDGE = re.compile(
    r"^(?P<who>我(?![們们])|我(?:們|们)家)?(?:覺得|觉得|想)?"
    r"(?:好像|可能|大概|也許|也许|或許|或许|應該|应该)(?=\S)"
)
# 我覺得我的血型是O型 → 我的血型是O型: "I think" before the user's own statement.
_ZH_HEDGE_OPENING = re.compile(r"^我(?:覺得|觉得|猜|想|記得|记得)(?=我)")


def without_hedges(text: str) -> str:
    """``text`` without the words that say it is not sure ("I think", "probably", 好像, 可能)."""
    stripped = _EN_HEDGE_TRAILING.sub("", _EN_HEDGE_LEADING.sub("", text.strip()))
    stripped = _EN_HEDGE_INSIDE.sub("", stripped)
    found = _ZH_HEDGE.match(stripped)
    if found is not None:
        stripped = (found.group("who") or "") + stripped[found.end() :]
    stripped = _ZH_HEDGE_OPENING.sub("", stripped)
    return stripped or text.strip()


# "New phone number is …" → "Phone number is …": what is kept is the number now.
_NEW = re.compile(r"^(?:new|current|latest)\s+(?=(?:\S+\s+){0,3}?(?:is|are)\b)", _I)


def fact_form(text: str) -> str:
    """What a memory holds of ``text``: the fact alone (issue 44). Fillers and hedges go, an
    instruction is the preference it implies, the user's first person becomes the person
    ("Just so you know, I think I'm allergic to kiwi" → "Is allergic to kiwi"); a household
    subject ("Our dog Biscuit…", 我們家…) stays. Tombstones are matched on this form, so a
    forgotten fact said again with a filler is recognised."""
    previous = None
    stripped = text.strip()
    while stripped != previous:
        previous = stripped
        stripped = without_hedges(without_fillers(stripped))
    fact = _NEW.sub("", as_preference(as_user_fact(stripped)))
    return fact[:1].upper() + fact[1:] if fact[:1].isascii() else fact


# ----------------------------------------------------------------------------- about memory
# An instruction about memory itself ("Everything I said before is wrong", "Don't save any of
# this", 我之前說的都不算數) is never a fact to keep, whatever wraps it.
_EN_ABOUT_MEMORY = re.compile(
    r"\b(?:everything|all|anything|what|whatever|things?)\b[^.?!]*?\bi(?:'ve| have)?\s+"
    r"(?:said|told you|mentioned|say|wrote)\b[^.?!]*\b(?:wrong|false|untrue|not true|a joke|"
    r"joking|kidding|invalid|void|doesn'?t count|don'?t count|is off|are off)\b"
    r"|^(?:please\s+)?(?:ignore|disregard)\s+(?:what|everything|all|anything|whatever|"
    r"the things?)\b"
    r"|^(?:please\s+)?(?:don'?t|do not|never|stop)\s+(?:ever\s+)?(?:save|saving|store|storing|"
    r"remember|remembering|record|recording|keep|keeping|memori[sz]e|memori[sz]ing|note|noting)\s+"
    r"(?:any(?:thing)?|all|this|that|these|those|what|the things?|things|everything)\b"
    r"|\bmy (?:earlier|previous|past|old|last)\s+(?:answers?|messages?|statements?|"
    r"replies|facts?)\b[^.?!]*\b(?:wrong|false|untrue|a joke|invalid)\b"
    r"|\b(?:start over|off the record|wipe (?:your|the) memory|reset (?:your|the) memory)\b",
    _I,
)
_ZH_ABOUT_MEMORY = re.compile(
    r"(?:之前|以前|剛才|刚才|剛剛|刚刚|今天|先前|前面|上次)[^。！？]{0,8}?(?:說|说|講|讲|提|告訴|告诉)"
    r"(?:過|过)?的[^。！？]{0,8}?(?:錯|错|不算|不對|不对|開玩笑|开玩笑|假的|作廢|作废)"
    r"|(?:不要|別|别|不用|不必|請勿|请勿)(?:再)?(?:記住|记住|記下|记下|記錄|记录|存|保存|儲存|储存)"
    r"[^。！？]{0,6}?(?:任何|這些|这些|這個|这个|這件|这件|今天|我說|我说|我講|我讲|起來|起来)"
    r"|(?:全部|通通|統統|统统|都)忘(?:掉|記|记)"
    r"|(?:那些|這些|这些|剛才|刚才)[^。！？]{0,6}?(?:開玩笑|开玩笑)"
    r"|(?:清空|重置|清除)(?:你的)?(?:記憶|记忆)"
)


def is_memory_instruction(text: str) -> bool:
    """True when ``text`` is an instruction about memory itself (never a fact)."""
    stripped = text.strip()
    return bool(_EN_ABOUT_MEMORY.search(stripped) or _ZH_ABOUT_MEMORY.search(stripped))
