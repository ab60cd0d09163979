"""The fused turn ranking (`recall_lib.ranking`): each signal on a small hand-built conversation, with the
signal's weight at 0 as the control, so every test fails when its signal is removed."""

from dataclasses import replace
from datetime import date, datetime, timezone

import numpy as np
import pytest
from recall_lib.day_windows import DayWindow
from recall_lib.ranking import (
    ONE_TOPIC_TURNS,
    OPENER_REACH,
    RULE_REACH,
    RankingWeights,
    TurnFacts,
    fuse,
    named_participant,
    neighbour_links,
    rank_turns,
    session_openers,
)
from recall_lib.textindex import tokenize

OFF = RankingWeights(fusion_k=5, speaker_boost=0, session_boost=0, neighbour_boost=0, date_boost=0)


def weights(**on: float) -> RankingWeights:
    return RankingWeights(**{**OFF.__dict__, **on})


def conversation(sessions: list[str], speakers: list[str] | None = None, days: list[int] | None = None):
    """Turns in time order: each turn's session name, speaker and day of May 2024 (default: the 1st)."""
    names = sorted(set(sessions))
    codes = np.array([names.index(s) for s in sessions], dtype=np.int64)
    epoch = np.array(
        [datetime(2024, 5, day, 12, tzinfo=timezone.utc).timestamp() for day in (days or [1] * len(sessions))]
    )
    previous, following = neighbour_links(codes)
    speakers = speakers or ["user"] * len(sessions)
    openers, near_opening, one_topic = session_openers(codes)
    return TurnFacts(
        codes, epoch, previous, following, speakers, openers=openers, near_opening=near_opening,
        one_topic=one_topic,
    )


def order(lanes, facts, w, budget=10, allowed=None, **signals):
    allowed = np.ones(len(facts.sessions), dtype=bool) if allowed is None else allowed
    return [r.turn for r in rank_turns(lanes, facts, allowed, w, budget, **signals)]


def test_fusion_rewards_agreement_between_lanes():
    # Turn 2 is second in both lanes; turns 0 and 5 are first in one lane each.
    turns, scores = fuse({"text": [0, 2], "turns": [5, 2]}, fusion_k=5)
    assert dict(zip(turns.tolist(), scores.tolist(), strict=True))[2] == pytest.approx(2 / 7)
    facts = conversation(["a"] * 6)
    assert order({"text": [0, 2], "turns": [5, 2]}, facts, OFF) == [2, 0, 5]


def test_a_scored_lanes_vote_follows_in_part_how_near_its_best_a_turn_scores():
    # Turns 3 and 1 are second in their lanes: by rank alone they tie (1 first, the earlier turn). Turn 3
    # scores nearly its lane's best, turn 1 a tenth of its lane's best.
    lanes = {"text": [0, 3], "turns": [2, 1]}
    scores = {"text": [10.0, 9.9], "turns": [0.8, 0.08]}
    facts = conversation(["a"] * 4)
    assert order(lanes, facts, OFF, scores=scores) == [0, 2, 1, 3]  # score_share 0: ranks only
    assert order(lanes, facts, weights(score_share=0.3), scores=scores) == [0, 2, 3, 1]
    # a question that gathers keeps its flat fusion: ranks only
    assert order(lanes, facts, weights(score_share=0.3), scores=scores, gathers=True) == [0, 2, 1, 3]
    turns, votes = fuse(lanes, 5, scores, 0.3)
    by_turn = dict(zip(turns.tolist(), votes.tolist(), strict=True))
    assert by_turn[0] == pytest.approx(1 / 6)  # a lane's best keeps its vote
    assert by_turn[3] == pytest.approx(0.7 / 7 + 0.3 * 0.99 / 6)
    assert by_turn[1] == pytest.approx(0.7 / 7 + 0.3 * 0.1 / 6)
    # a lane without scores (the passes, fact_turns) votes by rank only
    assert fuse({"fact_turns": [0, 1]}, 5, scores, 0.3)[1].tolist() == pytest.approx([1 / 6, 1 / 7])


def test_a_question_that_gathers_fuses_flatter_so_agreement_deep_in_the_lanes_beats_one_top_hit():
    # Turn 0 is first in the text lane only; turn 11 is tenth in both. Top-heavy (k = 5): 1/6 > 2/15;
    # flat (k = 60): 1/61 < 2/70.
    lanes = {"text": [0, *range(1, 10), 11], "turns": [*range(20, 29), 11]}
    facts = conversation(["a"] * 30)
    flat = replace(OFF, gather_fusion_k=60)
    assert order(lanes, facts, flat, budget=1, gathers=True) == [11]
    assert order(lanes, facts, flat, budget=1) == [0]  # a question that does not gather: fusion_k
    assert order(lanes, facts, replace(flat, gather_fusion_k=None), budget=1, gathers=True) == [0]
    assert order(lanes, facts, replace(flat, gather_fusion_k=5), budget=1, gathers=True) == [0]


def test_a_question_that_sweeps_a_topic_fuses_flatter_than_one_that_gathers():
    # Turn 0 is first in the text lane only; turn 99 is thirtieth in both. At k = 20: 1/21 > 2/50;
    # at k = 150: 1/151 < 2/180.
    lanes = {"text": [0, *range(1, 29), 99], "turns": [*range(40, 69), 99]}
    facts = conversation(["a"] * 100)
    w = replace(OFF, gather_fusion_k=20, sweep_fusion_k=150)
    assert order(lanes, facts, w, budget=1, gathers=True, sweeps=True) == [99]
    assert order(lanes, facts, w, budget=1, gathers=True) == [0]  # gathers without sweeping
    assert order(lanes, facts, replace(w, sweep_fusion_k=None), budget=1, gathers=True, sweeps=True) == [0]


def test_a_sweep_spreads_over_sessions_by_its_own_weight_and_a_summary_not_at_all():
    # Session a holds the three best hits of a topic; session b's one hit is weaker than all of them.
    facts = conversation(["a", "a", "a", "b"])
    lanes = {"text": [0, 1, 2, 3]}
    w = weights(session_spread=1.0, sweep_spread=0.0)
    assert order(lanes, facts, w, budget=2, gathers=True, sweeps=True) == [0, 1]  # the topic's session
    assert order(lanes, facts, w, budget=2, gathers=True) == [0, 3]  # a count: one per session
    assert order(lanes, facts, replace(w, sweep_spread=None), budget=2, gathers=True, sweeps=True) == [0, 3]
    spread = replace(w, sweep_spread=1.0)
    assert order(lanes, facts, spread, budget=2, gathers=True, sweeps=True) == [0, 3]  # the order of a topic
    summary = dict(gathers=True, sweeps=True, summarises=True)
    assert order(lanes, facts, spread, budget=2, **summary) == [0, 1]  # a summary: where it was worked on


def test_a_summary_ranks_each_half_of_an_exchange_with_the_other():
    # Session a: the user's request 0 (a lane's best hit) and the reply 1, which no lane found; session b:
    # a user's turn 2 and another user's turn 3 (no exchange). Turn 4, a reply no lane found, follows 3.
    roles = ["user_message", "assistant_message", "user_message", "user_message", "assistant_message"]
    facts = replace(conversation(["a", "a", "b", "b", "b"]), roles=roles)
    lanes = {"text": [0, 2, 3]}
    w = weights(exchange_share=1.0)
    assert order(lanes, facts, w, budget=2, gathers=True, sweeps=True) == [0, 2]  # a sweep, no summary
    assert order(lanes, facts, w, budget=2, gathers=True, sweeps=True, summarises=True) == [0, 1]
    assert order(lanes, facts, weights(exchange_share=0.0), budget=2, summarises=True) == [0, 2]  # off
    # the reply takes its share of the request's score, and says so; a user's turn lends to no user's turn
    ranked = rank_turns(lanes, facts, np.ones(5, dtype=bool), weights(exchange_share=0.5), 5, summarises=True)
    by_turn = {r.turn: r for r in ranked}
    assert by_turn[1].score == pytest.approx(by_turn[0].score / 2)
    assert [str(lift) for lift in by_turn[1].lifts] == [f"exchange +{by_turn[0].score / 2:.3f}"]
    assert by_turn[4].score == pytest.approx(by_turn[3].score / 2)  # 3's reply, not 2's
    assert set(by_turn) == {0, 1, 2, 3, 4}
    # a reply the caller's filter refuses is never lifted into the rows
    refused = np.array([True, False, True, True, True])
    assert order(lanes, facts, w, budget=2, allowed=refused, summarises=True) == [0, 2]


def test_exchange_partners_are_a_request_and_its_reply_in_one_session():
    from recall_lib.ranking import exchange_partners

    roles = ["assistant_message", "user_message", "assistant_message", "user_message", "assistant_message"]
    facts = replace(conversation(["a", "a", "a", "a", "b"]), roles=roles)
    # 0 opens with the assistant: no request before it; 3's next turn is in another session
    partners, lent = exchange_partners(np.array([0, 2, 3]), np.array([0.9, 0.5, 0.4]), facts)
    assert partners.tolist() == [1] and lent.tolist() == [0.5]  # 2 is the reply to 1
    partners, lent = exchange_partners(np.array([1, 2]), np.array([0.3, 0.5]), facts)
    assert partners.tolist() == [1, 2] and lent.tolist() == [0.5, 0.3]


def test_budget_is_one_number_across_lanes_not_a_width_per_lane():
    # The text lane's top three all beat the vector lane's second: a global top-3 takes them.
    facts = conversation(["a", "b", "c", "d", "e", "f"])
    lanes = {"text": [0, 1, 2], "turns": [3, 4]}
    assert order(lanes, facts, OFF, budget=3) == [0, 3, 1]
    assert order(lanes, facts, OFF, budget=0) == []


def test_speaker_boost_lifts_the_named_participants_turns_softly():
    facts = conversation(["a", "b", "c"], speakers=["Ana", "Ben", "Ben"])
    lanes = {"text": [0, 1, 2]}
    assert order(lanes, facts, OFF, speaker="Ben") == [0, 1, 2]  # control: signal off
    assert order(lanes, facts, weights(speaker_boost=1.0), speaker="Ben") == [1, 2, 0]
    # Soft: a small boost lets Ben's 2nd turn pass Ana's 1st only when the gap is small.
    assert order(lanes, facts, weights(speaker_boost=0.1), speaker="Ben") == [0, 1, 2]


def test_role_boost_lifts_the_asked_sides_turns_softly():
    roles = ["assistant_message", "user_message", "assistant_message"]
    facts = replace(conversation(["a", "b", "c"]), roles=roles)
    lanes = {"text": [0, 2, 1]}
    assert order(lanes, facts, OFF, role="user_message") == [0, 2, 1]  # control: signal off
    assert order(lanes, facts, weights(role_boost=2.0), role="user_message") == [1, 0, 2]
    assert order(lanes, facts, weights(role_boost=2.0)) == [0, 2, 1]  # the question asks no side
    # Soft: a small boost lets the user's turn pass the next one, not the first.
    assert order(lanes, facts, weights(role_boost=0.2), role="user_message") == [0, 1, 2]


def test_neighbours_inherit_a_hit_without_the_side_lifts():
    # Turn 0 (Ben's, the named speaker's, the user's) is the hit; turn 1 beside it is the other side's.
    roles = ["user_message", "assistant_message", "user_message"]
    facts = replace(conversation(["a", "a", "b"], speakers=["Ben", "Ana", "Ben"]), roles=roles)
    lanes = {"text": [0, 2]}

    def spill(w, **signals):
        ranked = rank_turns(lanes, facts, np.ones(3, dtype=bool), w, 3, **signals)
        turn = next(r for r in ranked if r.turn == 1)
        return next(lift.amount for lift in turn.lifts if lift.signal == "neighbour")

    plain = spill(weights(neighbour_boost=0.5))
    assert plain == pytest.approx(0.5 / 6)
    assert spill(weights(neighbour_boost=0.5, speaker_boost=1.0), speaker="Ben") == pytest.approx(plain)
    assert spill(weights(neighbour_boost=0.5, role_boost=2.0), role="user_message") == pytest.approx(plain)
    # A date lift says when, which the turn beside shares: it is inherited.
    window = DayWindow(date(2024, 5, 1), date(2024, 5, 1))
    assert spill(weights(neighbour_boost=0.5, date_boost=1.0), windows=[window]) == pytest.approx(2 * plain)


def test_other_side_spill_shrinks_what_the_other_sides_turn_beside_a_hit_inherits():
    # A user turn (0) and the assistant's reply (1) in one session; another user turn (2) elsewhere.
    roles = ["user_message", "assistant_message", "user_message"]
    facts = replace(conversation(["a", "a", "b"]), roles=roles)
    lanes = {"text": [0, 2]}

    def ranked(share, **signals):
        w = weights(neighbour_boost=1.0, role_boost=0.1, other_side_spill=share)
        return rank_turns(lanes, facts, np.ones(3, dtype=bool), w, 2, **signals)

    def reply_lift(share, **signals):
        w = weights(neighbour_boost=1.0, role_boost=0.1, other_side_spill=share)
        ranked = rank_turns(lanes, facts, np.ones(3, dtype=bool), w, 3, **signals)
        turn = next(r for r in ranked if r.turn == 1)
        return next(lift.amount for lift in turn.lifts if lift.signal == "neighbour")

    assert [r.turn for r in ranked(1.0, role="user_message")] == [0, 1]  # the reply crowds out turn 2
    assert [r.turn for r in ranked(0.5, role="user_message")] == [0, 2]
    assert reply_lift(0.5, role="user_message") == pytest.approx(0.5 / 6)
    assert [r.turn for r in ranked(0.5)] == [0, 1]  # the question asks no side: the full share
    assert reply_lift(0.5, role="assistant_message") == pytest.approx(1 / 6)  # the asked side keeps it


def test_session_spread_gives_a_gathering_question_other_sessions_best_turns():
    # Session a holds the three best hits; session b's one hit is weaker than all of them.
    facts = conversation(["a", "a", "a", "b"])
    lanes = {"text": [0, 1, 2, 3]}
    assert order(lanes, facts, weights(session_spread=1.0), budget=2, gathers=True) == [0, 3]
    assert order(lanes, facts, weights(session_spread=1.0), budget=2) == [0, 1]  # not a gathering question
    assert order(lanes, facts, OFF, budget=2, gathers=True) == [0, 1]  # the weight at 0: off
    ranked = rank_turns(lanes, facts, np.ones(4, dtype=bool), weights(session_spread=1.0), 4, gathers=True)
    factors = {r.turn: [lift.factor for lift in r.lifts if lift.signal == "spread"] for r in ranked}
    assert factors == {0: [], 3: [], 1: [pytest.approx(0.5)], 2: [pytest.approx(1 / 3)]}


def test_session_openers_name_each_sessions_first_turn_the_turns_near_it_and_short_sessions():
    openers, near, one_topic = session_openers(np.array([0, 0, 1, 0, 1, -1, 2]))
    assert openers.tolist() == [0, 0, 2, 0, 2, -1, 6]  # sessions 0 and 1 interleave in time
    assert near.tolist() == [True] * 5 + [False, True]  # a turn of no known session is near nothing
    assert one_topic.tolist() == [True] * 5 + [False, True]
    long = np.zeros(ONE_TOPIC_TURNS + 1, dtype=np.int64)
    _, near, one_topic = session_openers(long)
    assert np.flatnonzero(~near).tolist() == list(range(OPENER_REACH + 1, len(long))) and not one_topic.any()
    assert session_openers(long[:ONE_TOPIC_TURNS])[2].all()  # a short session: every turn
    assert [part.tolist() for part in session_openers(np.zeros(0, dtype=np.int64))] == [[], [], []]


def test_opener_boost_lifts_the_asked_sides_opening_of_a_session_with_a_hit():
    # Session a: the user's opening (0), then replies; the hit (4) is beyond the neighbour reach of 0.
    roles = ["user_message", "assistant_message", "user_message", "assistant_message", "assistant_message",
             "user_message"]
    facts = replace(conversation(["a"] * 5 + ["b"]), roles=roles)
    lanes = {"text": [4, 5]}
    w = weights(role_boost=0.1, opener_boost=1.0)
    assert order(lanes, facts, w, budget=2, role="user_message") == [0, 4]
    assert order(lanes, facts, weights(role_boost=0.1), budget=2, role="user_message") == [4, 5]  # weight 0
    assert order(lanes, facts, w, budget=2) == [4, 5]  # the question asks no side
    assert order(lanes, facts, w, budget=2, role="assistant_message") == [4, 5]  # the opening is the user's
    ranked = rank_turns(lanes, facts, np.ones(6, dtype=bool), w, 2, role="user_message")
    assert [lift.amount for lift in ranked[0].lifts if lift.signal == "opener"] == [pytest.approx(1 / 6)]
    not_allowed = np.array([False, True, True, True, True, True])
    assert order(lanes, facts, w, budget=2, allowed=not_allowed, role="user_message") == [4, 5]


def test_a_hit_in_a_long_session_lifts_its_opening_only_for_a_sweep_and_only_near_it():
    # One session of the user's turns longer than ONE_TOPIC_TURNS. A hit OPENER_REACH turns in lifts
    # its opening (0) for a question that sweeps a topic, not for one asking one thing; a hit three
    # turns further lifts it for neither, unless the session is short.
    facts = conversation(["a"] * (ONE_TOPIC_TURNS + 1))
    facts = replace(facts, roles=["user_message"] * len(facts.speakers))
    w = weights(role_boost=0.1, opener_boost=2.0)
    near, far = OPENER_REACH, OPENER_REACH + 3
    sweep = {"gathers": True, "sweeps": True}
    assert order({"text": [near]}, facts, w, budget=2, role="user_message", **sweep) == [0, near]
    assert order({"text": [near]}, facts, w, budget=2, role="user_message") == [near]
    assert order({"text": [far]}, facts, w, budget=2, role="user_message", **sweep) == [far]
    short = conversation(["a"] * ONE_TOPIC_TURNS)
    short = replace(short, roles=["user_message"] * len(short.speakers))
    assert order({"text": [far]}, short, w, budget=2, role="user_message") == [0, far]


def test_a_rule_is_lifted_by_the_request_that_applies_it_just_after():
    # Session "a": a rule (0), the assistant's acknowledgement (1), the request that applies it (2);
    # session "b": turns 3-5, a rule (6) after them. Text finds the request first, then 4 and 5.
    facts = conversation(["a"] * 3 + ["b"] * 4)
    rules = np.array([True, False, False, False, False, False, True])
    lanes = {"text": [2, 4, 5]}
    assert order(lanes, facts, OFF, budget=2, rules=rules) == [2, 4]
    assert sorted(order(lanes, facts, weights(rule_boost=1.0), budget=2, rules=rules)) == [0, 2]  # a tie
    assert order(lanes, facts, weights(rule_boost=1.0), budget=2) == [2, 4]  # no rules read
    assert order(lanes, facts, weights(rule_boost=1.0), budget=2, rules=rules, gathers=True) == [2, 4]
    # a rule more than RULE_REACH turns before the request, or in another session, is not lifted
    far = conversation(["a"] * (RULE_REACH + 2) + ["b"])
    far_rules = np.zeros(RULE_REACH + 3, dtype=bool)
    far_rules[0] = True
    hits = {"text": [RULE_REACH + 1, RULE_REACH + 2]}
    assert order(hits, far, weights(rule_boost=1.0), rules=far_rules) == [RULE_REACH + 1, RULE_REACH + 2]
    ranked = rank_turns(lanes, facts, np.ones(7, dtype=bool), weights(rule_boost=0.5), 7, rules=rules)
    lifts = {r.turn: [(lift.signal, lift.amount) for lift in r.lifts] for r in ranked}
    assert lifts[0] == [("rule", pytest.approx(0.5 * ranked[0].score))] and 6 not in lifts  # explained


def test_named_participant_matches_whole_words_of_this_users_speakers_only():
    participants = {"Caroline": ("caroline",), "Mel Ortiz": ("mel", "ortiz"), "user": ("user",)}
    found = named_participant(tokenize("When did Caroline go to the parade?"), participants)
    assert found == ("Caroline", {"caroline"})
    assert named_participant(tokenize("What did Mel Ortiz paint?"), participants)[0] == "Mel Ortiz"
    named = lambda question: named_participant(tokenize(question), participants)  # noqa: E731
    assert named("What did Mel paint?") == (None, set())  # not the whole name
    assert named("Did Carolines come?") == (None, set())  # not a word of it
    two = named_participant(tokenize("Did Caroline meet Mel Ortiz?"), participants)
    assert two == (None, {"caroline", "mel", "ortiz"})  # two named: no boost, both names not searched
    assert named_participant(tokenize("What did Zed say?"), participants) == (None, set())


def test_session_boost_lifts_turns_of_a_session_with_several_strong_hits():
    # Turn 0 is alone in its session; turns 1-3 share one, so turn 3 (4th in the lane) passes turn 0.
    facts = conversation(["a", "b", "b", "b", "c"])
    lanes = {"text": [0, 1, 2, 3, 4]}
    assert order(lanes, facts, OFF) == [0, 1, 2, 3, 4]
    boosted = order(lanes, facts, weights(session_boost=0.5))
    assert boosted.index(3) < boosted.index(0) and boosted[-1] == 4


def test_neighbours_inherit_part_of_a_strong_hits_score_within_their_session():
    # Turns 1 and 2 are found; 0 and 3 are their session's neighbours (two places away is in reach),
    # 4 is the next session's first turn and 5 was never near a hit.
    facts = conversation(["a", "a", "a", "a", "b", "b"])
    lanes = {"text": [2], "turns": [1]}
    assert order(lanes, facts, OFF) == [1, 2]
    spilled = order(lanes, facts, weights(neighbour_boost=0.5))
    assert spilled[:2] == [1, 2] and set(spilled[2:]) == {0, 3}
    # A neighbour passes the same filters as any candidate.
    allowed = np.array([False, True, True, True, True, True])
    assert 0 not in order(lanes, facts, weights(neighbour_boost=0.5), allowed=allowed)


def test_neighbours_are_found_per_session_when_sessions_interleave_in_time():
    # Two chats at once: a b a b. Turn 0's neighbour is turn 2, not turn 1.
    facts = conversation(["a", "b", "a", "b"])
    assert facts.previous.tolist() == [-1, -1, 0, 1] and facts.following.tolist() == [2, 3, -1, -1]
    unknown = neighbour_links(np.array([-1, -1, 0]))
    assert unknown[0].tolist() == [-1, -1, -1] and unknown[1].tolist() == [-1, -1, -1]


def test_date_boost_favours_turns_within_a_day_of_a_named_date():
    facts = conversation(["a", "b", "c"], days=[1, 9, 20])
    lanes = {"text": [0, 1, 2]}
    may_8 = (DayWindow(date(2024, 5, 8), date(2024, 5, 8)),)
    assert order(lanes, facts, OFF, windows=may_8) == [0, 1, 2]
    assert order(lanes, facts, weights(date_boost=1.0), windows=may_8) == [1, 0, 2]  # the 9th: a day off
    may_15 = (DayWindow(date(2024, 5, 15), date(2024, 5, 15)),)
    assert order(lanes, facts, weights(date_boost=1.0), windows=may_15) == [0, 1, 2]  # none near


def test_explanations_name_the_lanes_and_the_lifts():
    facts = conversation(["a", "a"], speakers=["Ben", "Ana"])
    [first, second] = rank_turns(
        {"text": [0], "turns": [0]},
        facts,
        np.ones(2, dtype=bool),
        weights(speaker_boost=1.0, neighbour_boost=0.5, session_boost=0.1),
        budget=5,
        speaker="Ben",
    )
    assert first.lanes == (("text", 1), ("turns", 1))
    assert [str(lift) for lift in first.lifts] == ["speaker x2", "session +0.067"]
    assert second.turn == 1 and second.lanes == () and [lift.signal for lift in second.lifts] == ["neighbour"]
