"""How good the extractor is: the review queue's decisions as approval rates.

A decided item is approved as proposed, approved after editing (the text was changed) or
rejected. Rates are given by extractor (the rules, or each LLM provider/model), by category
and by language (en, zh-Hant, zh-Hans of the proposed text), over the last 30 days and over
every decision the queue keeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..stores.origin import extractor_label
from ..stores.readers import ReviewReader
from ..stores.review import ReviewItem
from ..stores.timefmt import parse_ts
from ..text import language_of

RECENT_DAYS = 30
LANGUAGES = ("en", "zh-Hant", "zh-Hans")


@dataclass
class Tally:
    """Decisions counted three ways."""

    as_is: int = 0  # approved with the proposed text
    edited: int = 0  # approved after the text was edited
    rejected: int = 0

    @property
    def total(self) -> int:
        return self.as_is + self.edited + self.rejected

    def percent(self, kind: str) -> float:
        """Share of ``kind`` ("as_is", "edited", "rejected", "approved") in %, one decimal."""
        if not self.total:
            return 0.0
        count = self.as_is + self.edited if kind == "approved" else getattr(self, kind)
        return round(100 * count / self.total, 1)

    def count(self, item: ReviewItem) -> None:
        if item.status == "rejected":
            self.rejected += 1
        elif item.edited:
            self.edited += 1
        else:
            self.as_is += 1


@dataclass
class ApprovalStats:
    """Approval rates over one time window."""

    window: str  # "Last 30 days" or "Overall"
    overall: Tally = field(default_factory=Tally)
    by_extractor: dict[str, Tally] = field(default_factory=dict)
    by_category: dict[str, Tally] = field(default_factory=dict)
    by_language: dict[str, Tally] = field(default_factory=dict)

    def groups(self) -> list[tuple[str, dict[str, Tally]]]:
        """The three breakdowns with their headings, each sorted by key."""
        return [
            ("Extractor", dict(sorted(self.by_extractor.items()))),
            ("Category", dict(sorted(self.by_category.items()))),
            ("Language", {k: self.by_language[k] for k in LANGUAGES if k in self.by_language}),
        ]

    def rows(self) -> list[tuple[str, Tally]]:
        """("All decisions", overall), then ("Extractor: rules", …) and so on, for a table."""
        rows = [("All decisions", self.overall)]
        for heading, tallies in self.groups():
            rows += [(f"{heading}: {key}", tally) for key, tally in tallies.items()]
        return rows


def approval_stats(
    items: Iterable[ReviewItem], window: str = "Overall", since: datetime | None = None
) -> ApprovalStats:
    """The approval rates of the decided ``items`` (decided at ``since`` or later, if given)."""
    stats = ApprovalStats(window)
    for item in items:
        if item.status not in ("approved", "rejected"):
            continue
        if since is not None and parse_ts(item.decided_at) < since:
            continue
        stats.overall.count(item)
        stats.by_extractor.setdefault(extractor_label(item.extractor, item.model), Tally()).count(
            item
        )
        stats.by_category.setdefault(item.category, Tally()).count(item)
        stats.by_language.setdefault(language_of(item.content), Tally()).count(item)
    return stats


def extraction_quality(queue: ReviewReader, now: datetime | None = None) -> list[ApprovalStats]:
    """The last 30 days and overall, from the queue's decided items."""
    items = queue.decided()
    since = (now or datetime.now(UTC)) - timedelta(days=RECENT_DAYS)
    return [
        approval_stats(items, f"Last {RECENT_DAYS} days", since),
        approval_stats(items, "Overall"),
    ]


def _line(label: str, tally: Tally) -> str:
    return (
        f"    {label:<28} {tally.total:>5} decided  {tally.percent('approved'):5.1f}% approved "
        f"({tally.as_is} as is {tally.percent('as_is'):.1f}%, {tally.edited} edited "
        f"{tally.percent('edited'):.1f}%, {tally.rejected} rejected "
        f"{tally.percent('rejected'):.1f}%)"
    )


def format_quality(all_stats: list[ApprovalStats]) -> list[str]:
    """The figures as text lines (``memory-curator stats``)."""
    lines = []
    for stats in all_stats:
        lines.append(f"  {stats.window}:")
        if not stats.overall.total:
            lines.append("    no decisions yet")
            continue
        lines += [_line(label, tally) for label, tally in stats.rows()]
    return lines
