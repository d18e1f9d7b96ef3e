"""Simple time expressions in a question, resolved against a reference time.

"yesterday", "last Tuesday", "last week/month/year", "this week/month/year", "in May",
"in May 2023", "in 2023", "on 8 May 2023", "2023-05-08", "3 weeks ago", each optionally
after "before" / "after" / "since" / "until". The reference is the `--as-of` time or the
latest time memory holds, so a question over an old recording means that recording's
"last Tuesday". All dates are UTC calendar days.

A time of day, "at 22:15", "at 10:30 pm", "at 10 pm", narrows the day the question names
("at 22:15 on 14 November 2023", "yesterday at 9 am") or, naming none, the reference day:
"at" is that minute (an hour given alone: that hour), "around"/"about" widens it by
AROUND_MINUTE_S (an hour: AROUND_HOUR_S) either side. A bare "at 10" is not a time.

`find_time` returns the window, the words it came from, and the rest of the question.
A phrase that looks like a time expression but is not understood ("last blue moon"), or
"before/after <an event>" (resolved by the caller through search, see ask.py), comes back
as `unresolved` so the caller can note it.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

from egomem.errors import InputError

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m and m.lower() != "may"}
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(WEEKDAYS)
_DATE_FORMS = [
    r"(?P<iso>\d{4}-\d{2}-\d{2})",
    rf"(?:on\s+)?(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<dmon>{_MONTH}),?\s+(?P<dyear>\d{{4}})",
    rf"(?:on\s+)?(?P<mon2>{_MONTH})\s+(?P<dd2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<dyear2>\d{{4}})",
    r"(?P<yesterday>yesterday)",
    r"(?P<today>today)",
    rf"last\s+(?P<lastwd>{_WEEKDAY})",
    r"(?P<rel>last|this)\s+(?P<relunit>week|month|year)",
    rf"(?:in|during)\s+(?P<month>{_MONTH})(?:\s+(?P<myear>\d{{4}}))?",
    rf"(?P<month3>{_MONTH})\s+(?P<myear3>\d{{4}})",
    r"(?:in|during)\s+(?P<year>(?:19|20)\d{2})",
    r"(?P<n>\d+|a|an|one|two|three|four|five|six|ten)\s+(?P<agounit>day|week|month|year)s?\s+ago",
]
_DATE = "|".join(f"(?:{f})" for f in _DATE_FORMS)
_EXPR = re.compile(rf"\b(?:(?P<dir>before|after|since|until)\s+)?(?:{_DATE})\b", re.IGNORECASE)
# "last <word>" that none of the forms above understood, and "before/after <clause>".
_LOOSE_LAST = re.compile(r"\b(?:last|next)\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)", re.IGNORECASE)
_EVENT = re.compile(r"\b(?P<dir>before|after|since)\s+(?P<event>[^,.?!;]{3,80})", re.IGNORECASE)
# "before May": a bare month after a direction word reads as "before in May".
_DIR_MONTH = re.compile(rf"\b(?P<dir>before|after|since|until)\s+(?P<mon>{_MONTH})\b(?!\s*\d)", re.IGNORECASE)
_CLOCK = re.compile(
    r"\b(?P<how>(?:at\s+)?(?:around|about)|at)\s+(?:(?P<h>\d{1,2}):(?P<m>\d{2})(?:\s*(?P<ap>[ap])\.?m\b\.?)?"
    r"|(?P<hour>\d{1,2})\s*(?P<ap2>[ap])\.?m\b\.?)",
    re.IGNORECASE,
)
AROUND_MINUTE_S, AROUND_HOUR_S = 300.0, 1800.0
_CLAUSE_START = re.compile(r"^(?:i|you|he|she|we|they|it|my|his|her|our|their|the|a|an|[A-Z]\w+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TimeFound:
    text: str = ""  # the words of the question that set the window ("" when none)
    since: float | None = None
    until: float | None = None
    rest: str = ""  # the question without them
    unresolved: str = ""  # a time-like phrase not understood
    event: str = ""  # "before/after <event>": the event words, for the caller to look up
    event_dir: str = ""  # before | after | since


def day_start(d: date) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()


def _span(first: date, last: date) -> tuple[float, float]:
    return day_start(first), day_start(last + timedelta(days=1)) - 1e-3


def _month_span(year: int, month: int) -> tuple[float, float]:
    return _span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _window(m: re.Match[str], ref: date) -> tuple[float, float]:
    g = m.groupdict()
    if g["iso"]:
        try:
            d = date.fromisoformat(g["iso"])
        except ValueError as exc:
            raise InputError(f"not a date: {g['iso']}") from exc
        return _span(d, d)
    for day, mon, year in (("dd", "dmon", "dyear"), ("dd2", "mon2", "dyear2")):
        if g[day]:
            try:
                d = date(int(g[year]), MONTHS[g[mon].lower()], int(g[day]))
            except ValueError as exc:
                raise InputError(f"not a date: {m.group(0)}") from exc
            return _span(d, d)
    if g["yesterday"]:
        return _span(ref - timedelta(days=1), ref - timedelta(days=1))
    if g["today"]:
        return _span(ref, ref)
    if g["lastwd"]:
        back = (ref.weekday() - WEEKDAYS[g["lastwd"].lower()]) % 7 or 7
        d = ref - timedelta(days=back)
        return _span(d, d)
    if g["rel"]:
        unit, last = g["relunit"].lower(), g["rel"].lower() == "last"
        if unit == "week":
            monday = ref - timedelta(days=ref.weekday() + (7 if last else 0))
            return _span(monday, monday + timedelta(days=6))
        if unit == "month":
            y, mo = (ref.year, ref.month - 1) if last else (ref.year, ref.month)
            if mo == 0:
                y, mo = y - 1, 12
            return _month_span(y, mo)
        y = ref.year - 1 if last else ref.year
        return _span(date(y, 1, 1), date(y, 12, 31))
    if g["month"]:
        mo = MONTHS[g["month"].lower()]
        y = int(g["myear"]) if g["myear"] else (ref.year if mo <= ref.month else ref.year - 1)
        return _month_span(y, mo)
    if g["month3"]:
        return _month_span(int(g["myear3"]), MONTHS[g["month3"].lower()])
    if g["year"]:
        y = int(g["year"])
        return _span(date(y, 1, 1), date(y, 12, 31))
    n = int(g["n"]) if g["n"].isdigit() else _NUM[g["n"].lower()]
    days = n * _UNITS[g["agounit"].lower()]
    half = max(1, _UNITS[g["agounit"].lower()] // 2)
    return _span(ref - timedelta(days=days + half), ref - timedelta(days=max(0, days - half)))


def _clock(m: re.Match[str]) -> tuple[float, float] | None:
    """Seconds after midnight of the start and end of a time of day; None when not one (25:70)."""
    minute = m.group("h") is not None
    h, mins = (int(m.group("h")), int(m.group("m"))) if minute else (int(m.group("hour")), 0)
    ap = (m.group("ap") or m.group("ap2") or "").lower()
    if ap:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ap == "p" else 0)
    if h > 23 or mins > 59:
        return None
    start = h * 3600.0 + mins * 60
    end = start + (60.0 if minute else 3600.0)
    if m.group("how").lower() != "at":
        wide = AROUND_MINUTE_S if minute else AROUND_HOUR_S
        start, end = start - wide, end + wide
    return start, end - 1e-3


def find_time(question: str, ref: float | None) -> TimeFound:
    """The first time expression of `question` (a time of day narrowing its day), resolved against
    `ref` (epoch s; None: not resolvable)."""
    clock = _CLOCK.search(question)
    if clock is None:
        return _find_date(question, ref)
    found = _find_date(" ".join((question[: clock.start()] + " " + question[clock.end() :]).split()), ref)
    span = _clock(clock)
    if found.text:
        one_day = found.since is not None and found.until is not None and found.until - found.since < 86400
        day = found.since if one_day else None
    else:
        day = None if ref is None else day_start(datetime.fromtimestamp(ref, UTC).date())
    if span is None or day is None or found.unresolved or found.event:
        return replace(found, unresolved=found.unresolved or clock.group(0))
    text = " ".join(t for t in (clock.group(0), found.text) if t)
    return TimeFound(text, day + span[0], day + span[1], found.rest)


def _find_date(question: str, ref: float | None) -> TimeFound:
    question = _DIR_MONTH.sub(lambda d: f"{d.group('dir')} in {d.group('mon')}", question)
    m = _EXPR.search(question)
    if m is not None:
        if ref is None and not (m.group("iso") or m.group("dyear") or m.group("dyear2") or m.group("year")):
            return TimeFound(rest=question, unresolved=m.group(0))
        ref_day = datetime.fromtimestamp(ref or 0.0, UTC).date()
        lo, hi = _window(m, ref_day)
        since: float | None = lo
        until: float | None = hi
        direction = (m.group("dir") or "").lower()
        if direction == "before" or direction == "until":
            since, until = None, lo if direction == "before" else hi
        elif direction in ("after", "since"):
            since, until = hi if direction == "after" else lo, None
        rest = " ".join((question[: m.start()] + " " + question[m.end() :]).split())
        return TimeFound(m.group(0), since, until, rest)
    loose = _LOOSE_LAST.search(question)
    if loose is not None and loose.group("what").split()[0].lower() not in ("time", "name", "one", "thing"):
        return TimeFound(rest=question, unresolved=loose.group(0))
    ev = _EVENT.search(question)
    if ev is not None and _CLAUSE_START.match(ev.group("event").strip()):
        return TimeFound(rest=question, event=ev.group("event").strip(), event_dir=ev.group("dir").lower())
    return TimeFound(rest=question)


def parse_as_of(text: str) -> float:
    """`--as-of`: an ISO 8601 date or date-time (UTC unless it says otherwise) or epoch seconds."""
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        pass
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(
            f"--as-of {text!r}: expected an ISO 8601 date or date-time (2024-05-01, 2024-05-01T18:00) or epoch seconds"
        ) from exc
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    if len(s) == 10:  # a bare date: the whole day counts
        d += timedelta(days=1) - timedelta(milliseconds=1)
    return d.timestamp()


def iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_TIME_MENTION = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|recently|weekend|(?:last|next|this|past)\s+(?:week|month|year|night|"
    rf"weekend|summer|winter|spring|fall|autumn|{_WEEKDAY})|{_MONTH}|{_WEEKDAY}|(?:19|20)\d{{2}}|"
    rf"(?:days?|weeks?|months?|years?)\s+(?:ago|back|later)|since)\b",
    re.IGNORECASE,
)
_ASKS_TIME = re.compile(
    r"\b(?:when|how long|since when|what (?:year|month|day|date|time)|which (?:year|month|day)|"
    r"how many (?:years|months|weeks|days))\b",
    re.IGNORECASE,
)


def mentions_time(text: str) -> bool:
    """Whether `text` says when something happened ("yesterday", "last week", "in May", "2022")."""
    return _TIME_MENTION.search(text) is not None


def asks_time(question: str) -> bool:
    """Whether a question asks when or how long ("When did ...", "How long has ...")."""
    return _ASKS_TIME.search(question) is not None
