"""Which standing statements name the questions they govern (`recall_lib.standing`): the rules pass
votes for those, for any question."""

import pytest
from recall_lib.standing import names_its_questions


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
