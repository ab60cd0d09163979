"""The six recall lanes, plus the facts and turns they lead to, over one `UserMemory`.

Every lane runs over the user's own data only (the snapshot holds nothing else), with exact cosine
over L2-normalised float32 rows (numpy) or BM25 over the user's own messages. Ties are broken by the
item's position in the snapshot (turns are in time order), so the same question gives the same rows.
"""

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .config import RecallConfig
from .memory import UserMemory
from .textindex import overlap_best, query_terms, tokenize
from .vector_rows import VectorSet

#: Derived steps: the facts an entity hit brings, the facts of text-lane turns (degraded mode only),
#: and the source turns of all facts found.
DERIVED = ("entity_facts", "turn_facts", "fact_turns")
KIND = {
    "memories": "memory",
    "turns": "turn",
    "text": "turn",
    "fact_turns": "turn",
    "entities": "entity",
    "facts": "fact",
    "user_facts": "fact",
    "entity_facts": "fact",
    "turn_facts": "fact",
}
VECTOR_LANES = ("turns", "entities", "facts", "user_facts")


@dataclass(frozen=True)
class Hit:
    """One item a lane found: `index` points into the snapshot list of the lane's kind."""

    lane: str
    rank: int  # 1-based, within the lane
    score: float
    index: int
    passage: int | None = None  # the passage that matched (turns and memories)
    via: str | None = None  # how a derived hit was reached, for `explain`

    @property
    def kind(self) -> str:
        return KIND[self.lane]


@dataclass(frozen=True)
class LaneResults:
    hits: dict[str, tuple[Hit, ...]]  # lane -> hits in rank order (lanes that ran only)
    vector_off: str | None  # why the vector lanes did not run, or None
    terms: tuple[str, ...]  # the question's search terms

    def of(self, lane: str) -> tuple[Hit, ...]:
        return self.hits.get(lane, ())


@dataclass(frozen=True)
class Candidate:
    """A turn a turn lane (text, turns, fact_turns) may show: its score in that lane, and the passage
    (or the fact, whose sentence picks the passage) it was found at."""

    turn: int
    score: float
    passage: int | None = None
    fact: int | None = None


#: A turn lane picks its `k` rows from its own best `CANDIDATES_PER_ROW * k` turns.
CANDIDATES_PER_ROW = 2
#: How many of each turn lane's best turns vote in the fusion (reciprocal-rank fusion).
FUSION_DEPTH = 100
#: The RRF constant: small, so a turn near the top of one lane outweighs one far down in several.
RRF_K = 5
#: The order the turn lanes fill their widths (each with turns no earlier lane took): exact words,
#: then the facts' source turns, then the turn vectors (the weakest alone on conversational text).
TURN_LANE_ORDER = ("text", "fact_turns", "turns")


def run_lanes(
    memory: UserMemory,
    question: str,
    query: np.ndarray | None,
    settings: RecallConfig,
    embed_types: Callable[[Sequence[str]], np.ndarray],
    vector_off: str | None,
) -> LaneResults:
    """All lanes `settings.lanes` names; vector lanes only when `vector_off` is None and `query` given."""
    terms = tuple(query_terms(question, memory.text_index))
    turn_ok = turn_mask(memory, settings)
    fact_ok = fact_mask(memory, settings)
    vectors_on = vector_off is None and query is not None
    wanted = set(settings.lanes)
    hits: dict[str, tuple[Hit, ...]] = {}
    candidates: dict[str, list[Candidate]] = {}
    if "memories" in wanted:
        hits["memories"] = memories_lane(memory, query if vectors_on else None, terms, settings)
    if "text" in wanted:
        candidates["text"] = text_candidates(memory, terms, turn_ok, settings.text_k)
    if vectors_on:
        if "turns" in wanted:
            candidates["turns"] = turn_candidates(
                memory, query, turn_ok, settings.turns_k, settings.min_score
            )
        if "entities" in wanted:
            hits["entities"] = _vector_hits(
                "entities", memory.entity_vectors, query, None, settings.entities_k, settings.min_score
            )
            hits["entity_facts"] = entity_facts(memory, hits["entities"], fact_ok, settings.edges_per_entity)
        if "facts" in wanted:
            hits["facts"] = _vector_hits(
                "facts", memory.fact_vectors, query, fact_ok, settings.facts_k, settings.min_score
            )
        if "user_facts" in wanted:
            hits["user_facts"] = user_facts_lane(memory, query, fact_ok, settings, embed_types)
    elif "text" in wanted:
        text_hits = [Hit("text", rank, c.score, c.turn) for rank, c in enumerate(candidates["text"], 1)]
        hits["turn_facts"] = turn_facts(memory, text_hits[: settings.text_k], fact_ok, settings.facts_k)
    fact_hits = [
        h for lane in ("entity_facts", "facts", "user_facts", "turn_facts") for h in hits.get(lane, ())
    ]
    if fact_hits:
        candidates["fact_turns"] = fact_turn_candidates(memory, fact_hits, turn_ok)
    widths = {"text": settings.text_k, "fact_turns": settings.fact_turns_k, "turns": settings.turns_k}
    hits.update(choose_turns(memory, candidates, widths, terms))
    return LaneResults(hits, vector_off, terms)


# -- turn rows -------------------------------------------------------------------------------------
def choose_turns(
    memory: UserMemory,
    candidates: dict[str, list[Candidate]],
    widths: dict[str, int],
    terms: Sequence[str],
) -> dict[str, tuple[Hit, ...]]:
    """Each turn lane's hits: `k` turns no earlier lane took, from the lane's own best
    `CANDIDATES_PER_ROW * k`, those the lanes together rank highest first.

    Why: the lanes often find the same turn (by its words, its vector and through a fact), so each
    lane's top `k` taken apart shows fewer distinct turns than the widths allow; and a turn that
    several lanes rank fairly high is more often the one asked about than one lane's `k`-th best.
    Together is reciprocal-rank fusion over each lane's best `FUSION_DEPTH` turns. A turn an earlier
    lane took is still listed for this lane (so `explain` and `recall.lanes` show the agreement) but
    does not count toward its width.
    """
    fused: dict[int, float] = defaultdict(float)
    for found in candidates.values():
        for rank, candidate in enumerate(found[:FUSION_DEPTH], 1):
            fused[candidate.turn] += 1.0 / (RRF_K + rank)
    taken: set[int] = set()
    chosen: dict[str, tuple[Hit, ...]] = {}
    for lane in TURN_LANE_ORDER:
        if lane not in candidates:
            continue
        k = widths[lane]
        pool = sorted(
            enumerate(candidates[lane][: CANDIDATES_PER_ROW * k]), key=lambda pc: (-fused[pc[1].turn], pc[0])
        )
        hits: list[Hit] = []
        added = 0
        for _, candidate in pool:
            if added >= k:
                break
            if candidate.turn not in taken:
                taken.add(candidate.turn)
                added += 1
            hits.append(_turn_hit(memory, lane, len(hits) + 1, candidate, terms))
        chosen[lane] = tuple(hits)
    return chosen


def _turn_hit(memory: UserMemory, lane: str, rank: int, candidate: Candidate, terms: Sequence[str]) -> Hit:
    """The hit for a chosen turn, with the passage it was found at (worked out only for chosen turns)."""
    passages = memory.turns[candidate.turn].passages
    if candidate.fact is not None:
        fact = memory.facts[candidate.fact]
        return Hit(
            lane,
            rank,
            candidate.score,
            candidate.turn,
            sentence_passage(passages, fact.text),
            via=f"fact {fact.identity}",
        )
    passage = candidate.passage if candidate.passage is not None else overlap_best(passages, terms)
    return Hit(lane, rank, candidate.score, candidate.turn, passage)


def _depth(k: int) -> int:
    """How many of a turn lane's best turns to rank: its candidates, and at least the fusion's depth."""
    return max(CANDIDATES_PER_ROW * k, FUSION_DEPTH)


# -- filters -------------------------------------------------------------------------------------
def turn_mask(memory: UserMemory, settings: RecallConfig) -> np.ndarray:
    """Turns that pass `since`/`until` (a turn without a time never does) and `exclude_sessions`."""
    return memory.turn_filter.mask(settings.since, settings.until, settings.exclude_sessions)


def fact_mask(memory: UserMemory, settings: RecallConfig) -> np.ndarray:
    """Facts in the window (by `valid_at`, else their source turn's time) and not from an excluded session."""
    return memory.fact_filter.mask(settings.since, settings.until, settings.exclude_sessions)


# -- vector search -------------------------------------------------------------------------------
def top_items(
    vectors: VectorSet, query: np.ndarray, allowed: np.ndarray | None, k: int, min_score: float | None
) -> list[tuple[int, float, int]]:
    """The `k` items with the best passage cosine: (item, score, passage), best first.

    Exact: every row of the user's vectors is scored. Ties go to the lower item index, and within an
    item to its first passage reaching the best score.
    """
    if k <= 0 or len(vectors) == 0:
        return []
    scores = vectors.matrix @ query
    rows = np.ones(len(scores), dtype=bool) if allowed is None else allowed[vectors.owner]
    if min_score is not None:
        rows &= scores >= min_score
    if not rows.any():
        return []
    masked = np.where(rows, scores, -np.inf)
    groups = vectors.groups
    if groups is None:  # rows not grouped by item: sort them (slower, same result)
        order = np.lexsort((np.arange(len(masked)), -masked, vectors.owner))
        order = order[rows[order]]
        first = order[np.r_[True, vectors.owner[order][1:] != vectors.owner[order][:-1]]]
        items, best, best_rows = vectors.owner[first], masked[first], first
    else:
        all_items, starts = groups
        best_all = np.maximum.reduceat(masked, starts)
        ok = np.flatnonzero(best_all > -np.inf)
        items, best, best_rows = all_items[ok], best_all[ok], None
        ends = np.r_[starts[1:], len(masked)]
    chosen = np.arange(len(items))
    if len(items) > k:
        # argpartition may cut inside a tie: keep every item scoring at least the k-th best
        kth = best[np.argpartition(-best, k - 1)[:k]].min()
        chosen = np.flatnonzero(best >= kth)
    chosen = chosen[np.lexsort((items[chosen], -best[chosen]))][:k]
    found = []
    for i in chosen.tolist():
        if best_rows is not None:
            row = int(best_rows[i])
        else:
            start, end = int(starts[ok[i]]), int(ends[ok[i]])
            row = start + int(np.argmax(masked[start:end]))
        found.append((int(items[i]), float(best[i]), int(vectors.passage[row])))
    return found


def _vector_hits(
    lane: str,
    vectors: VectorSet,
    query: np.ndarray,
    allowed: np.ndarray | None,
    k: int,
    min_score: float | None,
) -> tuple[Hit, ...]:
    with_passage = lane in ("turns", "memories")
    return tuple(
        Hit(lane, rank, score, item, passage if with_passage else None)
        for rank, (item, score, passage) in enumerate(top_items(vectors, query, allowed, k, min_score), 1)
    )


# -- lanes -----------------------------------------------------------------------------------------
def memories_lane(
    memory: UserMemory, query: np.ndarray | None, terms: Sequence[str], settings: RecallConfig
) -> tuple[Hit, ...]:
    """The user's saved notes: nearest by vector over passages, then (to fill the width) by words.

    Notes are few and deliberate, so they also come by words when vectors are off.
    """
    k = settings.memories_k
    found = [] if query is None else top_items(memory.memory_vectors, query, None, k, settings.min_score)
    seen = {item for item, _, _ in found}
    if len(found) < k and terms:
        idx, scores = memory.memory_text_index.search(list(terms), k)
        for item, score in zip(idx, scores, strict=True):
            item = int(item)
            if item not in seen and len(found) < k:
                seen.add(item)
                found.append((item, float(score), overlap_best(memory.memories[item].passages, terms)))
    return tuple(
        Hit("memories", rank, score, item, passage) for rank, (item, score, passage) in enumerate(found, 1)
    )


def turn_candidates(
    memory: UserMemory, query: np.ndarray, turn_ok: np.ndarray, k: int, min_score: float | None
) -> list[Candidate]:
    """The user's message passages nearest the question (exact cosine), best turn first."""
    if k <= 0:
        return []
    found = top_items(memory.turn_vectors, query, turn_ok, _depth(k), min_score)
    return [Candidate(item, score, passage) for item, score, passage in found]


def text_candidates(memory: UserMemory, terms: Sequence[str], turn_ok: np.ndarray, k: int) -> list[Candidate]:
    """BM25 over the user's own messages: finds exact words (names, numbers) vectors blur."""
    if k <= 0 or not terms or not turn_ok.any():
        return []
    idx, scores = memory.text_index.search(list(terms), _depth(k), allowed=turn_ok)
    return [Candidate(int(i), float(score)) for i, score in zip(idx, scores, strict=True)]


def entity_facts(
    memory: UserMemory, entity_hits: Sequence[Hit], fact_ok: np.ndarray, per_entity: int
) -> tuple[Hit, ...]:
    """Each entity hit's most confident facts (the user's own, inside the filters)."""
    found: list[Hit] = []
    seen: set[int] = set()
    for hit in entity_hits:
        entity = memory.entities[hit.index]
        chosen = [f for f in entity.facts if fact_ok[f] and f not in seen][:per_entity]
        for f in chosen:
            seen.add(f)
            via = f'entity "{entity.text}"'
            found.append(_confidence_hit(memory, "entity_facts", len(found) + 1, f, via))
    return tuple(found)


def _confidence_hit(memory: UserMemory, lane: str, rank: int, fact: int, via: str) -> Hit:
    """A fact reached through a path rather than by similarity: scored by its stored confidence."""
    confidence = memory.facts[fact].confidence
    return Hit(lane, rank, confidence if confidence is not None else 0.0, fact, via=via)


def user_facts_lane(
    memory: UserMemory,
    query: np.ndarray,
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
    names, codes = memory.fact_types
    present = np.unique(codes[fact_ok])  # sorted, so types are ranked in name order on a tie
    if not len(present):
        return ()
    texts = [relation_text(names[c], memory.relation_descriptions.get(names[c])) for c in present.tolist()]
    type_scores = np.asarray(embed_types(texts), dtype=np.float32) @ query
    order = np.lexsort((np.arange(len(present)), -type_scores))[: settings.user_fact_types]
    allowed = fact_ok & np.isin(codes, present[order])
    return tuple(
        Hit("user_facts", rank, score, item, via=f"type {memory.facts[item].type}")
        for rank, (item, score, _) in enumerate(
            top_items(memory.fact_vectors, query, allowed, settings.user_facts_k, settings.min_score), 1
        )
    )


def relation_text(rel_type: str, description: str | None) -> str:
    """`"<type words>: <description>"`, the text a relation type is compared to the question by."""
    words = rel_type.replace("_", " ").lower()
    return f"{words}: {description}" if description else words


def turn_facts(memory: UserMemory, text_hits: Sequence[Hit], fact_ok: np.ndarray, k: int) -> tuple[Hit, ...]:
    """Degraded mode: the facts read from the turns the text lane found, most confident first."""
    by_source: dict[str, list[int]] = {}
    for i, fact in enumerate(memory.facts):
        if fact_ok[i]:
            by_source.setdefault(fact.source_id, []).append(i)
    found: list[Hit] = []
    for hit in text_hits:
        turn = memory.turns[hit.index]
        facts = sorted(
            by_source.get(turn.action_id, ()), key=lambda i: (-(memory.facts[i].confidence or 0.0), i)
        )
        for f in facts:
            if len(found) >= k:
                return tuple(found)
            found.append(_confidence_hit(memory, "turn_facts", len(found) + 1, f, f"turn {turn.action_id}"))
    return tuple(found)


def fact_turn_candidates(
    memory: UserMemory, fact_hits: Sequence[Hit], turn_ok: np.ndarray
) -> list[Candidate]:
    """The turns the facts were read from, each once, at its best fact.

    Facts found by similarity (the facts and user_facts lanes) are ranked together by it, so a turn
    whose fact is nearest the question comes first whichever lane found it; facts reached by entity or
    by turn (scored by confidence) follow in their lanes' order.
    """
    found: list[Candidate] = []
    seen: set[int] = set()
    for hit in sorted(fact_hits, key=_fact_hit_order):
        turn = memory.fact_turn(memory.facts[hit.index])
        if turn is None or turn in seen or not turn_ok[turn]:
            continue
        seen.add(turn)
        found.append(Candidate(turn, hit.score, fact=hit.index))
    return found


def _fact_hit_order(hit: Hit) -> tuple:
    if hit.lane in ("facts", "user_facts"):
        return (0, -hit.score, hit.rank, DERIVED_ORDER[hit.lane])
    return (1, DERIVED_ORDER.get(hit.lane, 9), hit.rank)


DERIVED_ORDER = {"facts": 0, "user_facts": 1, "entity_facts": 2, "turn_facts": 3}


def sentence_passage(passages: Sequence[str], sentence: str) -> int:
    """The passage holding a fact's sentence (verbatim, else sharing most of its words)."""
    for i, passage in enumerate(passages):
        if sentence and sentence in passage:
            return i
    return overlap_best(passages, tokenize(sentence))
