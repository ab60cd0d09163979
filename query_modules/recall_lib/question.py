"""What recall reads from a question, read once at the top of a call into one frozen `Question`.

Why one reading: lanes, ranking and rendering each need something of the question (its words, the
dates it names, which side of the conversation it asks about, whether it gathers several occasions).
Read in one place, they cannot disagree, a new kind of question changes this module only, and no other
module matches a pattern against the question's text (a test checks that). What needs the user's data
is settled later from this value: which of a numeric date's meanings the history holds
(`day_windows.history_windows`), which words are this user's speakers' names
(`ranking.named_participant`), which words are search terms (`textindex.query_terms`).

What is read (the module's regular expressions, each with the reason it exists):
- **tokens**: the text index's own analyzer (`textindex.tokenize`), so questions and messages match;
- **dates**: explicit ones ("8 May 2023", "May 2023", "2023-05-08", "03.02.2025", "3/2/25"); a month
  or a day without a year, relative phrases ("yesterday", "last week", "3 days ago", "in the past two
  months") and weekdays ("on Friday", "last Tuesday") only with `today`. A numeric date whose day and
  month can swap keeps both meanings. A year alone names no window: it would favour most of a memory;
- **side**: the `action_type` whose turns answer: the assistant's when the question asks what the
  assistant said ("you recommended", "your advice", "what did the assistant say"), else the user's when
  it speaks in the first person; a "you" that only makes a request ("can you suggest") says nothing;
  a question about named third persons (LoCoMo's "When did Caroline ...") names neither side;
- **gathers**: the question counts, sums or orders things said on several occasions, or asks for the
  current one of values that changed ("how many", "in total", "the order of", "currently"); a sweep
  gathers too;
- **sweeps**: the question asks for an account of a topic across the whole history: a summary of it,
  the order its parts came up in, how it progressed ("summarize", "throughout our conversations",
  "in order", "over time", "how did it evolve"). Its evidence is many messages, often in the few
  sessions that discussed the topic, each shown by a short piece (`ranking`, `render`). "progress" as
  a noun ("her progress as a writer") and "in order to" are not sweeps.
- **summarises**: a sweep that asks for a summary ("summarize", "a summary of", "recap"): what was
  discussed, which both sides of each exchange hold: the user's request names the topic, the reply
  holds what was learned (`ranking.exchange_partners`). The order things came up in is the user's
  own account, not a summary.
- **requests**: the question asks the assistant to do or advise something ("can you", "how should I",
  "what would you suggest", "any tips"), not to recount what was said ("give me a summary of", "walk
  me through", "remind me") nor to gather occasions: a standing instruction or preference the user
  gave governs such a request (`lanes.turn_candidates`' instructions pass), not a recollection.
- **facets**: the tokens of each item of a list the question names ("given my JWT expiry handling,
  the Socket.io verification, and the clock skew fix, how ..."): clauses split at commas, semicolons
  and "and", read only when a comma or semicolon is among the breaks and at least `MIN_FACETS` clauses
  hold two tokens or more. Each names a different message, and a whole question's words or vector
  find the one its clauses share most (`lanes.facet_candidates`).

Only `re` and `datetime` (the module may import nothing outside the standard library and numpy).
"""

import re
from dataclasses import dataclass
from datetime import date, timedelta

from . import schema as s
from .day_windows import DayWindow, NamedDate
from .textindex import tokenize

USER_TURNS, ASSISTANT_TURNS = s.MESSAGE_TYPES
#: Patterns never scan further than this (a longer question is refused upstream by default).
SCAN_CHARS = 4000


@dataclass(frozen=True)
class Question:
    """One question as recall reads it; see the module docstring for each field."""

    text: str
    today: date | None
    tokens: tuple[str, ...]
    dates: tuple[NamedDate, ...]
    side: str | None
    gathers: bool
    requests: bool = False
    facets: tuple[tuple[str, ...], ...] = ()
    sweeps: bool = False
    summarises: bool = False

    @property
    def windows(self) -> tuple[DayWindow, ...]:
        """Every window its dates can mean (ambiguous ones both ways), in question order."""
        return tuple(window for named in self.dates for window in named.windows)

    def described(self) -> list[str]:
        """What was read, for `explain`."""
        parts = [f'date "{d.words}": {" or ".join(map(str, d.windows))}' for d in self.dates]
        if self.side is not None:
            parts.append(f"asks about the {'assistant' if self.side == ASSISTANT_TURNS else 'user'}'s turns")
        if self.sweeps:
            parts.append("sweeps a topic across the history")
        elif self.gathers:
            parts.append("gathers several occasions")
        if self.summarises:
            parts.append("asks for a summary: both halves of an exchange")
        if self.requests:
            parts.append("asks for help")
        if self.facets:
            parts.append(f"names {len(self.facets)} things: " + " | ".join(" ".join(f) for f in self.facets))
        return parts


def read_question(text: str, today: date | None = None) -> Question:
    """`text` read once (`today`: the day relative dates count from; none are read without it)."""
    scanned = text[:SCAN_CHARS].replace("\u2019", "'")
    summarises = _SUMMARIES.search(scanned) is not None
    sweeps = summarises or _SWEEPS.search(scanned) is not None
    gathers = sweeps or _GATHERS.search(scanned) is not None
    return Question(
        text=text,
        today=today,
        tokens=tuple(tokenize(text)),
        dates=_dates(scanned, today),
        side=_side(scanned),
        gathers=gathers,
        requests=not gathers and _REQUESTS.search(scanned) is not None and _RECOUNTS.search(scanned) is None,
        facets=_facets(scanned),
        sweeps=sweeps,
        summarises=summarises,
    )


# -- facets ----------------------------------------------------------------------------------------
#: Fewer clauses of two tokens or more than this are a sentence, not a list of things.
MIN_FACETS = 3
#: Where a list's items part: a comma or semicolon (with a list's closing "and" / "or"), or "and"
#: between two items.
_ITEM_BREAK = re.compile(r"\s*[,;]\s*(?:(?:and|or)\s+)?|\s+and\s+", re.IGNORECASE)


def _facets(text: str) -> tuple[tuple[str, ...], ...]:
    """The tokens of each clause of a list of at least `MIN_FACETS` (see the module docstring); a
    clause of one token is a word, not an item, and is left out."""
    if "," not in text and ";" not in text:
        return ()
    clauses = [tuple(tokenize(part)) for part in _ITEM_BREAK.split(text)]
    kept = tuple(tokens for tokens in clauses if len(tokens) >= 2)
    return kept if len(kept) >= MIN_FACETS else ()


# -- side ------------------------------------------------------------------------------------------
#: "US" in capitals is the country ("Has Tim been to Tennessee in the US?"), not "us".
_FIRST_PERSON = re.compile(
    r"\b(?-i:(?!US\b))(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our|us)\b", re.IGNORECASE
)
#: Who answered: "you", or the assistant named as such.
_SAYER = r"(?:you|you've|you'd|the\s+(?:assistant|ai|bot|chatbot))"
#: The sayer as the one who said something earlier: a verb of saying or giving after it.
_ASSISTANT_SAID = re.compile(
    rf"\b{_SAYER}\s+(?:had\s+|have\s+|has\s+|once\s+|previously\s+|also\s+|just\s+)?"
    r"(?:said|told|mentioned|recommended|suggested|gave|provided|listed|shared|explained|described|"
    r"proposed|advised|wrote|named|created|came\s+up\s+with|talked\s+about|pointed\s+out)\b"
    r"|\bdid\s+(?:you|the\s+(?:assistant|ai|bot|chatbot))\s+"
    r"(?:say|tell|mention|recommend|suggest|give|list|share|explain|call|name|propose)\b"
    r"|\b(?:your|the\s+assistant's)\s+"
    r"(?:answer|reply|response|suggestion|recommendation|advice|list|explanation|tips?)\b",
    re.IGNORECASE,
)


def _side(text: str) -> str | None:
    if _ASSISTANT_SAID.search(text):
        return ASSISTANT_TURNS
    if _FIRST_PERSON.search(text):
        return USER_TURNS
    return None


# -- gathering -------------------------------------------------------------------------------------
_GATHERS = re.compile(
    r"\bhow\s+many\b"
    r"|\b(?:in\s+total|total|altogether|combined|in\s+all|all\s+together)\b"
    r"|\b(?:the\s+)?order\s+(?:of|in\s+which)\b"
    r"|\bfrom\s+(?:the\s+)?(?:earliest|first|oldest)\b"
    r"|\bwhich\b.{1,60}\b(?:first|earlier|later|last)\b"
    r"|\b(?:currently|most\s+recent(?:ly)?|these\s+days|now|still|anymore)\b",
    re.IGNORECASE,
)

_SUMMARIES = re.compile(r"\bsummar(?:y|ies|ise|ize|ised|ized|ising|izing)\b|\brecap\b", re.IGNORECASE)
_SWEEPS = re.compile(
    r"\bthroughout\b|\bover\s+time\b|\bprogress(?:ed|ion)\b|\bevolv(?:e|ed|ing)\b"
    r"|\bin\s+order\b(?!\s+to\b)|\bfrom\s+start\s+to\s+finish\b",
    re.IGNORECASE,
)


# -- requests --------------------------------------------------------------------------------------
_REQUESTS = re.compile(
    r"\b(?:can|could|would|will)\s+you\b"
    r"|\bhow\s+(?:can|should|do|would|could|might)\s+(?:i|we)\b"
    r"|\bwhat\s+(?:should|would|could|can)\s+(?:i|we)\b"
    r"|\b(?:do|would)\s+you\s+(?:have|suggest|recommend)\b"
    r"|\b(?:suggest|recommend|advise|tips?|ideas?|approach(?:es)?|options|steps|help\s+me|show\s+me|give\s+me)\b",
    re.IGNORECASE,
)


#: A request to recount the past ("give me a summary of", "walk me through", "remind me"): not new work.
_RECOUNTS = re.compile(
    r"\bsummar(?:y|ies|ise|ize|izing|ising)\b|\brecap\b|\boverview\b|\bwalk\s+me\s+through\b"
    r"|\bremind\s+me\b",
    re.IGNORECASE,
)


# -- dates -----------------------------------------------------------------------------------------
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
#: A numeric date stands alone: no letter, digit or separator right before or after it (not a version
#: number "1.2.2024.3", not a part of an id).
_ALONE_BEFORE, _ALONE_AFTER = r"(?<![\w./-])", r"(?![\w]|[./-]\d)"
#: Most specific first: a span one pattern matched is not read again by a later one.
_EXPLICIT = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b",
        rf"{_ALONE_BEFORE}(?P<year>\d{{4}})([/.])(?P<month>\d{{1,2}})\2(?P<day>\d{{1,2}}){_ALONE_AFTER}",
        rf"{_ALONE_BEFORE}(?P<first>\d{{1,2}})([/.-])(?P<second>\d{{1,2}})\2(?P<short_year>\d{{4}}|\d{{2}})"
        rf"{_ALONE_AFTER}",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b",
        rf"\b{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b",
        rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:am|pm|:))",
        rf"\b(?:in|during|since|last|this|of)\s+{_MONTH}\b",
    )
)
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_COUNT_WORDS = r"\d{1,3}|a|an|one|two|three|four|five|six|few|couple\s+of|a\s+few|a\s+couple\s+of"
_AGO = re.compile(rf"\b(?P<count>{_COUNT_WORDS})\s+(?P<unit>day|week|month|year)s?\s+ago\b")
_WORD_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3,
                "couple of": 2}
#: "in the past two months": a span ending today.
_PAST = re.compile(
    r"\b(?P<word>past|last|previous)\s+(?:(?P<count>\d{1,3}|two|three|four|five|six|few|couple\s+of)\s+)?"
    r"(?P<unit>day|week|month|year)(?P<plural>s)?\b"
)
#: "before today", "until today": a bound, not the day itself.
_NOT_TODAY = re.compile(r"\b(?:before|until|till|up\s+to|prior\s+to|as\s+of)\s+today\b")
#: Phrase -> (days back to the window's first day, days back to its last).
_RELATIVE = {
    "today": (0, 0),
    "this morning": (0, 0),
    "this afternoon": (0, 0),
    "this evening": (0, 0),
    "tonight": (0, 0),
    "yesterday": (1, 1),
    "last night": (1, 1),
    "the day before yesterday": (2, 2),
    "the other day": (7, 1),
    "this week": (6, 0),
    "last week": (13, 7),
    "last weekend": (9, 1),
    "this month": (30, 0),
    "last month": (60, 30),
    "recently": (30, 0),
}
_RELATIVE_PATTERNS = tuple((re.compile(rf"\b{phrase}\b"), back) for phrase, back in _RELATIVE.items())
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: A weekday alone ("on Friday", "last Tuesday"): full names only ("sun", "sat" and "wed" are words);
#: a plural or "every" is a habit, not a day.
_WEEKDAY = re.compile(
    r"\b(?:(?P<which>last|this|next|past|previous)\s+)?(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b",
)
_EVERY = re.compile(r"\b(?:every|each|most|all)\s+$")


def _dates(text: str, today: date | None) -> tuple[NamedDate, ...]:
    """The dates `text` names, in the order they appear."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, NamedDate]] = []
    for pattern in _EXPLICIT:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            windows = _explicit_windows(match.groupdict(), today)
            if windows:
                taken.append(match.span())
                found.append((match.start(), NamedDate(match.group(0), windows)))
    if today is not None:
        lowered = text.lower()
        if not found:  # a weekday beside a date names that date's day: the date says it better
            found += _weekdays(lowered, today)
        found += _relative_dates(lowered, today)
    return tuple(named for _, named in sorted(found, key=lambda item: item[0]))


def _explicit_windows(parts: dict[str, str | None], today: date | None) -> tuple[DayWindow, ...]:
    if parts.get("first") is not None:
        return _numeric_windows(parts)
    month_text = parts.get("month") or ""
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
    if month is None or not 1 <= month <= 12:
        return ()
    year = int(parts["year"]) if parts.get("year") else None
    if year is None:
        if today is None:
            return ()
        year = today.year if month <= today.month else today.year - 1  # the latest such month up to today
    window = _day(year, month, int(parts["day"])) if parts.get("day") else _month(year, month)
    return () if window is None else (window,)


def _numeric_windows(parts: dict[str, str | None]) -> tuple[DayWindow, ...]:
    """`03.02.2025` or `3/2/25`: day first and month first, each kept when it is a real day (a two-digit
    year is 1970-2069, as POSIX reads it)."""
    first, second, year = int(parts["first"]), int(parts["second"]), int(parts["short_year"])
    if len(parts["short_year"]) == 2:
        year += 2000 if year < 70 else 1900
    meanings = dict.fromkeys(w for w in (_day(year, second, first), _day(year, first, second)) if w)
    return tuple(meanings)


def _day(year: int, month: int, day: int) -> DayWindow | None:
    try:
        one = date(year, month, day)
    except ValueError:  # 31 February, month 13, year 0
        return None
    return DayWindow(one, one)


def _month(year: int, month: int) -> DayWindow | None:
    try:
        first = date(year, month, 1)
        last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    except ValueError:
        return None
    return DayWindow(first, last)


def _relative_dates(text: str, today: date) -> list[tuple[int, NamedDate]]:
    found = []
    bounds = [m.span() for m in _NOT_TODAY.finditer(text)]
    for pattern, (back_first, back_last) in _RELATIVE_PATTERNS:
        for match in pattern.finditer(text):
            if not any(start <= match.start() < end for start, end in bounds):
                found.append((match, _back(today, back_first, back_last)))
    for match in _PAST.finditer(text):
        if match["count"] is None and match["plural"]:
            continue  # "the past days": no length
        if match["count"] is None and (match["word"] == "last" or match["unit"] == "year"):
            continue  # "last week", "last month": the calendar phrases above; a year is too wide
        days = _count(match["count"] or "one") * _UNITS[match["unit"]]
        found.append((match, _back(today, days, 0)))
    for match in _AGO.finditer(text):
        days = _count(match["count"]) * _UNITS[match["unit"]]
        slack = max(1, days // 7)  # "3 weeks ago" is vaguer than "3 days ago"
        found.append((match, _back(today, days + slack, max(days - slack, 0))))
    found = _outermost(found)  # "the day before yesterday" is not also "yesterday"
    return [(m.start(), NamedDate(m.group(0), (w,))) for m, w in found if w is not None]


def _outermost(found: list[tuple[re.Match, DayWindow | None]]) -> list[tuple[re.Match, DayWindow | None]]:
    """The matches not inside a longer one."""
    return [
        (m, w)
        for m, w in found
        if not any(
            o is not m
            and o.start() <= m.start()
            and m.end() <= o.end()
            and o.end() - o.start() > m.end() - m.start()
            for o, _ in found
        )
    ]


def _count(words: str) -> int:
    """ "3", "two", "a few", "a couple of" as a number."""
    words = " ".join(words.split())
    if words.isdigit():
        return int(words)
    return _WORD_COUNTS.get(words) or _WORD_COUNTS[words.removeprefix("a ")]


def _weekdays(text: str, today: date) -> list[tuple[int, NamedDate]]:
    """ "on Friday", "last Tuesday": the latest such day before today; "this Friday": the one of this
    week (Monday to Sunday); "next Friday": the first after today."""
    found = []
    for match in _WEEKDAY.finditer(text):
        if _EVERY.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        weekday = _WEEKDAYS.index(match["weekday"])
        which = match["which"]
        if which == "this":
            day = today + timedelta(days=weekday - today.weekday())
        elif which == "next":
            day = today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
        else:
            day = today - timedelta(days=(today.weekday() - weekday) % 7 or 7)
        found.append((match.start(), NamedDate(match.group(0), (DayWindow(day, day),))))
    return found


def _back(today: date, first_days: int, last_days: int) -> DayWindow | None:
    try:
        return DayWindow(today - timedelta(days=first_days), today - timedelta(days=last_days))
    except OverflowError:
        return None
