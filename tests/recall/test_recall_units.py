"""Pure helpers of the recall module, without a runtime: exact top-k with deterministic ties, the
stored-vector rule, the fast timestamp path, the model registry's configuration."""

import math
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.lanes import top_items, turn_candidates
from recall_lib.models import BGE_QUERY_INSTRUCTION, ModelRegistry, ModelSettings, default_query_instruction
from recall_lib.reading import utc_time
from recall_lib.timeparse import to_utc
from recall_lib.vector_rows import VectorSet
from recall_lib.vectors import CURRENT, MISSING, OTHER_MODEL, classify


def vector_set(rows, owners, passages=None):
    matrix = np.asarray(rows, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    passages = passages if passages is not None else [0] * len(owners)
    return VectorSet(matrix, np.asarray(owners), np.asarray(passages))


def test_top_items_takes_each_items_best_passage_and_breaks_ties_by_position():
    vs = vector_set(
        [[1, 0], [0, 1], [1, 1], [1, 0], [1, 0]], owners=[0, 0, 1, 2, 3], passages=[0, 1, 0, 0, 0]
    )
    found = top_items(vs, np.array([0, 1], dtype=np.float32), None, k=2, min_score=None)
    assert found == [(0, pytest.approx(1.0), 1), (1, pytest.approx(math.sqrt(0.5)), 0)]
    # Items 0, 2 and 3 tie at 1.0 along the first axis: the lowest positions win, in order.
    found = top_items(vs, np.array([1, 0], dtype=np.float32), None, k=2, min_score=None)
    assert [item for item, _, _ in found] == [0, 2]
    allowed = np.array([False, True, True, True])
    assert [i for i, _, _ in top_items(vs, np.array([1, 0], dtype=np.float32), allowed, 5, 0.9)] == [2, 3]
    assert top_items(vs, np.array([1, 0], dtype=np.float32), None, 0, None) == []


def test_a_prose_vector_scores_its_turn_in_place_of_its_code_passages():
    # Turn 0 is a request with pasted code: its two passages' vectors are the code's; its prose vector
    # (the text without the code) is what the question asks about. Turn 1 matches the question fairly.
    passages = vector_set([[0, 1, 0], [0, 0.9, 0.44], [0.9, 0.44, 0]], owners=[0, 0, 1], passages=[0, 1, 0])
    question = np.array([1, 0, 0], dtype=np.float32)
    every = np.ones(2, dtype=bool)
    without = SimpleNamespace(turn_vectors=passages, prose_vectors=VectorSet.empty(3), turns=[None] * 2)
    assert turn_candidates(without, question, every, 10, None)["turns"].turns.tolist() == [1, 0]
    prose = vector_set([[0.98, 0.2, 0]], owners=[0])
    with_prose = SimpleNamespace(turn_vectors=passages, prose_vectors=prose, turns=[None] * 2)
    found = turn_candidates(with_prose, question, every, 10, None, feedback=1)
    assert found["turns"].turns.tolist() == [0, 1]
    assert found["turns"].passages.tolist()[0] == 0  # the row shown is still one of its passages
    # The feedback pass moves the question towards what scored turn 0: its prose, not its code.
    assert found["feedback"].turns.tolist() == [0, 1]


def test_the_feedback_pass_finds_what_the_best_hit_resembles_more_than_the_question():
    # Turn 0 answers the question; turn 1 is another occasion of the same kind, in the words of turn 0
    # more than of the question; turn 2 matches the question better than turn 1 but resembles nothing
    # found. Moved towards turn 0, the feedback pass ranks turn 1 above turn 2.
    vs = vector_set([[0.8, 0.6, 0], [0.5, 0.6, 0.62], [0.6, -0.8, 0]], owners=[0, 1, 2])
    snapshot = SimpleNamespace(turn_vectors=vs, prose_vectors=VectorSet.empty(3), turns=[None] * 3)
    question = np.array([1, 0, 0], dtype=np.float32)
    every = np.ones(3, dtype=bool)
    found = turn_candidates(snapshot, question, every, 10, None, feedback=1)
    assert found["turns"].turns.tolist() == [0, 2, 1]
    assert found["feedback"].turns.tolist() == [0, 1, 2]
    assert set(turn_candidates(snapshot, question, every, 10, None)) == {"turns"}  # feedback 0: no pass
    # min_score bounds the question's own cosine in the pass too: turn 1's (0.50) is below 0.55.
    bounded = turn_candidates(snapshot, question, every, 10, 0.55, feedback=1)
    assert bounded["turns"].turns.tolist() == [0, 2] and bounded["feedback"].turns.tolist() == [0, 2]
    not_allowed = np.array([True, False, True])
    only_allowed = turn_candidates(snapshot, question, not_allowed, 10, None, feedback=1)
    assert only_allowed["feedback"].turns.tolist() == [0, 2]


@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=40),
    st.integers(1, 10),
    st.booleans(),
    st.sampled_from([None, 0.5, 0.9]),
    st.integers(0, 2**16),
)
def test_top_items_matches_a_brute_force_ranking(levels, k, grouped, min_score, seed):
    rows = [[1.0, level / 3.0] for level in levels]
    rng = np.random.default_rng(seed)
    owners = rng.integers(0, len(levels), len(levels)).tolist()
    owners = sorted(owners) if grouped else owners
    allowed = rng.random(len(levels)) < 0.8
    vs = vector_set(rows, owners, passages=list(range(len(rows))))  # a row's passage is its position
    query = np.array([0.0, 1.0], dtype=np.float32)
    scores = vs.matrix @ query
    best, first_best = {}, {}
    for row, owner in enumerate(owners):
        if not allowed[owner] or (min_score is not None and scores[row] < min_score):
            continue
        if float(scores[row]) > best.get(owner, -2.0):
            best[owner], first_best[owner] = float(scores[row]), row
    expected = sorted(best, key=lambda o: (-best[o], o))[:k]
    found = top_items(vs, query, allowed, k, min_score)
    assert [(item, passage) for item, _, passage in found] == [(o, first_best[o]) for o in expected]
    assert [score for _, score, _ in found] == [best[o] for o in expected]
    given_scores = scores.copy()
    assert top_items(vs, query, allowed, k, min_score, given_scores) == found  # cosines given
    assert np.array_equal(given_scores, scores)  # and left as given for the other lane


def test_classify_stored_vectors():
    model = "m"
    assert classify(model, None, model, 2, 1) == (MISSING, None)
    assert classify("other", [[1.0, 0.0]], model, 2, 1)[0] == OTHER_MODEL
    assert classify(model, [[1.0, 0.0, 0.0]], model, 2, 1)[0] == OTHER_MODEL  # another dimension
    assert classify(model, [[1.0, 0.0]], model, 2, 1) == (CURRENT, [[1.0, 0.0]])
    assert classify(model, [1.0, 0.0], model, 2, None)[0] == CURRENT
    assert classify(model, [[1.0, 0.0], [1.0]], model, 2, 2)[0] == "malformed: vectors of mixed length"
    assert classify(model, [[1.0, 0.0]], model, 2, 2)[0] == "malformed: vector count differs from passages"
    assert classify(model, [[math.nan, 0.0]], model, 2, 1)[0].startswith("malformed: vector not finite")
    assert classify(model, [["a", 0.0]], model, 2, 1)[0].startswith("malformed: vector not finite")
    assert classify(model, [[0.0, 0.0]], model, 2, 1)[0].startswith("malformed: vector not finite")
    not_numbers = "malformed: vectors are not a list of numbers"
    assert classify(model, "nope", model, 2, 1)[0] == not_numbers
    assert classify(model, [5.0], model, 2, 1)[0] == not_numbers
    assert classify(model, 5.0, model, 2, None)[0] == not_numbers
    assert classify(model, [[1.0, 0.0], 2.0], model, 2, 2)[0] == not_numbers


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(st.none(), st.integers(-14 * 60, 14 * 60)),
    st.booleans(),
)
def test_fast_timestamp_path_agrees_with_the_general_parser(moment, offset_minutes, micro):
    if not micro:
        moment = moment.replace(microsecond=0)
    if offset_minutes is not None:
        moment = moment.replace(tzinfo=timezone(timedelta(minutes=offset_minutes)))
    text = moment.isoformat()
    assert utc_time(text) == to_utc(text)


@pytest.mark.parametrize(
    "text", ["2024-01-01T10:00:00Z", "2024-01-01 10:00", "2024-02-30T10:00:00", "x", "2024-01-01"]
)
def test_fast_timestamp_path_falls_back_for_other_shapes(text):
    assert utc_time(text) == to_utc(text)


def test_model_settings_from_the_environment():
    settings = ModelSettings.from_env({"RECALL_MODELS": '{"a/b": "/x"}', "RECALL_TORCH_THREADS": "2"})
    assert settings.names == ("BAAI/bge-small-en-v1.5", "a/b") and settings.torch_threads == 2
    assert settings.problem is None
    assert "RECALL_MODELS is not valid JSON" in ModelSettings.from_env({"RECALL_MODELS": "{"}).problem
    assert "RECALL_MODELS must be a JSON object" in ModelSettings.from_env({"RECALL_MODELS": "[1]"}).problem
    assert "RECALL_TORCH_THREADS" in ModelSettings.from_env({"RECALL_TORCH_THREADS": "0"}).problem
    registry = ModelRegistry(ModelSettings.from_env({"RECALL_DEFAULT_MODEL": "a/b"}))
    assert registry.check_name(None) == "a/b"
    with pytest.raises(ValueError, match="embedding_model: 'c' is not a configured model; configured: 'a/b'"):
        registry.check_name("c")
    state = registry.state("a/b")  # not in the HF cache: remembered as a failure, not raised
    assert not state.loaded and state.failure


def test_query_instruction_only_for_bge_english_models():
    assert default_query_instruction("BAAI/bge-small-en-v1.5") == BGE_QUERY_INSTRUCTION
    assert default_query_instruction("BAAI/bge-base-en") == BGE_QUERY_INSTRUCTION
    assert default_query_instruction("BAAI/bge-m3") == ""
    assert default_query_instruction("sentence-transformers/all-MiniLM-L6-v2") == ""


class FakeModel:
    """Records what it is asked to encode; returns unit vectors."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts, **_):
        self.seen.extend(texts)
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))


def test_query_instruction_goes_on_questions_only():
    registry = ModelRegistry(ModelSettings.from_env({}))  # default: BAAI/bge-small-en-v1.5
    fake = FakeModel()
    registry._models["BAAI/bge-small-en-v1.5"], registry._dims["BAAI/bge-small-en-v1.5"] = fake, 2
    registry.embed_queries(["where do I live?"], "BAAI/bge-small-en-v1.5")
    registry.embed_documents(["I live in Porto."], "BAAI/bge-small-en-v1.5")
    registry.embed_labels(["lives in: where a person lives"], "BAAI/bge-small-en-v1.5")
    registry.embed_labels(["lives in: where a person lives"], "BAAI/bge-small-en-v1.5")  # memoised
    registry.embed_queries(["plain"], "BAAI/bge-small-en-v1.5", instruction="")
    assert fake.seen == [
        BGE_QUERY_INSTRUCTION + "where do I live?",
        "I live in Porto.",
        "lives in: where a person lives",
        "plain",
    ]


@given(st.lists(st.booleans(), min_size=0, max_size=30), st.integers(0, 5), st.integers(0, 30))
def test_entity_facts_take_each_entitys_first_allowed_unseen_facts(allowed, per_entity, shared):
    """Two entity hits over one fact list: each takes, in its order, the first `per_entity` facts the
    filters allow and the earlier hit did not take (a hub entity is not scanned past them)."""
    from types import SimpleNamespace

    from recall_lib.lanes import Hit, entity_facts

    n = len(allowed)
    facts = [SimpleNamespace(confidence=0.5) for _ in range(n)]
    first = SimpleNamespace(text="a", facts=tuple(range(n)))
    second = SimpleNamespace(text="b", facts=tuple(range(min(shared, n))))
    snapshot = SimpleNamespace(entities=(first, second), facts=facts)
    hits = [Hit("entities", 1, 0.9, 0), Hit("entities", 2, 0.8, 1)]
    found = entity_facts(snapshot, hits, np.array(allowed, dtype=bool), per_entity)
    ok = [f for f in range(n) if allowed[f]]
    taken_first = ok[:per_entity]
    taken_second = [f for f in ok if f < min(shared, n) and f not in taken_first][:per_entity]
    assert [h.index for h in found] == taken_first + taken_second
    assert [h.rank for h in found] == list(range(1, len(found) + 1))


_LANE_ORDER = {"facts": 0, "user_facts": 1, "entity_facts": 2, "turn_facts": 3}


def _fact_turns_by_hand(pool, hits, fact_turn, turn_ok):
    """The fact_turns rule written plainly over Hit objects: similarity lanes by score (then rank, then
    lane), confidence lanes after in lane then rank order; the facts lane's cosine <= 0 is no find."""
    from recall_lib.lanes import Hit

    every = [Hit("facts", rank, score, item) for rank, (item, score) in enumerate(pool, 1)] + list(hits)

    def key(hit):
        if hit.lane in ("facts", "user_facts"):
            return (0, -hit.score, hit.rank, _LANE_ORDER[hit.lane])
        return (1, _LANE_ORDER[hit.lane], hit.rank)

    found, seen = [], set()
    for hit in sorted(every, key=key):
        turn = fact_turn[hit.index]
        if (hit.lane == "facts" and hit.score <= 0) or turn is None or turn in seen or not turn_ok[turn]:
            continue
        seen.add(turn)
        found.append((turn, hit.score, hit.index))
    return found


@given(
    st.lists(st.sampled_from([-0.5, 0.0, 0.25, 0.5, 0.75]), max_size=12),
    st.lists(st.tuples(st.sampled_from(["user_facts", "entity_facts", "turn_facts"]),
                       st.sampled_from([0.0, 0.25, 0.5, 0.9]), st.integers(0, 19)), max_size=12),
    st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=20, max_size=20),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_fact_turns_merge_the_fact_lanes_as_the_rule_says(pool_scores, others, fact_turn, turn_ok):
    """The facts lane's pool (arrays) and the other lanes' hits give the turns the plain rule gives."""
    from types import SimpleNamespace

    from recall_lib.lanes import Hit, RankedFacts, fact_turn_candidates

    pool = [(i + 10 if i < 10 else i - 10, score) for i, score in enumerate(pool_scores)]
    ranks: dict[str, int] = {}
    hits = []
    for lane, score, item in others:
        ranks[lane] = ranks.get(lane, 0) + 1
        hits.append(Hit(lane, ranks[lane], score, item))
    facts = [SimpleNamespace(source_id=i) for i in range(20)]
    snapshot = SimpleNamespace(facts=facts, fact_turn=lambda fact: fact_turn[fact.source_id])
    mask = np.asarray(turn_ok)
    ranked = RankedFacts.of([item for item, _ in pool], [score for _, score in pool])
    found = fact_turn_candidates(snapshot, ranked, hits, mask)
    got = list(zip(found.turns.tolist(), found.scores.tolist(), found.facts.tolist(), strict=True))
    assert got == _fact_turns_by_hand(pool, hits, fact_turn, mask)
