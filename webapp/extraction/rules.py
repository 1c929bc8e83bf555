"""The regex fallback: durable facts people state outright, in English and Chinese (繁體 and 简体).

Only user messages are read. Each message is split into sentences (Chinese 。！？； too);
a sentence becomes a candidate when a rule recognises a stated fact ("remember that…",
"I prefer…", "my X is…", 記住…, 我喜歡…, 以後…都…, 不要…, or a situation with an end: "I'm in
Lisbon until Friday", 下周都出差) and it is neither a question, a one-off request nor a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..language.calendar import ZH_WEEKDAY_UNFOLDED
from ..language.phrasing import fact_form, is_memory_instruction, without_fillers, without_hedges
from ..language.standing import states_a_situation
from ..language.validity import has_end
from ..sensitive.secrets import find_secrets
from ..text import fold
from .changes import is_change_sentence, is_reminder_request
from .llm import StructuredFact
from .sentences import secret_replies, user_sentences

MAX_SENTENCE_CHARS = 300
# A situation with an end is proposed a little less surely than a stated preference.
SITUATION_CONFIDENCE = 0.7

_I = re.IGNORECASE

# Fillers in front of a fact: "Also,", "And", "Oh and", "By the way", "另外", "順便說一下".
_LEADING_FILLER = re.compile(
    r"^(?:(?:also|and|oh|ok|okay|btw|by the way|one more thing|anyway|fyi)\b[,:]?\s*)+|"
    r"^(?:(?:另外|還有|还有|對了|对了|順便(?:說一下|说一下|提一下)?|顺便(?:说一下|提一下)?)[，,]?)+",
    _I,
)
_TRAILING_FILLER = re.compile(
    r"(?:[,，]?\s*(?:please|thanks|thank you|谢谢|謝謝|拜託|拜托))?[\s.!。！;；,，]*$", _I
)

_QUESTION = re.compile(
    r"[?？]\s*$|(?:嗎|吗|呢)[\s。]*$|^(?:can|could|would|will|do|does|did|is|are|what|when|where|why|"
    r"how|which|who|should)\b|^(?:你(?:記得|记得|知道)|請問|请问|幾點|几点|什麼|什么|怎麼|怎么|為什麼|为什么)",
    _I,
)
_SECRET = re.compile(
    r"\b(?:password|passcode|passwd|api[ _-]?key|secret|token|pin code|credit card|iban)\b|"
    r"密碼|密码|口令|金鑰|密钥|信用卡|驗證碼|验证码",
    _I,
)
# Today-only requests: "right now", "for now", "tonight", 現在, 今天, 這次…
_ONE_OFF = re.compile(
    r"\b(?:right now|for now|just now|today|tonight|this (?:time|once|morning|evening|afternoon)|"
    r"at the moment)\b|(?<!from )\bnow\b|(?:現在|现在)(?!開始|开始|起)|(?<!從|从)今天(?!開始|开始|起)|今晚|這次|这次|馬上|马上|立刻|等一下|暫時|暂时",
    _I,
)


# The words that tell a fact ("just so you know", "FYI", "for the record", 跟你說, 順便說一下):
# what they wrap is a fact to keep, whoever it is about ("Just so you know, the recycling goes
# out on Thursdays", 跟你說，垃圾車每週二和週五來).
TOLD_CONFIDENCE = 0.7
_TELLS = (
    r"(?:(?:oh\s+)?(?:and\s+)?(?:just so you know|fyi|for the record|heads up|for your information|"
    r"by the way|btw|i should mention|let me tell you|(?:i )?(?:just )?wanted to let you know|"
    r"for what it'?s worth)\b|(?:跟你|和你)(?:說|说|講|讲)|告訴你|告诉你|讓你知道|让你知道|"
    r"(?:順便|顺便)?(?:說|说|提|講|讲)一下|對了|对了)"
)
_TELLING = re.compile(rf"^\s*{_TELLS}|[,，]\s*{_TELLS}[\s\S]{{0,4}}$", _I)
# … unless what is left is no statement: a command ("By the way, turn off the lights"), thanks,
# the weather of the moment ("FYI it's raining").
_NOT_TOLD = re.compile(
    r"^(?:turn|switch|set|open|close|play|stop|start|call|text|send|remind|add|remove|delete|"
    r"put|make|check|find|show|tell|give|book|order|buy|lock|unlock|dim|run|please|let'?s|"
    r"it'?s|it is|there'?s|thanks|thank|ok|okay|lol|yes|no)\b|"
    r"^(?:謝謝|谢谢|好的|沒事|没事|幫我|帮我|請|请|把|開|开|關|关|打開|打开|現在|现在|外面)",
    _I,
)


@dataclass(frozen=True)
class Rule:
    """A pattern that recognises a stated fact, the category it implies and how sure it is."""

    name: str
    pattern: re.Pattern[str]
    category: str
    confidence: float
    allows_one_off: bool = False


def _rule(
    name: str, pattern: str, category: str, confidence: float = 0.75, allows_one_off: bool = False
) -> Rule:
    return Rule(name, re.compile(pattern, _I), category, confidence, allows_one_off)


# How a standing instruction says to present something: "in Celsius", "as day/month/year",
# "in the morning briefing", "in British English" (not "the weather in Paris").
_FORMAT = (
    r"(?:(?:the|a|an|plain|simple|short|british|american|metric|imperial)\s+)*(?:\S*/\S+|"
    r"celsius|fahrenheit|metric|imperial|kilomet\w*|km\S*|miles?|mph|grams?|kilos?|kg|cups?|"
    r"ounces?|pounds?|litres?|liters?|euros?|dollars?|yen|currency|\S*english|chinese|"
    r"mandarin|cantonese|spanish|french|german|japanese|korean|italian|portuguese|dutch|"
    r"24-hour|12-hour|am/pm|iso|yaml|json|markdown|bullet\w*|lists?|tables?|"
    r"(?:morning|evening|daily|weekly) (?:briefing|summary|digest|update)\w*|briefings?|"
    r"summar\w+|digests?|day|month|year|words|numbers|\d+)\b"
)

# "remember" rules capture the fact after the trigger; the others keep the whole sentence.
RULES: tuple[Rule, ...] = (
    _rule(
        "remember-en",
        r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget|do not forget)"
        r"(?:\s+that|\s*[:,])?\s+(?P<fact>.{3,})",
        "general",
        0.9,
        True,
    ),
    _rule(
        "remember-zh",
        r"^(?:請|请|幫我|帮我)?(?:記住|记住|記下|记下|別忘了|别忘了)[，,:：\s]*(?P<fact>.{2,})",
        "general",
        0.9,
        True,
    ),
    _rule(
        "prefer-en",
        r"\bI(?:\s+really|\s+much|\s+strongly|\s+also|\s+actually|\s+do)?\s+(?:prefer|like|love|hate|dislike|"
        r"can't stand|cannot stand|enjoy)\b",
        "preference",
    ),
    _rule(
        "habit-en",
        r"\bI\s+(?:always|usually|normally|generally|never|tend to|mostly)\b",
        "workflow",
    ),
    _rule("imperative-en", r"^(?:please\s+)?(?:always|never)\s+\w+", "preference"),
    _rule(
        "dont-ever-en",
        r"^(?:please\s+)?(?:don't|do not)\b.*\b(?:ever|again|anymore|any more)\b",
        "preference",
    ),
    _rule(
        "from-now-on-en",
        r"\b(?:from now on|going forward|in (?:the )?future|by default|"
        r"every time|whenever)\b",
        "workflow",
    ),
    _rule(
        "my-x-is-en",
        r"\bmy\s+(?!question|bad|guess|point)(?:[\w'’-]+\s+){0,3}?(?:is|are)\b",
        "general",
    ),
    _rule(
        "i-am-en",
        r"\bI(?:'m|’m| am)\s+(?:a(?!\s+(?:bit|little)\b)|an|allergic|vegetarian|vegan|based|from|left-handed|"
        r"colou?r-?blind)\b|\bI\s+(?:live|work)\b|^I\s+(?:play|speak|own|drive|ride)\s+"
        r"(?!(?:home|later|now|tomorrow|soon|back|it|that|this)\b)\w",
        "general",
    ),
    _rule(
        "we-use-en",
        r"\b(?:we|our team)\s+(?:always\s+)?(?:use|follow|name|prefix|write)\b",
        "convention",
    ),
    # The household's facts keep their subject: "Our dog Biscuit is afraid of thunder".
    _rule("household-en", r"^our\s+[\w'’-]+(?:\s+\S+){2,}", "general"),
    _rule("household-habit-en", r"^we\s+(?:always|usually|normally|never)\s+\w+", "general"),
    _rule(
        "household-we-en",
        r"^we\s+(?:have|own|rent|keep|live|share|both)\s+(?!to\b|(?:a|an)\s+(?:question|"
        r"problem|meeting|guest|visitor)\b)\w+(?:\s+\S+)+",
        "general",
    ),
    # 我家 and 我們的/我们的 are the household's (我家的狗叫豆豆), as 我們家 is.
    _rule(
        "household-zh",
        r"^(?:我們家|我们家|我家|咱家|咱們家|咱们家)(?!到了|到啦)\S{3,}",
        "general",
    ),
    _rule(
        "household-our-zh",
        r"^(?:我們|我们)(?:的\S{1,6}?(?:是|在|叫|姓|有|會|会|每)|(?:住在|住|都住|有(?!點|点|事)|養|养)\S{2,})"
        r"(?!.*(?:明天|今天|昨天|到了|剛|刚|等一下))",
        "general",
    ),
    _rule(
        "prefer-zh",
        r"我(?:很|最|比較|比较|一向|向來|向来|真的|不太|不|特別|特别|超|非常|更|蠻|蛮|挺|滿|满)?(?:喜歡|喜欢|偏好|偏愛|偏爱|愛用|爱用|"
        r"討厭|讨厌|受不了)",
        "preference",
    ),
    _rule(
        "habit-zh",
        r"我(?:一直|通常|總是|总是|平常|平時|平时|都)?(?:習慣|习惯|固定|一律)",
        "workflow",
    ),
    _rule(
        "from-now-on-zh",
        r"(?:以後|以后|今後|今后|從現在開始|从现在开始|從今以後|从今以后|往後|往后|每次|"
        r"從今天開始|从今天开始|從今天起|从今天起|"
        r"下次開始|下次开始).*?(?:都|一律|請|请|要|不要|別|别|用|改)",
        "workflow",
    ),
    _rule(
        "dont-zh",
        r"^(?:請|请|你)?(?:不要|別再|别再|不准|千萬不要|千万不要|永遠不要|永远不要|絕對不要|绝对不要)",
        "preference",
    ),
    _rule(
        "my-x-is-zh",
        r"^我(?:們|们)?的(?!問題|问题|意思)[^，,。]{1,12}?(?:是|在|叫|為|为)",
        "general",
    ),
    _rule(
        "family-zh",
        r"^我(?:的)?(?:女兒|女儿|兒子|儿子|太太|老婆|先生|老公|媽媽|妈妈|爸爸|狗|貓|猫)(?:叫|是|的名字)",
        "general",
    ),
    _rule(
        "i-am-zh",
        r"^我(?:住在|在[^，,。]{1,10}(?:工作|上班|上夜班|上學|上学|念書|读书)|吃素|不吃|是(?:素食|左撇子|色盲)|對[^，,。]{1,8}過敏|对[^，,。]{1,8}过敏)",
        "general",
    ),
    # Issue 44: the user's own statements about themselves, said outright ("I'm a teacher",
    # "I have two kids", "I don't eat pork", "I go to the gym on Mondays", 我是程序員, 我怕蛇,
    # 我一般七點起床), and the standing instructions of how to answer ("Keep your answers
    # short", "Show me prices in euros", 價格都用新台幣顯示, 回答簡短一點). A one-off request,
    # a question or a passing state ("I'm tired", "I'm cooking", 我想…, 我剛…) is none.
    _rule(
        "i-am-more-en",
        r"^I(?:'m|’m| am)\s+(?:(?:learning|studying|training|working|living|renting|taking|"
        r"volunteering|teaching)\b|(?!(?:going|gonna|about|on|heading|leaving|off|back|home|here|"
        r"there|done|finished|tired|hungry|thirsty|busy|sick|bored|late|just|still|so|not sure|"
        r"sure|sorry|glad|happy|okay|ok|fine|good|afraid that|in|at|out|with|looking|trying|"
        r"thinking|wondering|a bit|a little|kind of|sort of|confused|lost|ready)\b)"
        r"(?![a-z]+ing\b)[\w-])",
        "general",
    ),
    _rule(
        "i-have-en",
        r"^I(?:\s+have|['’]ve got|\s+have got)\s+(?!to\b|(?:a|an|any|no|some|one|the)\s+"
        r"(?:question|idea|meeting|call|appointment|problem|minute|second|moment|headache|cold|"
        r"sec|request|favou?r)\b)\w",
        "general",
    ),
    _rule(
        "i-have-been-en",
        r"^I(?:['’]ve| have)\s+(?:been\s+(?:an?\s|\S.*\b(?:for|since)\s)|lived|worked|started|"
        r"owned|played|always|never)\b|^I\s+(?:was born|grew up|was raised)\b",
        "general",
    ),
    _rule(
        "i-dont-en",
        r"^I\s+(?:don't|do not|don’t|can't|cannot|can’t|never)\s+(?!(?:know|think|understand|"
        r"get|see|remember|care|mind|believe|feel|have time|need|want|agree|recall|wait|find|"
        r"hear|tell)\b)\w",
        "preference",
    ),
    # Verbs of a standing habit or trait ("I drive an electric car", "I take my coffee black")
    # …
    _rule(
        "i-do-en",
        r"^I\s+(?:drive|ride|cycle|bike|take|eat|drink|cook|bake|work|study|teach|speak|play|own|"
        r"rent|wear|read|watch|collect|volunteer|practi[cs]e|train|knit|paint|support|follow|"
        r"avoid|grow|brew|belong|garden|sing)\s+"
        r"(?!(?:it|that|this|them|home|later|now|tomorrow|soon|back|out|away)\b)\w",
        "general",
    ),
    # … and of a routine, said with how often ("I go to the gym on Mondays", not "I go to bed").
    _rule(
        "i-routine-en",
        r"^I\s+(?:go|walk|run|jog|swim|sleep|wake|get up|shop|visit|attend|fast|pray|meditate|"
        r"commute)\b.*\b(?:every|each|daily|weekly|monthly|twice|once|on\s+\w+days|on weekends|"
        r"at weekends|at night|mornings|evenings|a (?:day|week|month|year)|before|after|until|"
        r"at \d)",
        "general",
    ),
    _rule(
        "instruction-en",
        rf"^(?:(?:give|show|tell|send)\s+me\s+\S.*\s(?:in|as|with|using)\s+{_FORMAT}"
        r"|use\s+(?!(?:the|this|that|it|these|those|my|one|another|other)\b)\S+(?:\s+\S+){0,2}$"
        r"|use\s+\S.*\s(?:for (?:everything|all|every)|instead of)\b"
        r"|keep\s+(?:your|the)\s+(?:answers|replies|responses|messages|summaries)\s"
        r"|(?:call|address)\s+me\s+(?!when|if|after|before|at|later|back|tomorrow|once)\S"
        rf"|(?:write|format|display|list|sort|spell|measure|label)\s+\S.*\s(?:as|in|with|using|by)"
        rf"\s+{_FORMAT}"
        r"|stop\s+(?:suggesting|recommending|sending|showing|giving)\s)",
        "preference",
    ),
    _rule(
        "i-state-zh",
        r"^我(?![們们])(?:是(?!說|说|開玩笑|开玩笑|指|誰|谁|什麼|什么|哪)|"
        r"有(?!(?:個|个|一個|一个|件)?(?:問題|问题|事|疑問|疑问|空)|一?(?:點|点|些))|"
        r"怕(?!來不及|来不及|趕不上|赶不上|你|妳)|"
        r"開|开|騎|骑|養|养|會(?:說|講|彈|游|開|做)|会(?:说|讲|弹|游|开|做)|最近在|在學|在学|"
        r"一般(?!般)|通常|平常|平時|平时|每天|每週|每周|每個|每个|每晚|"
        rf"{ZH_WEEKDAY_UNFOLDED}|從小|从小|老家|太太|老婆|先生|老公|女朋友|男朋友|女兒|女儿|兒子|"
        r"儿子|爸|媽|妈|哥|姐|弟|妹|吃|喝|咖啡|茶|晚上|早上|下午|中午|"
        r"不(?:能|吃|喝|抽|碰|敢)|[^，,。]{1,6}(?:不耐|過敏|过敏))"
        # … not a passing state: done (了, but "for three years" 三年了), now (中), later
        # (再說), not today (沒睡好), so-so (一般般)
        r"(?!.*(?:過了|过了|完了|好了|到了|剛|刚|等一下|待會|待会|明天|昨天|要去|正在|再說|再说|"
        r"一般般|中[。！!.\s]*$|(?:沒|没)(?!有)|(?<![年月天週周久])了[。！!.\s]*$))",
        "general",
    ),
    _rule(
        "instruction-zh",
        r"^(?:(?:以後|以后|今後|今后)[，,]?)?(?:都|就)?(?:叫|稱呼|称呼)我\S"
        r"|^(?:請|请)?(?:一律|都|統一|统一)(?:用|以)\S+?(?:回答|回覆|回复|顯示|显示|表示|寫|写|標示|标示)"
        r"|^[^，,。我]{1,10}(?:都|一律)(?:用|以|發|发|傳|传|寄|寫成|写成|換算成|换算成)"
        r"|^(?:請|请)?(?:回答|回覆|回复|回應|回应)(?:要|請|请)?(?:簡短|简短|簡單|简单|短|詳細|详细|精簡|精简)"
        r"|^[^，,。我]{2,12}?(?:請|请)(?:都)?(?:加上|附上|包含|包括|顯示|显示|提供)",
        "preference",
    ),
    _rule(
        "we-use-zh",
        r"^我(?:們|们)(?:都|一律|統一|统一|團隊|团队|公司){0,2}(?:用|使用|規定|规定|約定|约定)",
        "convention",
    ),
)

# Words that make a habit a tool fact ("I always use neovim", "我习惯用 VS Code").
_TOOL_WORDS = re.compile(
    r"\b(?:vs ?code|vim|neovim|emacs|git|docker|kubernetes|python|node|npm|pnpm|yarn|terminal|"
    r"zsh|bash|fish|tmux|ide|editor|intellij|pycharm|homebrew|obsidian|notion)\b|編輯器|编辑器|終端|终端",
    _I,
)
_HABIT_RULES = {"habit-en", "habit-zh", "we-use-en"}


def clean_fact(text: str) -> str:
    """The fact without the words around it ("by the way", "from now on", "please", 對了,
    以后帮我…的时候: ``phrasing.without_fillers``) and end punctuation, capitalised."""
    text = without_fillers(_TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", text.strip())))
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def match_sentence(sentence: str, *, with_secret: bool = False) -> StructuredFact | None:
    """The fact a sentence states, or None when no rule applies or it must not be kept: a
    question, a one-off request, or a secret (unless ``with_secret``: ``withheld_facts``
    asks whether a sentence whose secret it masked states a fact)."""
    body = _LEADING_FILLER.sub("", sentence.strip())
    if not body or len(body) > MAX_SENTENCE_CHARS or _QUESTION.search(body):
        return None
    # "Everything I said before is wrong", 之前說的都不算: about memory, never a fact.
    if is_memory_instruction(body):
        return None
    if not with_secret and (_SECRET.search(body) or find_secrets(body)):
        return None
    # "Forget that I like green tea" takes a fact back, "Don't forget to water the plants" asks
    # for a reminder: neither is a fact to store (changes.py handles the first).
    if is_change_sentence(body) or is_reminder_request(body):
        return None
    one_off = bool(_ONE_OFF.search(body))
    # The sentence as said, then without the words around the fact ("Just so you know, our
    # cat…", 其實我對…過敏, "I'm probably allergic…"): a wrapping hides no fact.
    bare = without_hedges(without_fillers(body))
    for text in dict.fromkeys([body, bare]):
        for rule in RULES:
            found = rule.pattern.search(text)
            if found is None or (one_off and not rule.allows_one_off):
                continue
            fact = clean_fact(found.groupdict().get("fact") or text)
            if len(fact) < 2 or _QUESTION.search(fact) or is_memory_instruction(fact):
                return None
            return StructuredFact(fact, _category(rule, fact), rule.confidence, extractor="regex")
    told = clean_fact(bare)
    if (
        not one_off
        and bare != body
        and _TELLING.search(sentence)
        and not _NOT_TOLD.search(told)
        and len(told.split()) + len(re.findall(r"[\u4e00-\u9fff]", told)) >= 3
        and not _QUESTION.search(told)
        and not is_memory_instruction(told)
    ):
        return StructuredFact(told, "general", TOLD_CONFIDENCE, extractor="regex")
    # A temporary situation with its end ("I'm in Lisbon until Friday", 這週都在台中): a fact
    # that expires (the extraction reads when from the same words).
    if not one_off and states_a_situation(fold(body)) and has_end(body):
        fact = clean_fact(body)
        return StructuredFact(fact, "general", SITUATION_CONFIDENCE, extractor="regex")
    return None


def _category(rule: Rule, fact: str) -> str:
    if rule.name in _HABIT_RULES and _TOOL_WORDS.search(fact):
        return "tool"
    if rule.category != "general" or rule.name not in ("remember-en", "remember-zh"):
        return rule.category
    nested = match_sentence(fact, with_secret=True)
    return nested.category if nested is not None else "general"


def rule_facts(messages: Iterable[Any]) -> list[StructuredFact]:
    """Facts the rules find in the user messages, phrased as facts about the user, each with the
    message as evidence."""
    messages = list(messages)
    facts: list[StructuredFact] = []
    seen: set[str] = set()
    secret = secret_replies(messages)  # a reply that is a secret by its question gives none
    for text, sentence in user_sentences(messages):
        fact = None if text in secret else match_sentence(sentence)
        if fact is None:
            continue
        # The proposal is the fact alone (``phrasing.fact_form``: no filler, no hedge, an
        # instruction as the preference it implies, about the person); the message stays the
        # evidence, where the doubt is read from.
        content = fact_form(fact.content)
        if content.casefold() in seen:
            continue
        seen.add(content.casefold())
        facts.append(
            StructuredFact(
                content, fact.category, fact.confidence, evidence=text, extractor="regex"
            )
        )
    return facts


def withheld_facts(messages: Iterable[Any]) -> list[StructuredFact]:
    """For each user sentence that states a fact holding a secret ("Remember the garage door
    code is 4821"), the fact without it ("Has a garage door code (not kept in memory)."),
    marked ``withheld`` with the secret's kind."""
    facts: list[StructuredFact] = []
    seen: set[str] = set()
    for text, sentence in user_sentences(messages):
        finding = find_secrets(sentence)
        if finding is None or finding.fact in seen:
            continue
        stated = match_sentence(finding.masked, with_secret=True)
        if stated is None:
            continue
        seen.add(finding.fact)
        facts.append(
            StructuredFact(
                finding.fact,
                "general",
                stated.confidence,
                evidence=text,  # masked where it is kept (the review queue, an origin)
                extractor="regex",
                withheld=finding.kind,
            )
        )
    return facts
