"""Which questions gather several occasions (`recall_lib.occasions`), the session spread's trigger."""

import pytest
from recall_lib.occasions import gathers_occasions


@pytest.mark.parametrize("question", [
    "How many tanks do I currently have?",
    "What is the total weight of the feed I bought?",
    "How much did I spend in total on gifts?",
    "What is the order of the three trips I took?",
    "List the airlines I flew with, from earliest to latest.",
    "Which did I visit first, Rome or Paris?",
    "How many times has Melanie gone to the beach?",
    "What type of vehicle model am I currently working on?",
    "What type of camera lens did I purchase most recently?",
])
def test_counts_totals_and_orders_gather(question):
    assert gathers_occasions(question)


@pytest.mark.parametrize("question", [
    "When did I buy the feed?",
    "What is the name of my dog?",
    "Where did Caroline move from?",
    "What did you recommend for dinner?",
    "",
])
def test_single_fact_questions_do_not(question):
    assert not gathers_occasions(question)
