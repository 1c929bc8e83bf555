"""How a statement is framed around its fact: as a change of a value, or as one more value.

- ``says_change``: the statement says a value changed ("… now", "from now on", "switched our
  car insurance to …", "moved the router to …", "a new swimming coach", "no longer";
  換成/换成, 改成, 改到, 改在, 改保, 搬到, 調成/调成, 現在/现在, 以後/以后改, 從現在起/从现在起,
  不再). Such a statement about a kept memory's subject replaces that memory's value.
- ``says_also``: the statement adds one more value beside those kept ("also", "too", "as
  well", "another", "a second", "in addition"; 也, 還/还, 另外, 另一, 再加上). Such a statement
  never replaces a memory: it is a fact of its own.
- ``without_framing``: the statement without what frames it as a request to remember ("Remember
  that …", "Note: …", 記得…, 记住…), so the fact itself is compared.

Read after ``fold`` (case, width, 繁→简): each list is written once, in 简体 and lower case.
"""

from __future__ import annotations

import re

from ..text import fold

_EN_CHANGE = re.compile(
    r"(?<![\w'])(?:now|nowadays|from\s+now\s+on|from\s+today|from\s+this\s+\w+\s+on|"
    r"starting\s+(?:today|now|this|next|from)|as\s+of\s+(?:today|now|this)|no\s+longer|"
    r"not\s+any\s*more|anymore|any\s+more|switched|switch(?:ed)?\s+to|changed|change[sd]?\s+to|"
    r"moved|moves\s+to|went\s+up|went\s+down|gone\s+up|gone\s+down|raised|lowered|replaced|"
    r"has\s+a\s+new|have\s+a\s+new|got\s+a\s+new|a\s+new|updated|upgraded|"
    r"(?:is|are)\s+now|these\s+days)(?![\w'])"
)
_ZH_CHANGE = re.compile(
    r"换成|换了|换到|改成|改为|改到|改在|改去|改用|改保|改买|改喝|改吃|改由|改了|搬到|搬去|搬家|调成|调到|调整为|"
    r"调高|调低|升到|降到|涨到|现在|目前|如今|从现在起|从今天起|从这周起|以后改|今后改|已经换|不再|新的|换新"
)
_EN_ALSO = re.compile(
    r"(?<![\w'])(?:also|too|as\s+well|another|a\s+second|second|in\s+addition|additionally|"
    r"besides|on\s+top\s+of|plus)(?![\w'])"
)
_ZH_ALSO = re.compile(r"也|还要|还有|还吃|还喝|还会|还对|还在|另外|另一|另有|再加上|以及|同时")
_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don't\s+forget|do\s+not\s+forget|"
    r"for\s+the\s+record|fyi|just\s+so\s+you\s+know)(?:\s+that)?\s*[:,-]?\s*"
    r"|^\s*(?:请)?(?:记得|记住|记一下|请记住|要记得|别忘了|备注)[：:，,]?\s*"
)


def says_change(text: str) -> bool:
    """The statement says a value changed (see the module's docstring)."""
    folded = fold(text)
    return bool(_EN_CHANGE.search(folded) or _ZH_CHANGE.search(folded))


def says_also(text: str) -> bool:
    """The statement adds one more value beside the kept ones (see the module's docstring)."""
    folded = fold(text)
    return bool(_EN_ALSO.search(folded) or _ZH_ALSO.search(folded))


def without_framing(text: str) -> str:
    """``text`` without a leading request to remember it ("Remember that …", 記得…)."""
    folded = fold(text)
    match = _REMEMBER.match(folded)
    if match is None or match.end() >= len(text) or len(folded) != len(text):
        return text
    rest = text[match.end() :].strip()
    return rest[:1].upper() + rest[1:] if rest else text
