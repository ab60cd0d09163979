"""Which standing statements name the questions they govern (`recall_lib.standing`): the rules pass
votes for those, for any question."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.standing import ASKING_WORDS, names_its_questions
from recall_lib.textindex import tokenize


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Always include a code example when I ask about async error handling.", True),
        ("Always use 24-hour time format when I ask about meeting schedules.", True),
        ("Whenever we ask about budgets, never round the figures.", True),
        ("Never suggest paid tools if I request library options.", True),
        ("Each time I ask for a deadline, always give the date as well.", True),
        ("Each time I mention a deadline, I always feel rushed.", False),  # no asking verb
        ("I always prefer short answers.", False),  # a preference, no questions named
        ("Never use semicolons in my JavaScript.", False),
        ("When I asked about the cache last week you always said 60 s.", False),  # a past question
        ("I prefer Android phones when traveling.", False),
        ("I can always use the baking sheet without the mats if I need to.", False),  # prose, no rule
        ("Whenever we talk about the budget I always feel better.", False),
    ],
)
def test_a_rule_names_the_questions_it_governs(text, rule):
    assert names_its_questions(text) is rule


CLAUSE_PARTS = st.sampled_from(["when", "whenever", "if", "each time", "every time", "I", "we", "ask",
                                "ASK", "am asking", "request", "inquire", "about", "talk", "asks", "ask_",
                                "always", "never", "prefer", "\n", "  ", ",", ".", "ásk", "task", "I'll"])


@given(st.lists(CLAUSE_PARTS, max_size=12).map(" ".join))
def test_a_text_that_names_its_questions_holds_an_asking_word(text):
    """`lanes.rule_turns` reads only the texts the index finds under ASKING_WORDS: none is missed."""
    if names_its_questions(text):
        assert set(tokenize(text)) & set(ASKING_WORDS)
