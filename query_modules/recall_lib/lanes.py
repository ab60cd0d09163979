"""The six recall lanes, plus the facts and turns they lead to, over one `UserSnapshot`.

Every lane runs over the user's own data only (the snapshot holds nothing else), with exact cosine
over L2-normalised float32 rows (numpy) or BM25 over the user's own messages. Ties are broken by the
item's position in the snapshot (turns are in time order), so the same question gives the same rows.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import islice
from typing import NamedTuple

import numpy as np

from .config import RecallConfig
from .day_windows import DayWindow, history_windows
from .distinct import first_positions, positions
from .kinds import ENTITY, FACT, NOTE, TURN
from .question import USER_TURNS, Question
from .ranking import Lift, named_participant, rank_turns
from .snapshot import UserSnapshot
from .standing import ASKING_WORDS, STANDING_WORDS, names_its_questions
from .textindex import BM25Index, TermOverlap, overlap_best, query_terms, tokenize
from .vector_rows import VectorSet

#: Loops over hits check for the transaction's abort this often (a raised ceiling can make them long).
_ABORT_EVERY = 256


def _no_abort() -> None:
    """Nothing to check (callers outside a procedure call)."""

#: Derived steps: the facts an entity hit brings, the facts of text-lane turns (degraded mode only),
#: the source turns of all facts found, and the fused ranking of all turn lanes (the TURN rows).
DERIVED = ("entity_facts", "turn_facts", "fact_turns", "fused")
KIND = {
    "memories": NOTE,
    "turns": TURN,
    "text": TURN,
    "fact_turns": TURN,
    "fused": TURN,
    "entities": ENTITY,
    "facts": FACT,
    "user_facts": FACT,
    "entity_facts": FACT,
    "turn_facts": FACT,
}
VECTOR_LANES = ("turns", "entities", "facts", "user_facts")


class Hit(NamedTuple):
    """One item a lane found: `index` points into the snapshot list of the lane's kind. A NamedTuple,
    not a frozen dataclass: hundreds are made per call, and a frozen dataclass's `__init__` costs ~5x
    (1.1 against 0.2 us here; ~0.3 ms of a 6 ms warm call)."""

    lane: str
    rank: int  # 1-based, within the lane
    score: float
    index: int
    passage: int | None = None  # the passage that matched (turns and notes)
    via: str | None = None  # how a derived hit was reached, for `explain`
    fact: int | None = None  # the fact a turn was found through (named by `via`): verified with it
    found_by: tuple["Hit", ...] = ()  # a fused turn: the turn lanes' hits for it (their own ranks)
    lifts: tuple[Lift, ...] = ()  # a fused turn: the signals that lifted it (`str`: "session +0.120")

    @property
    def kind(self) -> str:
        return KIND[self.lane]


class MatchedPassages:
    """Which passage of a turn or note holds the most of one call's search terms, worked out once per item
    and call: a turn is asked for it by every lane that found it, by the fused ranking and by the rows."""

    def __init__(self, snapshot: UserSnapshot, terms: Sequence[str]) -> None:
        self.snapshot, self.overlap = snapshot, TermOverlap(terms)
        self._turns: dict[int, int] = {}
        self._notes: dict[int, int] = {}

    def turn(self, index: int) -> int:
        found = self._turns.get(index)
        if found is None:
            found = self._turns[index] = self.overlap.best(self.snapshot.turns[index].passages)
        return found

    def note(self, index: int) -> int:
        found = self._notes.get(index)
        if found is None:
            found = self._notes[index] = self.overlap.best(self.snapshot.notes[index].passages)
        return found


@dataclass(frozen=True)
class LaneResults:
    hits: dict[str, tuple[Hit, ...]]  # lane -> hits in rank order (lanes that ran only)
    vector_off: str | None  # why the vector lanes did not run, or None
    terms: tuple[str, ...]  # the question's search terms
    reading: tuple[str, ...] = ()  # what was read from the question, and how its dates were settled
    left_out: int = 0  # rows a budget fit left out (`showing`)
    matched: MatchedPassages | None = field(default=None, compare=False)  # the terms' passages, memoised
    lines: dict = field(default_factory=dict, compare=False)  # rendered row lines, memoised (`render`)

    def of(self, lane: str) -> tuple[Hit, ...]:
        return self.hits.get(lane, ())

    def showing(self, items: set[tuple[str, int]], left_out: int) -> "LaneResults":
        """These results with the shown hits (`shown`) on `items` only: what a budget fit kept."""
        hits = {
            lane: found if lane in TURN_LANES else tuple(h for h in found if (h.kind, h.index) in items)
            for lane, found in self.hits.items()
        }
        return replace(self, hits=hits, left_out=left_out)

    def shown(self) -> Iterator[Hit]:
        """The hits that become rendered rows: turns through the fused ranking only (the turn lanes'
        own hits feed it), entities through their facts."""
        for lane, lane_hits in self.hits.items():
            if lane not in TURN_LANES:
                yield from (hit for hit in lane_hits if hit.kind != ENTITY)


class Candidate(NamedTuple):
    """A turn a turn lane (text, turns, fact_turns) shows: its score in that lane, and the passage (or
    the fact, whose sentence picks the passage) it was found at. (A NamedTuple, as `Hit` is.)"""

    turn: int
    score: float
    passage: int | None = None
    fact: int | None = None


@dataclass(frozen=True)
class Candidates:
    """The turns one turn lane ranks, best first, as parallel arrays: a lane ranks up to `fusion_depth`
    turns (hundreds a call), so a `Candidate` object is made only for a turn that is shown (`at`)."""

    turns: np.ndarray  # int64 indexes into the snapshot's turns
    scores: np.ndarray  # float64, the lane's score
    passages: np.ndarray  # int64, the passage the turn was found at; -1: none
    facts: np.ndarray  # int64, the fact the turn was reached through; -1: none

    @classmethod
    def of(
        cls, turns: Sequence[int], scores: Sequence[float], passages: Sequence[int] | None = None,
        facts: Sequence[int] | None = None,
    ) -> "Candidates":
        none = np.full(len(turns), -1, dtype=np.int64)
        return cls(
            np.asarray(turns, dtype=np.int64),
            np.asarray(scores, dtype=np.float64),
            none if passages is None else np.asarray(passages, dtype=np.int64),
            none if facts is None else np.asarray(facts, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.turns)

    def head(self, n: int) -> "Candidates":
        return Candidates(self.turns[:n], self.scores[:n], self.passages[:n], self.facts[:n])

    def at(self, position: int) -> Candidate:
        turns, scores, passages, facts = self._listed
        passage, fact = passages[position], facts[position]
        return Candidate(
            turns[position], scores[position], passage if passage >= 0 else None, fact if fact >= 0 else None
        )

    @cached_property
    def _listed(self) -> tuple[list, list, list, list]:
        """The arrays as Python lists, made once: `at` runs for every shown turn (a fused row reads
        each lane that found it), and reading a numpy array one element at a time costs ~10x."""
        return self.turns.tolist(), self.scores.tolist(), self.passages.tolist(), self.facts.tolist()


class TurnHits:
    """The hit for a turn at its rank in a turn lane (`_turn_hit`), made once per call: the lane's own
    hits (`recall.lanes`) and the fused rows that lane found (`found_by`) are the same hits."""

    def __init__(
        self, snapshot: UserSnapshot, candidates: dict[str, Candidates], matched: MatchedPassages
    ) -> None:
        self.snapshot, self.candidates, self.matched = snapshot, candidates, matched
        self._made: dict[tuple[str, int], Hit] = {}

    def at(self, lane: str, rank: int) -> Hit:
        hit = self._made.get((lane, rank))
        if hit is None:
            candidate = self.candidates[lane].at(rank - 1)
            hit = self._made[lane, rank] = _turn_hit(self.snapshot, lane, rank, candidate, self.matched)
        return hit


#: The lanes whose hits are turns; each votes in the fused ranking (`ranking.rank_turns`), as do the
#: turns lane's feedback, instructions and rules passes (`turn_candidates`) and the text lane's facets pass
#: (`facet_candidates`), which have no hits of their own.
TURN_LANES = ("text", "fact_turns", "turns")
#: The turn lanes ranked by cosine: a turn at cosine <= 0 was not found by them.
VECTOR_TURN_LANES = ("turns", "feedback", "instructions", "rules")
#: The turn lanes whose votes follow their scores in part (`ranking.fuse`): each scores every turn of
#: the user by the question's own words or vector, so a score says how near the lane's best a turn
#: comes. The passes search a handful of turns, and fact_turns' scores are the facts', not the turns'.
SCORED_LANES = ("text", "turns")
#: How far the feedback pass moves the question towards its best passages: the query is
#: question + FEEDBACK_WEIGHT x (their mean), so 1 weighs what was found as much as what was asked.
FEEDBACK_WEIGHT = 1.0


def run_lanes(
    snapshot: UserSnapshot,
    question: Question,
    query: np.ndarray | None,
    settings: RecallConfig,
    embed_types: Callable[[Sequence[str]], np.ndarray],
    vector_off: str | None,
    abort: Callable[[], None] = _no_abort,
) -> LaneResults:
    """All lanes `settings.lanes` names; vector lanes only when `vector_off` is None and `query` given.

    The turn lanes each rank up to `fusion_depth` turns; their own hits (for `recall.lanes`) are their
    first `text_k` / `turns_k` / `fact_turns_k`, and the TURN rows are the `fused` lane: the best
    `turns_budget` turns of all of them together (see `ranking`).
    """
    speaker, name_words = named_participant(question.tokens, snapshot.participants)
    terms = tuple(query_terms(question.tokens, snapshot.text_index))
    if settings.speaker_boost and name_words and set(terms) - name_words:
        terms = tuple(t for t in terms if t not in name_words)
    searched = searched_terms(snapshot.text_index, terms, settings.text_inflections)
    matched = MatchedPassages(snapshot, [word for term in searched for word in term])
    turn_ok = turn_mask(snapshot, settings)
    fact_ok = fact_mask(snapshot, settings)
    gathers = question.gathers
    vectors_on = vector_off is None and query is not None
    wanted = set(settings.lanes)
    depth = settings.fusion_depth
    # the instructions and rules passes search the turns lane's vectors; the rule lift (ranking) needs none
    vector_passes = vectors_on and "turns" in wanted and settings.turns_k > 0
    asks = question.side == USER_TURNS and question.requests
    instructions = settings.instruction_turns if vector_passes and asks else 0
    wants_rules = bool((vector_passes and settings.rule_turns) or settings.rule_boost)
    standing = standing_turns(snapshot, turn_ok) if instructions or wants_rules else None
    rules = rule_turns(snapshot, standing) if standing is not None and wants_rules else None
    hits: dict[str, tuple[Hit, ...]] = {}
    candidates: dict[str, Candidates] = {}
    if "memories" in wanted:
        hits["memories"] = memories_lane(snapshot, query if vectors_on else None, terms, settings, matched)
    if "text" in wanted and settings.text_k:
        candidates["text"] = text_candidates(snapshot, searched, turn_ok, depth)
        if question.facets and settings.facet_turns:
            candidates["facets"] = facet_candidates(
                snapshot, question.facets, turn_ok, settings.facet_turns, settings.text_inflections
            )
    fact_pool = RankedFacts.of((), ())
    if vectors_on:
        if "turns" in wanted and settings.turns_k:
            feedback = settings.feedback_turns if gathers else 0
            candidates.update(
                turn_candidates(snapshot, query, turn_ok, depth, settings.min_score, feedback, instructions,
                                settings.rule_turns, standing=standing, rules=rules,
                                prose_vectors=settings.prose_vectors)
            )
        if "entities" in wanted:
            hits["entities"] = entities_lane(snapshot, query, settings)
            hits["entity_facts"] = entity_facts(
                snapshot, hits["entities"], fact_ok, settings.edges_per_entity
            )
        fact_scores = fact_cosines(snapshot, query) if {"facts", "user_facts"} & wanted else None
        if "facts" in wanted:
            pool_size = max(settings.facts_k, depth)
            fact_pool = facts_lane(snapshot, query, fact_scores, fact_ok, pool_size, settings)
            hits["facts"] = fact_pool.hits("facts", settings.facts_k)
        if "user_facts" in wanted:
            hits["user_facts"] = user_facts_lane(
                snapshot, query, fact_scores, fact_ok, settings, embed_types
            )
    elif "text" in wanted:
        text = candidates.get("text", Candidates.of((), ())).head(settings.text_k)
        found = zip(text.turns.tolist(), text.scores.tolist(), strict=True)
        text_hits = [Hit("text", rank, score, turn) for rank, (turn, score) in enumerate(found, 1)]
        hits["turn_facts"] = turn_facts(snapshot, text_hits, fact_ok, settings.facts_k)
    fact_hits = [h for lane in ("entity_facts", "user_facts", "turn_facts") for h in hits.get(lane, ())]
    if (len(fact_pool) or fact_hits) and settings.fact_turns_k:
        candidates["fact_turns"] = fact_turn_candidates(snapshot, fact_pool, fact_hits, turn_ok).head(depth)
    widths = {"text": settings.text_k, "fact_turns": settings.fact_turns_k, "turns": settings.turns_k}
    turn_hits = TurnHits(snapshot, candidates, matched)
    for lane in TURN_LANES:
        if lane in candidates:
            shown = min(widths[lane], len(candidates[lane]))
            hits[lane] = tuple(turn_hits.at(lane, rank) for rank in range(1, shown + 1))
    windows, date_notes = history_windows(question.dates, snapshot.turn_facts.epoch)
    hits["fused"] = fused_turns(turn_hits, turn_ok, settings, speaker, question, windows, rules, abort)
    reading = (*question.described(), *date_notes, *relatives_read(terms, searched))
    return LaneResults(hits, vector_off, terms, reading, matched=matched)


# -- turn rows -------------------------------------------------------------------------------------
def fused_turns(
    turn_hits: TurnHits,
    turn_ok: np.ndarray,
    settings: RecallConfig,
    speaker: str | None,
    question: Question,
    windows: Sequence[DayWindow],
    rules: np.ndarray | None = None,
    abort: Callable[[], None] = _no_abort,
) -> tuple[Hit, ...]:
    """The `fused` lane: the TURN rows, the best `turns_budget` turns of all turn lanes and signals
    (`turn_hits.candidates`); `windows`: the days the question names, as the history settles them
    (`day_windows`); `rules`: the user's rules (`rule_turns`), None when not read.

    Each hit's `via` says what put it there (lane ranks and lifts, for `explain`); its passage is the one
    a lane found it at (the vector lane's passage first, then the fact's sentence, then the words).
    """
    votes, scores = {}, {}
    for lane, found in turn_hits.candidates.items():
        kept = found.scores > 0 if lane in VECTOR_TURN_LANES else slice(None)  # cosine <= 0: not found
        votes[lane] = found.turns[kept]
        if lane in SCORED_LANES:
            scores[lane] = found.scores[kept]
    snapshot = turn_hits.snapshot
    ranked = rank_turns(
        votes,
        snapshot.turn_facts,
        turn_ok,
        settings.ranking,
        settings.turns_budget,
        speaker if settings.speaker_boost else None,
        windows if settings.date_boost else (),
        question.side if settings.role_boost else None,
        question.gathers,
        question.sweeps,
        question.summarises,
        rules,
        scores,
    )
    hits = []
    for count, item in enumerate(ranked):
        if count % _ABORT_EVERY == 0:
            abort()  # a budget an operator raised can make this loop long
        found_by = tuple(turn_hits.at(lane, rank) for lane, rank in item.lanes)
        passage = _shown_passage(found_by)
        if passage is None:
            passage = turn_hits.matched.turn(item.turn)
        hit = Hit("fused", item.rank, item.score, item.turn, passage, found_by=found_by, lifts=item.lifts)
        hits.append(hit)
    return tuple(hits)


#: Whose passage a fused turn shows when several lanes found it: the vector's, the fact's, the words'.
PASSAGE_LANES = ("turns", "fact_turns", "text", "feedback", "instructions", "rules")
_PASSAGE_ORDER = {lane: place for place, lane in enumerate(PASSAGE_LANES)}


def _shown_passage(found_by: Sequence[Hit]) -> int | None:
    """The passage of the hit of the first lane in `PASSAGE_LANES` that found the turn (None: none did)."""
    listed = [hit for hit in found_by if hit.lane in _PASSAGE_ORDER]
    return min(listed, key=lambda hit: _PASSAGE_ORDER[hit.lane]).passage if listed else None


def _turn_hit(
    snapshot: UserSnapshot, lane: str, rank: int, candidate: Candidate, matched: MatchedPassages
) -> Hit:
    """The hit for a chosen turn, with the passage it was found at (worked out only for chosen turns)."""
    if candidate.fact is not None:
        passages = snapshot.turns.passages(candidate.turn)
        fact = snapshot.facts[candidate.fact]
        return Hit(
            lane,
            rank,
            candidate.score,
            candidate.turn,
            sentence_passage(passages, fact.text),
            via=f"fact {fact.identity}",
            fact=candidate.fact,
        )
    passage = candidate.passage if candidate.passage is not None else matched.turn(candidate.turn)
    return Hit(lane, rank, candidate.score, candidate.turn, passage)


# -- filters -------------------------------------------------------------------------------------
def turn_mask(snapshot: UserSnapshot, settings: RecallConfig) -> np.ndarray:
    """Turns that pass `since`/`until` (a turn without a time never does) and `exclude_sessions`."""
    return snapshot.turn_filter.mask(settings.since, settings.until, settings.exclude_sessions)


def fact_mask(snapshot: UserSnapshot, settings: RecallConfig) -> np.ndarray:
    """Facts in the window (by `valid_at`, else their source turn's time) and not from an excluded session."""
    return snapshot.fact_filter.mask(settings.since, settings.until, settings.exclude_sessions)


# -- vector search -------------------------------------------------------------------------------
def top_items(
    vectors: VectorSet,
    query: np.ndarray,
    allowed: np.ndarray | None,
    k: int,
    min_score: float | None,
    scores: np.ndarray | None = None,
) -> list[tuple[int, float, int]]:
    """`top_rows` as (item, score, passage) tuples, best first (lanes that make a hit of each)."""
    items, best, passages = top_rows(vectors, query, allowed, k, min_score, scores)
    return list(zip(items.tolist(), best.tolist(), passages.tolist(), strict=True))


def top_rows(
    vectors: VectorSet,
    query: np.ndarray,
    allowed: np.ndarray | None,
    k: int,
    min_score: float | None,
    scores: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `k` items with the best passage cosine, best first, as arrays: items, scores, passages.
    `scores`: every row's cosine with `query` when the caller has it already (two lanes rank the facts;
    not changed)."""
    if k <= 0 or len(vectors) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
    scores = vectors.matrix @ query if scores is None else scores
    rows = best_rows(vectors, query, allowed, k, min_score, scores)
    return vectors.owner[rows], scores[rows], vectors.passage[rows]


def best_rows(
    vectors: VectorSet,
    query: np.ndarray,
    allowed: np.ndarray | None,
    k: int,
    min_score: float | None,
    scores: np.ndarray | None = None,
) -> np.ndarray:
    """The best row of each of the `k` items with the best passage cosine, best item first. `scores`:
    as `top_rows`.

    Exact: every row of the user's vectors is scored. Ties go to the lower item index, and within an
    item to its first passage reaching the best score. Only the best rows are sorted: the first `k`
    distinct items among rows in score order are the `k` best items, so rows are taken from the top
    (every row at or above a threshold, ties included) until they hold `k` items or run out.
    """
    if k <= 0 or len(vectors) == 0:
        return np.zeros(0, dtype=np.int64)
    scores = vectors.matrix @ query if scores is None else scores
    if allowed is not None and not allowed.all():
        scores = np.where(allowed[vectors.owner], scores, -np.inf)
    if min_score is not None:
        scores = np.where(scores >= min_score, scores, -np.inf)
    live = int(np.count_nonzero(scores > -np.inf))
    take = k
    while True:
        if take >= live:
            rows = np.flatnonzero(scores > -np.inf)
        else:
            threshold = scores[np.argpartition(-scores, take - 1)[:take]].min()
            rows = np.flatnonzero(scores >= threshold)
        order = rows[np.lexsort((vectors.owner[rows], -scores[rows]))]  # stable: rows ascending
        owners = vectors.owner[order]
        first = first_positions(owners)
        if len(first) >= k or take >= live:
            break
        take *= 4
    return order[first][:k]  # each item's best row, best item first


# -- lanes -----------------------------------------------------------------------------------------
def memories_lane(
    snapshot: UserSnapshot,
    query: np.ndarray | None,
    terms: Sequence[str],
    settings: RecallConfig,
    matched: MatchedPassages,
) -> tuple[Hit, ...]:
    """The user's saved notes: nearest by vector over passages, then (to fill the width) by words, a
    word the notes never hold by its relatives they do, as the text lane searches (`searched_terms`).

    Notes are few and deliberate, so they also come by words when vectors are off.
    """
    k = settings.memories_k
    found = [] if query is None else top_items(snapshot.note_vectors, query, None, k, settings.min_score)
    seen = {item for item, _, _ in found}
    if len(found) < k and terms:
        index = snapshot.note_text_index
        idx, scores = index.search(searched_terms(index, terms, settings.text_inflections), k)
        for item, score in zip(idx, scores, strict=True):
            item = int(item)
            if item not in seen and len(found) < k:
                seen.add(item)
                found.append((item, float(score), matched.note(item)))
    return tuple(
        Hit("memories", rank, score, item, passage) for rank, (item, score, passage) in enumerate(found, 1)
    )


def turn_candidates(
    snapshot: UserSnapshot,
    query: np.ndarray,
    turn_ok: np.ndarray,
    depth: int,
    min_score: float | None,
    feedback: int = 0,
    instructions: int = 0,
    rule_count: int = 0,
    *,
    standing: np.ndarray | None = None,
    rules: np.ndarray | None = None,
    prose_vectors: bool = True,
) -> dict[str, Candidates]:
    """The `turns` lane: the user's message passages nearest the question (exact cosine), best turn
    first; with `feedback` > 0 also its feedback pass, `feedback`: the turns nearest the question
    moved towards the lane's best `feedback` passages (`feedback_query`). `min_score` bounds the
    question's own cosine in both.

    With `instructions` > 0 (a request on the user's side, `question.Question.requests`) also its
    instructions pass: the user's `instructions` `standing` statements (`standing_turns`) nearest the
    question. Why: an instruction or a preference stated once ("always include a code example when I
    ask about async errors") governs later requests that name the task, not the rule; among hundreds
    of messages about the same task the rule ranks low, among the user's few standing statements it
    ranks first, and that rank is its vote.

    With `rule_count` > 0 also its rules pass, for any question: the user's `rule_count` `rules`, the
    standing statements that name the questions they govern (`rule_turns`: "always include the random
    seed when I ask about reproducibility"), nearest the question. Why: such a rule answers every later
    question on its topic, whether or not the question reads as a request, and among the user's few
    rules it ranks first where among all standing statements ("I prefer ...", "I always ...") it may
    not.

    With `prose_vectors` (on) a turn holding fenced code is scored by its prose vector where it has one
    (`turn_cosines`); off, by its passages like any turn.

    Why the feedback pass: a question that gathers occasions ("how many kitchen items did I fix?")
    names the kind of thing, not the things; the occasions found first say what the others look like
    ("I replaced the faucet", "the toaster broke") far better than the question does, and the rest sit
    in other conversations in the same words. A single-fact question gains nothing: moved towards its
    best hit, the pass finds that hit's neighbours, which the ranking lifts already.
    """
    vectors = snapshot.turn_vectors
    if len(vectors) == 0:
        return {"turns": Candidates.of((), ())}
    prose = snapshot.prose_vectors if prose_vectors else None
    cosines = turn_cosines(snapshot, query, prose)
    rows = best_rows(vectors, query, turn_ok, depth, min_score, cosines)
    found = {"turns": Candidates.of(vectors.owner[rows], cosines[rows], vectors.passage[rows])}
    if feedback > 0 and len(rows):
        moved = feedback_query(query, scored_vectors(snapshot, rows[:feedback], prose))
        scores = turn_cosines(snapshot, moved, prose)
        if min_score is not None:
            scores = np.where(cosines >= min_score, scores, -np.inf)
        rows = best_rows(vectors, moved, turn_ok, depth, None, scores)
        found["feedback"] = Candidates.of(vectors.owner[rows], scores[rows], vectors.passage[rows])
    if instructions > 0 and standing is not None:
        rows = best_rows(vectors, query, standing, instructions, min_score, cosines)
        found["instructions"] = Candidates.of(vectors.owner[rows], cosines[rows], vectors.passage[rows])
    if rule_count > 0 and rules is not None:
        rows = best_rows(vectors, query, rules, rule_count, min_score, cosines)
        found["rules"] = Candidates.of(vectors.owner[rows], cosines[rows], vectors.passage[rows])
    return found


def turn_cosines(snapshot: UserSnapshot, query: np.ndarray, prose: VectorSet | None) -> np.ndarray:
    """Per row of the user's passage vectors, its cosine with `query`; on every row of a turn that holds
    fenced code and has a prose vector in `prose` (the snapshot's, or None), that vector's cosine instead.

    Why: a question asks what was said, and in a coding chat a message is mostly the code pasted into
    it, which its passage vectors then mostly encode; on BEAM's coding chats the prose vector put the
    lane's whole evidence in its 24 best turns for 44.9% of the lookups against 38.3% (docs/benchmarks).
    Each row keeps its passage, so the piece shown is still chosen among the message's passages.
    """
    vectors = snapshot.turn_vectors
    cosines = vectors.matrix @ query
    if prose is None or not len(prose):
        return cosines
    by_turn = np.full(len(snapshot.turns), np.nan, dtype=cosines.dtype)
    by_turn[prose.owner] = prose.matrix @ query
    instead = by_turn[vectors.owner]
    return np.where(np.isnan(instead), cosines, instead)


def scored_vectors(snapshot: UserSnapshot, rows: np.ndarray, prose: VectorSet | None) -> np.ndarray:
    """The vectors `turn_cosines` scores `rows` (of the passage vectors) by: a turn's prose vector in
    `prose` in place of its passages' where it has one."""
    vectors = snapshot.turn_vectors
    chosen = vectors.matrix[rows]
    if prose is not None and len(prose):
        at = positions(prose.owner, vectors.owner[rows], ascending=True)  # one prose row a turn, ascending
        chosen[at >= 0] = prose.matrix[at[at >= 0]]
    return chosen


def standing_turns(snapshot: UserSnapshot, turn_ok: np.ndarray) -> np.ndarray:
    """A mask of the user's own turns that hold a `STANDING_WORDS` word and `turn_ok` admits: read from
    the text index's postings, so it costs those turns, not the history."""
    roles, standing = snapshot.turn_facts.roles, np.zeros(len(turn_ok), dtype=bool)
    for turn in snapshot.text_index.documents(STANDING_WORDS).tolist():
        standing[turn] = roles[turn] == USER_TURNS and turn_ok[turn]
    return standing


def rule_turns(snapshot: UserSnapshot, standing: np.ndarray) -> np.ndarray:
    """A mask of the `standing` turns (`standing_turns`) that name the questions they govern
    (`standing.names_its_questions`): only the standing turns holding an asking word are read, so it costs
    those few texts, not the history."""
    rules = np.zeros(len(standing), dtype=bool)
    asking = snapshot.text_index.documents(ASKING_WORDS)
    for turn in asking[standing[asking]].tolist():
        rules[turn] = names_its_questions(snapshot.turns[turn].text)
    return rules


def feedback_query(query: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The unit vector of `query` + FEEDBACK_WEIGHT x the mean of the `found` rows (Rocchio's
    pseudo-relevance feedback, without negative examples)."""
    moved = query + FEEDBACK_WEIGHT * found.mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm if norm > 0 else query).astype(np.float32, copy=False)


def searched_terms(index: BM25Index, terms: Sequence[str], inflections: bool) -> tuple[tuple[str, ...], ...]:
    """The words BM25 searches each of `terms` by in `index` (the messages' or the notes'): with
    `inflections`, a word the index never holds by the relatives it does (`BM25Index.family`: the
    question's "camped" finds the message's "camping"), else the word alone."""
    return tuple(index.family(term) if inflections else (term,) for term in terms)


def relatives_read(terms: Sequence[str], searched: Sequence[tuple[str, ...]]) -> list[str]:
    """For explain: each word searched by its relatives (`searched_terms`), and by which."""
    return [
        f'"{term}" searched as {", ".join(words)} (never written)'
        for term, words in zip(terms, searched, strict=True)
        if words != (term,)
    ]


def text_candidates(
    snapshot: UserSnapshot, terms: Sequence[tuple[str, ...]], turn_ok: np.ndarray, depth: int
) -> Candidates:
    """The `text` lane: BM25 over the user's own messages; finds exact words (names, numbers) vectors blur.
    Each of `terms` is scored as one term that any of its words spells (`searched_terms`)."""
    if depth <= 0 or not terms or not turn_ok.any():
        return Candidates.of((), ())
    return Candidates.of(*snapshot.text_index.search(list(terms), depth, allowed=turn_ok))


def facet_candidates(
    snapshot: UserSnapshot,
    facets: Sequence[Sequence[str]],
    turn_ok: np.ndarray,
    per_facet: int,
    inflections: bool,
) -> Candidates:
    """The facets pass of the text lane: for a question that lists several things
    (`question.Question.facets`), the `per_facet` best messages by BM25 of each item's own words, taken
    in turn (every item's best, then every item's second), each turn once.

    Why: "given my JWT expiry handling, the Socket.io verification and the clock skew fix, how should
    I ..." names three messages; the whole question's words and vector find the one its clauses share
    most, and the others rank behind that message's neighbours. Each item searched alone ranks its own
    message first, and that rank is its vote. By words, not vectors: the caller may give only the
    question's vector, and an item is mostly a name."""
    index, found = snapshot.text_index, []
    for facet in facets:
        terms = searched_terms(index, query_terms(facet, index), inflections)
        turns, scores = index.search(terms, per_facet, allowed=turn_ok) if terms else ((), ())
        found.append(list(zip(turns, scores, strict=True)))
    chosen: dict[int, float] = {}
    for depth in range(per_facet):
        for hits in found:
            if depth < len(hits):
                chosen.setdefault(int(hits[depth][0]), float(hits[depth][1]))
    return Candidates.of(list(chosen), list(chosen.values()))


def entities_lane(snapshot: UserSnapshot, query: np.ndarray, settings: RecallConfig) -> tuple[Hit, ...]:
    """Entities nearest the question: a person, place or thing asked about leads to its facts."""
    found = top_items(snapshot.entity_vectors, query, None, settings.entities_k, settings.min_score)
    return tuple(Hit("entities", rank, score, item) for rank, (item, score, _) in enumerate(found, 1))


def fact_cosines(snapshot: UserSnapshot, query: np.ndarray) -> np.ndarray | None:
    """Each fact vector row's cosine with the question: both fact lanes rank by it, computed once."""
    vectors = snapshot.fact_vectors
    return vectors.matrix @ query if len(vectors) else None


@dataclass(frozen=True)
class RankedFacts:
    """Facts best first, as arrays: the facts lane ranks `fusion_depth` of them (hundreds) for
    `fact_turns`, and only its first `facts_k` become hits."""

    items: np.ndarray  # int64 indexes into the snapshot's facts
    scores: np.ndarray  # float64 cosines

    @classmethod
    def of(cls, items: Sequence[int], scores: Sequence[float]) -> "RankedFacts":
        return cls(np.asarray(items, dtype=np.int64), np.asarray(scores, dtype=np.float64))

    def __len__(self) -> int:
        return len(self.items)

    def hits(self, lane: str, k: int) -> tuple[Hit, ...]:
        found = zip(self.items[:k].tolist(), self.scores[:k].tolist(), strict=True)
        return tuple(Hit(lane, rank, score, item) for rank, (item, score) in enumerate(found, 1))


def facts_lane(
    snapshot: UserSnapshot,
    query: np.ndarray,
    fact_scores: np.ndarray | None,
    fact_ok: np.ndarray,
    k: int,
    settings: RecallConfig,
) -> RankedFacts:
    """The `k` facts nearest the question (`fact_scores`: `fact_cosines`): an extracted sentence states
    plainly what a turn implies."""
    items, scores, _ = top_rows(snapshot.fact_vectors, query, fact_ok, k, settings.min_score, fact_scores)
    return RankedFacts.of(items, scores)


def entity_facts(
    snapshot: UserSnapshot, entity_hits: Sequence[Hit], fact_ok: np.ndarray, per_entity: int
) -> tuple[Hit, ...]:
    """Each entity hit's most confident facts (the user's own, inside the filters)."""
    found: list[Hit] = []
    seen: set[int] = set()
    for hit in entity_hits:
        entity = snapshot.entities[hit.index]
        # the first `per_entity` only: an entity named in thousands of facts is not scanned to the end
        chosen = list(islice((f for f in entity.facts if fact_ok[f] and f not in seen), per_entity))
        for f in chosen:
            seen.add(f)
            via = f'entity "{entity.text}"'
            found.append(_confidence_hit(snapshot, "entity_facts", len(found) + 1, f, via))
    return tuple(found)


def _confidence_hit(snapshot: UserSnapshot, lane: str, rank: int, fact: int, via: str) -> Hit:
    """A fact reached through a path rather than by similarity: scored by its stored confidence."""
    confidence = snapshot.facts[fact].confidence
    return Hit(lane, rank, confidence if confidence is not None else 0.0, fact, via=via)


def user_facts_lane(
    snapshot: UserSnapshot,
    query: np.ndarray,
    fact_scores: np.ndarray | None,
    fact_ok: np.ndarray,
    settings: RecallConfig,
    embed_types: Callable[[Sequence[str]], np.ndarray],
) -> tuple[Hit, ...]:
    """Facts of the relation types nearest the question, across all sessions.

    Counting questions ("how many weddings did I attend") need every fact of one kind, which neither
    nearest-fact search nor words find reliably; the relation type is what groups them.
    """
    if settings.user_fact_types <= 0 or settings.user_facts_k <= 0:
        return ()
    names, codes = snapshot.fact_types
    present = np.flatnonzero(np.bincount(codes[fact_ok]))  # ascending: types rank in name order on a tie
    if not len(present):
        return ()
    texts = [relation_text(names[c], snapshot.relation_descriptions.get(names[c])) for c in present.tolist()]
    type_scores = np.asarray(embed_types(texts), dtype=np.float32) @ query
    order = np.lexsort((np.arange(len(present)), -type_scores))[: settings.user_fact_types]
    allowed = fact_ok & np.isin(codes, present[order])
    return tuple(
        Hit("user_facts", rank, score, item, via=f"type {snapshot.facts[item].type}")
        for rank, (item, score, _) in enumerate(
            top_items(
                snapshot.fact_vectors, query, allowed, settings.user_facts_k, settings.min_score, fact_scores
            ),
            1,
        )
    )


def relation_text(rel_type: str, description: str | None) -> str:
    """`"<type words>: <description>"`, the text a relation type is compared to the question by."""
    words = rel_type.replace("_", " ").lower()
    return f"{words}: {description}" if description else words


def turn_facts(
    snapshot: UserSnapshot, text_hits: Sequence[Hit], fact_ok: np.ndarray, k: int
) -> tuple[Hit, ...]:
    """Degraded mode: the facts read from the turns the text lane found, most confident first."""
    by_source: dict[str, list[int]] = {}
    for i, fact in enumerate(snapshot.facts):
        if fact_ok[i]:
            by_source.setdefault(fact.source_id, []).append(i)
    found: list[Hit] = []
    for hit in text_hits:
        turn = snapshot.turns[hit.index]
        facts = sorted(
            by_source.get(turn.action_id, ()), key=lambda i: (-(snapshot.facts[i].confidence or 0.0), i)
        )
        for f in facts:
            if len(found) >= k:
                return tuple(found)
            found.append(_confidence_hit(snapshot, "turn_facts", len(found) + 1, f, f"turn {turn.action_id}"))
    return tuple(found)


def fact_order(hits: Sequence[Hit]) -> tuple:
    """Where a fact found by `hits` (one fact's, from the fact lanes) stands among the facts: those found
    by similarity (`SIMILARITY_FACT_LANES`) by it, nearest the question first whichever lane found them,
    then those reached through an entity or a turn by their lane (`DERIVED_ORDER`) and rank. The order
    the facts vote for their turns in (`fact_turn_candidates`) and a budget takes FACT rows in
    (`rows.fact_places`)."""
    similar = [h for h in hits if h.lane in SIMILARITY_FACT_LANES]
    if similar:
        best = max(similar, key=lambda h: (h.score, -h.rank))
        return (0, -best.score, best.rank, DERIVED_ORDER[best.lane], best.index)
    first = min(hits, key=lambda h: (DERIVED_ORDER.get(h.lane, len(DERIVED_ORDER)), h.rank))
    return (1, DERIVED_ORDER.get(first.lane, len(DERIVED_ORDER)), first.rank, first.index)


def fact_turn_candidates(
    snapshot: UserSnapshot, pool: RankedFacts, fact_hits: Sequence[Hit], turn_ok: np.ndarray
) -> Candidates:
    """The turns the facts were read from, each once, at its best fact (`pool`: the facts lane's
    ranking; `fact_hits`: the other fact lanes' hits).

    Facts found by similarity (the facts and user_facts lanes) are ranked together by it, so a turn
    whose fact is nearest the question comes first whichever lane found it; facts reached by entity or
    by turn (scored by confidence) follow in their lanes' order. A fact the facts lane ranked although
    it is no nearer the question than orthogonal (cosine <= 0) was not found: its turn is no candidate
    (user_facts keeps every fact of the types it chose: the type is what it matched).
    """
    similar = [h for h in fact_hits if h.lane in SIMILARITY_FACT_LANES]
    items = np.concatenate([pool.items, np.asarray([h.index for h in similar], dtype=np.int64)])
    scores = np.concatenate([pool.scores, np.asarray([h.score for h in similar], dtype=np.float64)])
    ranks = np.r_[np.arange(1, len(pool) + 1), np.asarray([h.rank for h in similar], dtype=np.int64)]
    orders = np.asarray([DERIVED_ORDER[h.lane] for h in similar], dtype=np.int64)
    lanes = np.r_[np.zeros(len(pool), dtype=np.int64), orders]
    order = np.lexsort((lanes, ranks, -scores))  # stable: a full tie keeps the lanes' own order
    order = order[(lanes[order] != DERIVED_ORDER["facts"]) | (scores[order] > 0)]
    rest = sorted(
        (h for h in fact_hits if h.lane not in SIMILARITY_FACT_LANES), key=lambda h: fact_order((h,))
    )
    ordered = zip(
        [*items[order].tolist(), *(h.index for h in rest)],
        [*scores[order].tolist(), *(h.score for h in rest)],
        strict=True,
    )
    turns, turn_scores, facts = [], [], []
    seen: set[int] = set()
    for fact, score in ordered:
        turn = snapshot.fact_turn(snapshot.facts[fact])
        if turn is None or turn in seen or not turn_ok[turn]:
            continue
        seen.add(turn)
        turns.append(turn)
        turn_scores.append(score)
        facts.append(fact)
    return Candidates.of(turns, turn_scores, facts=facts)


#: The fact lanes that score by similarity to the question (the others by stored confidence).
SIMILARITY_FACT_LANES = ("facts", "user_facts")


DERIVED_ORDER = {"facts": 0, "user_facts": 1, "entity_facts": 2, "turn_facts": 3}


def sentence_passage(passages: Sequence[str], sentence: str) -> int:
    """The passage holding a fact's sentence (verbatim, else sharing most of its words)."""
    if len(passages) == 1:
        return 0
    for i, passage in enumerate(passages):
        if sentence and sentence in passage:
            return i
    return overlap_best(passages, tokenize(sentence))
