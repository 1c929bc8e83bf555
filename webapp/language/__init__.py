"""Reading values and key terms, once for every judgement: the language layer.

Similarity, curation, extraction (changes, validity, the rules), imports, the stores and the
doors read numbers, clock times, weekdays, dates, months, durations, ISO times and key terms
here, so one phrase has one answer everywhere: 一百 is 100 in each of them, 周3 is Wednesday in
each, "sept" is September in each, "for the next 99999999 days" is no usable duration in each
(never an OverflowError).

- ``numbers``: digits (full-width, thousands separators), English words, Chinese numerals
  (colloquial 一万二, 两万二 too), ordinals, with ``MAX_NUMBER`` as the bound of a usable value;
- ``clock``: clock times in English and Chinese, with whether the half of the day is said;
- ``calendar``: the one month table and the one weekday table (English, 周/週/星期/礼拜/禮拜,
  digits), dates with and without their year, durations bounded by ``MAX_DURATION``, and date
  arithmetic that answers None past the calendar's ends;
- ``moments``: the one ISO 8601 reader (``iso_time``, ``iso_date``) and the files' reading of a
  time (``read_time``: ISO text or Unix milliseconds, None outside the usable calendar);
- ``amounts``: numbers with their unit (%, degrees, "two kids", 兩杯);
- ``terms``: the key terms of a fact (stemmed English, jieba's Chinese words, negations).

The layer imports only the standard library, data libraries (rjieba, snowballstemmer) and
``webapp.text``; everything that judges imports it (see the import-linter contracts).
"""

from __future__ import annotations

from .amounts import Amount, amounts, ordinals
from .calendar import (
    MAX_DURATION,
    MONTHS,
    DateReading,
    add_months,
    calendar_date,
    dates,
    duration,
    later,
    month_day,
    month_number,
    months_alone,
    shifted,
)
from .clock import ClockTime, clock_minutes, clock_times
from .numbers import MAX_NUMBER, chinese_number, parse_count, parse_number
from .terms import Terms, stem, terms

__all__ = [
    "MAX_DURATION",
    "MAX_NUMBER",
    "MONTHS",
    "Amount",
    "ClockTime",
    "DateReading",
    "Terms",
    "add_months",
    "amounts",
    "calendar_date",
    "chinese_number",
    "clock_minutes",
    "clock_times",
    "dates",
    "duration",
    "later",
    "month_day",
    "month_number",
    "months_alone",
    "ordinals",
    "parse_count",
    "parse_number",
    "shifted",
    "stem",
    "terms",
]
