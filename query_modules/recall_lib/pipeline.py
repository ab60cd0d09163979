"""One recall call, end to end over plain data: user -> snapshot -> lanes -> verified hits -> rows.

The `@mgp` procedures only check arguments, hold module state (models, cache, limits) and turn what
this returns into records (MAGE's split: logic in the helper package, glue in the module file).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import numpy as np

from .cache import LiveGraph, Place, RecallCache
from .callshape import UserRef
from .config import LANES, RecallConfig
from .kinds import ENTITY, NOTE, TURN
from .lanes import DERIVED, VECTOR_LANES, LaneResults, run_lanes
from .models import ModelRegistry, ModelState
from .question import Question, read_question
from .recheck import ReadBack
from .render import Fit, RenderContext, fit_budget, render, render_fit
from .rows import merge_rows
from .snapshot import UserSnapshot, empty_snapshot
from .vector_rows import unit_query
from .verify import Verifier, hit_items, without_items


@dataclass(frozen=True)
class Recall:
    snapshot: UserSnapshot
    results: LaneResults
    model: str
    question: Question
    facts_off: str | None = None  # why entities and facts were not collected here (`cache.Place`)


@dataclass(frozen=True)
class LaneRow:
    """One `recall.lanes` record as plain data: graph objects by id (the glue fetches them)."""

    lane: str
    rank: int
    score: float
    vertex_id: int | None
    fact_edge: tuple[int, int] | None  # (head vertex id, edge id) of a fact relationship
    key: str
    turn: str | None
    passage: int | None
    text: str


def user_vertex(live: LiveGraph, cache: RecallCache, ref: UserRef) -> tuple[Place, Any]:
    """Where the call runs, and the live User vertex `ref` names (None when there is no such user)."""
    place = cache.place(live, ref.metas, by_user_id=ref.user_id is not None)
    if ref.user_id is not None:
        return place, cache.find_user(place, live, ref.user_id)
    return place, ref.vertex


def question_vector(
    models: ModelRegistry, question: str, cfg: RecallConfig, model: str, dim: int
) -> np.ndarray:
    """The question's unit vector: `query_vector` from the config (checked), else the model's."""
    if cfg.query_vector is not None:
        if len(cfg.query_vector) != dim:
            raise ValueError(
                f"config['query_vector'] must have {dim} numbers (the dimension of {model!r}), "
                f"got {len(cfg.query_vector)}"
            )
        return unit_query(cfg.query_vector)
    return unit_query(models.embed_queries([question], model, cfg.query_instruction)[0])


def _why_vectors_off(snapshot: UserSnapshot, model: str, state: ModelState) -> str | None:
    if not state.loaded:
        return f"embedding model {model} could not load: {state.failure}"
    if snapshot.has_units and not snapshot.has_vectors:
        return f"this user has no vectors from {model} yet; run recall.embed"
    return None


def recall(
    live: LiveGraph,
    cache: RecallCache,
    models: ModelRegistry,
    ref: UserRef,
    question: str,
    cfg: RecallConfig,
    today: date | None = None,
    choose: Callable[[Recall], LaneResults] | None = None,
) -> Recall:
    """The lanes for one user and question over the cached snapshot, every hit verified against the live
    graph (`choose`: picks the hits a render shows, before they are verified; without it every hit is,
    as `recall.lanes` returns them all). A hit that fails means a stale snapshot: the user is built
    afresh and the lanes run again; should a hit fail even then (a write between the two), it is
    dropped. The question is read here, once (`question`)."""
    asked = read_question(question, today)
    model = models.check_name(cfg.embedding_model)
    state = models.state(model)
    if cfg.query_vector is not None and state.loaded:
        question_vector(models, question, cfg, model, state.dimension)  # the dimension error, early
    place, vertex = user_vertex(live, cache, ref)
    query: list[np.ndarray] = []  # the question's vector, computed once, for a second attempt

    def lanes_over(snapshot: UserSnapshot) -> LaneResults:
        vector_off = _why_vectors_off(snapshot, model, state)
        vector = None
        if vector_off is None and snapshot.has_vectors and set(VECTOR_LANES) & set(cfg.lanes):
            if not query:
                query.append(question_vector(models, question, cfg, model, state.dimension))
            vector = query[0]
        embed_types: Callable = lambda texts: models.embed_labels(texts, model)  # noqa: E731
        return run_lanes(snapshot, asked, vector, cfg, embed_types, vector_off, live.abort)

    if vertex is None:
        snapshot = empty_snapshot(-1, ref.user_id, model, state.dimension)
        found = Recall(snapshot, lanes_over(snapshot), model, asked, place.attribute_off)
        return found if choose is None else replace(found, results=choose(found))
    read_back = ReadBack()  # what the rolling check read in this transaction: not read again
    for fresh in (False, True):
        entry = cache.entry(place, live, vertex, model, state.dimension, fresh, ref.signature, read_back)
        results = lanes_over(entry.snapshot)
        if choose is not None:
            results = choose(Recall(entry.snapshot, results, model, asked, place.attribute_off))
        verifier = Verifier(
            entry.snapshot, entry.actions, entry.numeric, entry.attribute, vertex, live.vertex, read_back
        )
        items = hit_items(results, choose is not None, cfg.explain)
        failing = verifier.failing(items, live.abort)
        if not failing:
            break
    results = without_items(results, failing) if failing else results
    return Recall(entry.snapshot, results, model, asked, place.attribute_off)


def lane_rows(found: Recall) -> list[LaneRow]:
    """Every lane's hits, ranked, as plain rows (`recall.lanes`)."""
    snapshot, rows = found.snapshot, []
    for lane in (*LANES, *DERIVED):
        for hit in found.results.of(lane):
            vertex_id = fact_edge = turn = passage = None
            if hit.kind == TURN:
                item = snapshot.turns[hit.index]
                vertex_id, key, turn, passage = item.vertex_id, item.action_id, item.action_id, hit.passage
                text = item.passages[hit.passage] if hit.passage is not None else item.text
            elif hit.kind == NOTE:
                note = snapshot.notes[hit.index]
                vertex_id, key, passage = note.vertex_id, note.memory_id, hit.passage
                text = note.passages[hit.passage] if hit.passage is not None else note.content
            elif hit.kind == ENTITY:
                entity = snapshot.entities[hit.index]
                vertex_id, key, text = entity.vertex_id, entity.text, entity.text
            else:
                fact = snapshot.facts[hit.index]
                fact_edge, key, turn, text = (
                    (fact.head_vertex_id, fact.edge_id),
                    fact.identity,
                    fact.source_id,
                    fact.text,
                )
            rows.append(
                LaneRow(lane, hit.rank, float(hit.score), vertex_id, fact_edge, key, turn, passage, text)
            )
    return rows


def render_recall(
    live: LiveGraph,
    cache: RecallCache,
    models: ModelRegistry,
    ref: UserRef,
    question: str,
    cfg: RecallConfig,
    today: date | None = None,
) -> tuple[str, dict[str, Any]]:
    """`recall.render`: the rows that fit the budget are chosen first, then only they are verified (so a
    budget that shows 40 of 100 ranked turns reads 40 back), then rendered."""

    chosen: list[tuple[LaneResults, Fit]] = []

    def choose(found: Recall) -> LaneResults:
        rows = merge_rows(found.snapshot, found.results)
        fit = fit_budget(found.snapshot, rows, render_context(found, cfg), live.abort)
        items = fit.items()
        shown = found.results.showing(items, len(rows) - len(items))
        chosen.append((shown, fit))
        return shown

    found = recall(live, cache, models, ref, question, cfg, today, choose)
    if chosen and found.results is chosen[-1][0]:  # every row chosen held: the fit is what is shown
        return render_fit(found.snapshot, chosen[-1][1], render_context(found, cfg), found.results.left_out)
    rows = merge_rows(found.snapshot, found.results)
    return render(found.snapshot, rows, render_context(found, cfg), live.abort)


def render_context(found: Recall, cfg: RecallConfig) -> RenderContext:
    """What the rendered header states besides the rows."""
    snapshot, results = found.snapshot, found.results
    return RenderContext(
        question=found.question.text,
        today=found.question.today,
        vector_off=results.vector_off,
        model=found.model,
        messages=len(snapshot.turns),
        messages_without_vectors=snapshot.turns_without_vectors,
        turn_chars=cfg.turn_chars,
        explain=cfg.explain,
        max_chars=cfg.max_chars,
        facts_off=found.facts_off,
        reading=results.reading,
        left_out=results.left_out,
        overlap=results.matched.overlap if results.matched is not None else None,
        lines=results.lines,
        gather_piece_chars=cfg.gather_piece_chars if found.question.gathers else 0,
        sweep_piece_chars=cfg.sweep_piece_chars if found.question.sweeps else 0,
        deep_piece_chars=cfg.deep_piece_chars,
    )
