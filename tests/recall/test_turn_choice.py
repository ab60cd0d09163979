"""How the turn lanes (text, fact_turns, turns) fill their widths: distinct turns, each lane from its own
best candidates, the turns the lanes agree on first (reciprocal-rank fusion)."""

from types import SimpleNamespace

from recall_lib.lanes import CANDIDATES_PER_ROW, Candidate, choose_turns


def memory_of(n_turns):
    return SimpleNamespace(turns=[SimpleNamespace(passages=(f"turn {i}",)) for i in range(n_turns)])


def ranked(*turns):
    return [Candidate(turn, 1.0 - 0.01 * rank, passage=0) for rank, turn in enumerate(turns)]


def chosen_turns(hits, lane):
    return [h.index for h in hits[lane]]


def test_a_turn_an_earlier_lane_took_is_listed_but_the_width_brings_a_new_one():
    hits = choose_turns(
        memory_of(10),
        {"text": ranked(1, 2, 3), "turns": ranked(1, 5, 6)},
        {"text": 1, "turns": 1, "fact_turns": 0},
        (),
    )
    assert chosen_turns(hits, "text") == [1]
    assert chosen_turns(hits, "turns") == [1, 5]  # 1 shows the agreement; 5 fills the width
    assert [h.rank for h in hits["turns"]] == [1, 2]


def test_within_its_candidates_a_lane_takes_the_turn_the_other_lanes_also_rank_first():
    # The text lane's 2nd turn (7) is the vector lane's 1st: it outranks the text lane's own 1st (3).
    hits = choose_turns(
        memory_of(10),
        {"text": ranked(3, 7, 4), "turns": ranked(7, 8, 9)},
        {"text": 1, "turns": 1, "fact_turns": 0},
        (),
    )
    assert chosen_turns(hits, "text") == [7]
    assert chosen_turns(hits, "turns") == [7, 8]


def test_a_lane_never_reaches_past_its_own_candidates_or_its_width():
    width = 2
    own = list(range(10))
    hits = choose_turns(
        memory_of(30),
        {"text": ranked(*own), "turns": ranked(20, 21, own[-1])},
        {"text": width, "turns": 0, "fact_turns": 0},
        (),
    )
    # Turn 9 is also the vector lane's 3rd, but lies beyond the text lane's 2 * width candidates.
    assert set(chosen_turns(hits, "text")) <= set(own[: CANDIDATES_PER_ROW * width])
    assert len(hits["text"]) == width and hits["turns"] == ()
