"""What recall reads from a question (`recall_lib.question`): one table of questions and what each must
read, then the properties of the reading, and the rule that no other module reads the question's text."""

import ast
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.day_windows import DayWindow, NamedDate, history_windows
from recall_lib.question import ASSISTANT_TURNS, USER_TURNS, read_question

TODAY = date(2023, 10, 20)  # a Friday
U, A = USER_TURNS, ASSISTANT_TURNS


def d(day: str, last: str | None = None) -> DayWindow:
    return DayWindow(date.fromisoformat(day), date.fromisoformat(last or day))


# (question, today, the windows of each date it names, side, gathers)
TABLE = [
    # explicit dates: no today needed
    ("What did Ana paint on 8 May 2023?", None, [[d("2023-05-08")]], None, False),
    ("What happened on October 13, 2023?", None, [[d("2023-10-13")]], None, False),
    ("What did Gina find on 1 February, 2023?", None, [[d("2023-02-01")]], None, False),
    ("the 3rd of June 2024 trip", None, [[d("2024-06-03")]], None, False),
    ("logs from 2023-05-08", None, [[d("2023-05-08")]], None, False),
    ("What setback did Mel face in October 2023?", None, [[d("2023-10-01", "2023-10-31")]], None, False),
    ("in Feb. 2024", None, [[d("2024-02-01", "2024-02-29")]], None, False),
    ("Between May 3, 2023 and 7 July, 2023?", None, [[d("2023-05-03")], [d("2023-07-07")]], None, False),
    ("on 31 February 2023", None, [[d("2023-02-01", "2023-02-28")]], None, False),  # no such day: the month
    # numeric dates, both ways; ambiguous ones keep both meanings
    ("where was she going on 03.02.2025?", None, [[d("2025-02-03"), d("2025-03-02")]], None, False),
    ("what did I do on 16/01/2024", None, [[d("2024-01-16")]], U, False),  # 16 can only be the day
    ("what did I do on 01/16/2024", None, [[d("2024-01-16")]], U, False),  # month first
    ("notes from 3/2/25", None, [[d("2025-02-03"), d("2025-03-02")]], None, False),
    ("the invoice dated 05.05.2024", None, [[d("2024-05-05")]], None, False),  # the same either way
    ("logs of 2025/02/03", None, [[d("2025-02-03")]], None, False),  # year first: year, month, day
    ("the 12-11-99 party", None, [[d("1999-11-12"), d("1999-12-11")]], None, False),
    # relative phrases and weekdays count from today
    ("What did I eat yesterday?", TODAY, [[d("2023-10-19")]], U, False),
    ("What did I eat the day before yesterday?", TODAY, [[d("2023-10-18")]], U, False),
    ("Who called 2 weeks ago?", TODAY, [[d("2023-10-04", "2023-10-08")]], None, False),
    ("What did I buy a few days ago?", TODAY, [[d("2023-10-16", "2023-10-18")]], U, False),
    ("What did we plan last week?", TODAY, [[d("2023-10-07", "2023-10-13")]], U, False),
    ("What feed did I buy in the past two months?", TODAY, [[d("2023-08-21", "2023-10-20")]], U, False),
    ("What did I cook on Friday?", TODAY, [[d("2023-10-13")]], U, False),  # today is Friday: the last one
    ("What is the artist I started to listen to last Tuesday?", TODAY, [[d("2023-10-17")]], U, False),
    ("What is on this Monday?", TODAY, [[d("2023-10-16")]], None, False),
    ("What do I have next Monday?", TODAY, [[d("2023-10-23")]], U, False),
    ("When did Mel go camping in June?", TODAY, [[d("2023-06-01", "2023-06-30")]], None, False),
    ("the party in December", TODAY, [[d("2022-12-01", "2022-12-31")]], None, False),  # the latest one
    ("What did I eat today?", TODAY, [[d("2023-10-20")]], U, False),
    # ... and are read only with today
    ("What did I eat yesterday?", None, [], U, False),
    ("What did I cook on Friday?", None, [], U, False),
    ("When did Mel go camping in June?", None, [], None, False),
    # questions that must read no date
    ("How many times in 2023?", TODAY, [], None, True),  # a year alone names no window
    ("What did she buy at 5 pm?", TODAY, [], None, False),
    ("What do I usually do on Fridays?", TODAY, [], U, False),  # a habit, not a day
    ("Where do I swim every Friday?", TODAY, [], U, False),
    ("What is 3/4 of the budget?", TODAY, [], None, False),  # a fraction
    ("Which bug did Python 3.11.2 fix?", TODAY, [], None, False),  # a version
    ("The order of airlines I flew with before today?", TODAY, [], U, True),
    ("What did I do last year or in the past days?", TODAY, [], U, False),
    ("the 'Turbocharged Tuesdays' event", TODAY, [], None, False),
    ("What did I buy on Friday, May 5?", TODAY, [[d("2023-05-05")]], U, False),  # the date, not the weekday
    # who is asked about
    ("What is my sister's name?", None, [], U, False),
    ("I'm planning a trip to Tokyo. Do you have any tips?", None, [], U, False),  # a request, not a report
    ("Can you suggest some accessories for my phone?", None, [], U, False),
    ("What was the restaurant in Rome you recommended?", None, [], A, False),
    ("In our previous chat, you suggested a few terms. What was the second?", None, [], A, False),
    ("Remind me of your advice on tea tree oil.", None, [], A, False),
    ("Remind me what the assistant said about my tea.", None, [], A, False),
    ("What did the assistant recommend for my back pain?", None, [], A, False),
    ("When did Caroline go to the support group?", None, [], None, False),  # a third person: neither side
    ("Has Tim been to Tennessee in the US?", None, [], None, False),  # the country, not "us"
    ("Where did we stay on the US trip?", None, [], U, False),
    ("", None, [], None, False),
    # gathering several occasions
    ("How many tanks do I currently have?", None, [], U, True),
    ("What is the total weight of the feed I bought?", None, [], U, True),
    ("How much did I spend in total on gifts?", None, [], U, True),
    ("What is the order of the three trips I took?", None, [], U, True),
    ("List the airlines I flew with, from earliest to latest.", None, [], U, True),
    ("Which did I visit first, Rome or Paris?", None, [], U, True),
    ("How many times has Melanie gone to the beach?", None, [], None, True),
    ("What type of camera lens did I purchase most recently?", None, [], U, True),
    ("When did I buy the feed?", None, [], U, False),
    ("What did you recommend for dinner?", None, [], A, False),
]


@pytest.mark.parametrize(("question", "today", "dates", "side", "gathers"), TABLE)
def test_the_reading_of_each_question(question, today, dates, side, gathers):
    read = read_question(question, today)
    assert [list(named.windows) for named in read.dates] == dates
    assert (read.side, read.gathers) == (side, gathers)
    assert read.text == question and read.today == today


def test_the_table_covers_what_the_issue_asks_for():
    assert len(TABLE) >= 40
    ambiguous = [q for q, today, dates, _, _ in TABLE if any(len(ws) > 1 for ws in dates)]
    read_nothing = [q for q, _, dates, side, gathers in TABLE if not dates and side is None and not gathers]
    assert len(ambiguous) >= 3 and len(read_nothing) >= 4


def test_tokens_are_the_text_index_analyzers():
    tokens = read_question("Did Mel Ortiz paint the Café?").tokens
    assert tokens == ("did", "mel", "ortiz", "paint", "the", "café")


@given(st.text(max_size=300))
def test_any_text_reads_windows_in_order_and_never_raises(text):
    read = read_question(text, TODAY)
    assert all(w.first <= w.last for w in read.windows)


def test_a_huge_question_is_scanned_only_to_a_bound():
    assert read_question("x " * 1_000_000 + "on 8 May 2023").dates == ()


def test_ambiguous_dates_are_settled_by_the_days_the_history_holds():
    feb_3, mar_2 = d("2025-02-03"), d("2025-03-02")
    named = NamedDate("03.02.2025", (feb_3, mar_2))
    said_on = lambda *days: __import__("numpy").array([w.start + 3600 for w in days])  # noqa: E731
    assert history_windows([named], said_on(mar_2))[0] == (mar_2,)
    windows, notes = history_windows([named], said_on(feb_3, mar_2))
    assert windows == (feb_3, mar_2) and "unresolved" in notes[0] and "both days" in notes[0]
    windows, notes = history_windows([named], said_on(d("2024-01-01")))
    assert windows == (feb_3, mar_2) and "neither day" in notes[0]
    plain = NamedDate("8 May 2023", (d("2023-05-08"),))
    assert history_windows([plain], said_on(feb_3)) == ((d("2023-05-08"),), [])  # kept: no error


# -- only the reader reads the question's text -------------------------------------------------------
RECALL_LIB = Path(__file__).resolve().parents[2] / "query_modules" / "recall_lib"
#: Modules that use regular expressions on other texts: stored times (timeparse, reading), message
#: passages, tokens of any text (the reader tokenizes the question through `textindex.tokenize`),
#: action ids (ownership), model names (models), standing statements in messages (standing),
#: code fences in messages (prose).
OTHER_TEXTS = {"timeparse", "reading", "passages", "textindex", "ownership", "models", "standing", "prose"}


def test_no_module_but_the_reader_matches_patterns_or_holds_the_questions_text():
    """Statically: only `question` and the modules of OTHER_TEXTS import `re`; and no function outside
    the reader and the pipeline (which reads it at the top of the call) takes a `question` string."""
    for path in sorted(RECALL_LIB.glob("*.py")):
        tree = ast.parse(path.read_text())
        imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import)]
        imports_re = any(a.name == "re" for node in imports for a in node.names)
        if path.stem not in {"question", *OTHER_TEXTS}:
            assert not imports_re, f"{path.name} imports re: read the question in recall_lib/question.py"
        if path.stem in {"question", "pipeline"}:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for arg in node.args.args:
                    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                    assert not (arg.arg == "question" and annotation == "str"), f"{path.name}:{node.name}"


def test_at_run_time_only_the_reader_applies_a_pattern_to_the_question(monkeypatch):
    """Dynamically, over a whole `recall.render`: every regular-expression call whose subject contains
    the question is made from `recall_lib.question` (directly, or through the analyzer it calls)."""
    import re
    import sys

    from recall_kit import mix, render, runtime
    from test_roles import history

    question = "What did you say about a tank for my friend's kid yesterday, on 03.02.2024?"
    offenders = []
    originals = {}
    for name in ("search", "match", "fullmatch", "finditer", "findall", "sub", "split"):
        originals[name] = getattr(re.Pattern, name)

    class Watched:
        """A compiled pattern that notes which module applied it to the question."""

        def __init__(self, pattern):
            self.pattern = pattern

        def __getattr__(self, name):
            method = getattr(self.pattern, name)
            if name not in originals:
                return method

            def watched(subject, *args, **kwargs):
                quoted = isinstance(subject, str) and len(subject) >= 20
                if quoted and subject[:20].lower() in question.lower():
                    frame = sys._getframe(1)
                    caller = frame.f_globals.get("__name__", "")
                    outer = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
                    if not (caller.endswith(".question") or outer.endswith(".question")):
                        offenders.append((caller, outer, self.pattern.pattern))
                return method(subject, *args, **kwargs)

            return watched

    compile_ = re.compile
    monkeypatch.setattr(re, "compile", lambda *a, **k: Watched(compile_(*a, **k)))
    for name in [m for m in sys.modules if m == "recall_lib" or m.startswith("recall_lib.")]:
        monkeypatch.delitem(sys.modules, name)  # re-imported below, compiling through the watcher
    rt = runtime(history().elements())
    render(rt, "kai", question, "2024-02-04", query_vector=mix((2, 1.0)), explain=True)
    assert not offenders
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "recall_lib" or m.startswith("recall_lib.")]:
        del sys.modules[name]  # later tests import the real modules again


@pytest.mark.parametrize(
    ("question", "summarises"),
    [
        ("Can you give me a summary of how my chat app's design changed?", True),
        ("Can you summarize what I learned about object tracking?", True),
        ("Give me a quick recap of the resume analyzer work, from start to finish.", True),
        ("Summaries of my meetings, please.", True),
        ("In what order did I bring up the app's features throughout our conversations?", False),
        ("How has my training plan evolved over time?", False),
        ("How many trips did I take this year?", False),
    ],
)
def test_a_summary_is_a_sweep_that_asks_what_was_discussed(question, summarises):
    read = read_question(question)
    assert read.summarises is summarises
    assert read.sweeps or not summarises  # a summary sweeps
    assert ("asks for a summary: both halves of an exchange" in read.described()) is summarises


@pytest.mark.parametrize(
    ("question", "sweeps"),
    [
        ("Can you give me a summary of how my chat app's design changed?", True),
        ("Can you summarize what I learned about object tracking?", True),
        ("How did my discussions about message storage progress in order?", True),
        ("In what order did I bring up the app's features throughout our conversations?", True),
        ("How has my training plan evolved over time?", True),
        ("Give me a quick recap of the resume analyzer work, from start to finish.", True),
        ("What did Jon say about Gina's progress with her store?", False),  # progress as a noun: a lookup
        ("What did I change in order to fix the login bug?", False),  # "in order to" is a purpose
        ("How many trips did I take this year?", False),  # gathers, but counts occasions
        ("What is the order of the three concerts I went to?", False),  # orders a few occasions
        ("When did Caroline go to the support group?", False),
    ],
)
def test_a_question_that_sweeps_a_topic_is_told_from_one_that_counts_or_looks_up(question, sweeps):
    read = read_question(question)
    assert read.sweeps is sweeps
    assert read.gathers or not sweeps  # a sweep gathers too
    assert ("sweeps a topic across the history" in read.described()) is sweeps


@pytest.mark.parametrize(
    ("question", "requests"),
    [
        ("How should I handle errors in my async code?", True),
        ("Can you show me how my model performed after the latest changes?", True),
        ("What approaches would you suggest for state management?", True),
        ("I'm anxious about getting around Tokyo. Do you have any helpful tips?", True),
        ("What did I say about errors in my async code?", False),
        ("Can you give me a summary of how my chat app's design changed?", False),  # recounts the past
        ("Can you list the order in which I brought up the app's features?", False),  # gathers
        ("Could you remind me what you suggested for the login page?", False),
        ("How many months ago did I attend the photography workshop?", False),
        ("When did Caroline go to the support group?", False),
    ],
)
def test_a_request_for_help_is_told_from_a_question_about_the_past(question, requests):
    assert read_question(question).requests is requests


@pytest.mark.parametrize(
    ("question", "facets"),
    [
        (
            "Given my JWT expiry, the Socket.io verification, and clock skew handling, how should I proceed?",
            [("given", "my", "jwt", "expiry"), ("the", "socket", "io", "verification"),
             ("clock", "skew", "handling"), ("how", "should", "i", "proceed")],
        ),
        ("Compare the Dell XPS 13, MacBook Air M2 and Lenovo ThinkPad X1 Carbon.",
         [("compare", "the", "dell", "xps", "13"), ("macbook", "air", "m2"),
          ("lenovo", "thinkpad", "x1", "carbon")]),
        ("Given my JWT expiry handling, how should I proceed?", []),  # a clause set off: a sentence
        ("How do I fix my JWT expiry and the Socket.io verification and clock skew?", []),  # no comma
        ("What did I cook on Monday, Tuesday, and Friday?", []),  # items of one word: no facets
        ("What did Melanie paint recently?", []),
    ],
)
def test_a_question_listing_things_is_read_as_its_items(question, facets):
    assert list(read_question(question).facets) == facets
