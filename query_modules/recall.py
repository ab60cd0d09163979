"""recall: what does this user's own past say about a question? Memgraph query-module procedures.

Thin `@mgp` glue over the `recall_lib` helper package (MAGE's pattern): argument checks, the module's
state (the model registry, the per-user cache, the server's ceilings: one each per process) and
records of plain Python values. Everything else is `recall_lib`: `pipeline` runs a call, `cache` keeps
users fresh, `ownership` decides what is whose. Top-level imports are stdlib, mgp and recall_lib only:
a failing import here would silently remove every `recall.*` procedure.
"""

from typing import Any

import mgp
from recall_lib.cache import RecallCache
from recall_lib.callshape import user_ref
from recall_lib.config import parse_config
from recall_lib.embedding import compute_vectors, encodable, plan_embedding, units_of, write_vectors
from recall_lib.limits import Ceilings
from recall_lib.models import ModelRegistry
from recall_lib.ownership import id_text
from recall_lib.pipeline import lane_rows, recall, render_recall
from recall_lib.schema import USER_ID
from recall_lib.session_markers import mark_complete_sessions, sessions_of
from recall_lib.status import status_rows
from recall_lib.timeparse import parse_date_arg

VERSION = "0.1.0"
MODELS = ModelRegistry()
CACHE = RecallCache()
LIMITS = Ceilings.from_env()


class _LiveGraph:
    """The calling transaction's graph as `recall_lib` uses it (the package never imports mgp)."""

    __slots__ = ("_graph", "abort")

    def __init__(self, ctx: mgp.ProcCtx) -> None:
        self._graph = ctx.graph
        self.abort = ctx.check_must_abort

    def vertex(self, vertex_id: int) -> Any:
        try:
            return self._graph.get_vertex_by_id(vertex_id)
        except IndexError:  # mgp's "Unable to find vertex"
            return None

    @property
    def vertices(self) -> Any:
        return self._graph.vertices


def _question(question: Any) -> str:
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    if len(question) > LIMITS.question_chars:
        raise ValueError(
            f"question is {len(question)} characters, above this server's ceiling of "
            f"{LIMITS.question_chars} (RECALL_MAX_QUESTION_CHARS)"
        )
    if not encodable(question):
        raise ValueError("question must be valid Unicode text; it holds a lone surrogate")
    return question


@mgp.read_proc
def render(
    ctx: mgp.ProcCtx,
    user: mgp.Any,
    question: str,
    today: mgp.Nullable[mgp.Any] = None,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(text=str, recalled=mgp.Map):
    """The rows an LLM answers from: a header with reading rules, then MEMORY/FACT/TURN lines.

    `user`: a user_id, a :User node, or the fast call shape's map (`recall_lib.callshape`).
    CALL recall.render("maya", "When is my trip to Lisbon?", date("2024-05-20")) YIELD text RETURN text
    """
    ref = user_ref(user, LIMITS.holders)
    question = _question(question)
    cfg = parse_config(config, "render", LIMITS)
    day = parse_date_arg(today, "today")
    text, recalled = render_recall(_LiveGraph(ctx), CACHE, MODELS, ref, question, cfg, day)
    return mgp.Record(text=text, recalled=recalled)


def _edge(ctx: mgp.ProcCtx, head_id: int, edge_id: int) -> Any:
    for edge in ctx.graph.get_vertex_by_id(head_id).out_edges:
        if edge.id == edge_id:
            return edge
    raise LookupError(f"relationship {edge_id} vanished during the call")


@mgp.read_proc
def lanes(
    ctx: mgp.ProcCtx,
    user: mgp.Any,
    question: str,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(
    lane=str,
    rank=int,
    score=float,
    node=mgp.Nullable[mgp.Vertex],
    relationship=mgp.Nullable[mgp.Edge],
    key=str,
    turn=mgp.Nullable[str],
    passage=mgp.Nullable[int],
    text=str,
):
    """Every lane's hits, ranked, before merging: graph objects included so Cypher can go on from them.

    CALL recall.lanes("maya", "Who am I travelling with?", {lanes: ["facts"]})
    YIELD lane, rank, relationship RETURN lane, rank, type(relationship)
    """
    ref = user_ref(user, LIMITS.holders)
    question = _question(question)
    cfg = parse_config(config, "lanes", LIMITS)
    found = recall(_LiveGraph(ctx), CACHE, MODELS, ref, question, cfg)
    return [
        mgp.Record(
            lane=row.lane,
            rank=row.rank,
            score=row.score,
            node=ctx.graph.get_vertex_by_id(row.vertex_id) if row.vertex_id is not None else None,
            relationship=_edge(ctx, *row.fact_edge) if row.fact_edge is not None else None,
            key=row.key,
            turn=row.turn,
            passage=row.passage,
            text=row.text,
        )
        for row in lane_rows(found)
    ]


@mgp.write_proc
def embed(
    ctx: mgp.ProcCtx,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(
    messages=int, entities=int, edges=int, memories=int, prose=int, remaining=int, model=str
):
    """Catch-up: embed up to `limit` units without a current vector from the model; callers loop.
    With `user`, only that user's data is read (found through the database's directory); without it,
    every vertex of the graph is read, on every call.

    CALL recall.embed({user: "maya", limit: 500}) YIELD messages, remaining RETURN messages, remaining
    """
    cfg = parse_config(config, "embed", LIMITS)
    model = MODELS.check_name(cfg.embedding_model)
    state = MODELS.state(model)
    if not state.loaded:
        raise RuntimeError(f"embedding_model {model!r} could not load: {state.failure}")
    live = _LiveGraph(ctx)
    units = units_of(live, CACHE, cfg.user)
    plan = plan_embedding(units.units, model, state.dimension, cfg.limit)
    vectors = compute_vectors(
        plan.todo,
        lambda texts: MODELS.embed_documents(texts, model, cfg.batch_size),
        cfg.batch_size,
        ctx.check_must_abort,
        model,
        state.dimension,
    )
    counts = write_vectors(plan.todo, vectors, model)  # cached users pick the vectors up (`pickup`)
    # Upstream's markers: on the sessions this call touched, and on all in scope once nothing remains.
    touched = units.sessions if plan.remaining == 0 else sessions_of(u.target for u in plan.todo).values()
    mark_complete_sessions(touched, model)
    return mgp.Record(**counts, remaining=plan.remaining, model=model)


@mgp.read_proc
def status(
    ctx: mgp.ProcCtx,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(
    section=str, name=str, model=mgp.Nullable[str], count=mgp.Nullable[int], detail=mgp.Nullable[str]
):
    """The doctor: version, ceilings, models, cache and this database's directory, units with/without
    vectors, malformed data and ownership skips by reason. With `user`, only that user's data is read;
    without it, the whole graph (every user's units and skips).

    CALL recall.status({user: "maya"}) YIELD section, name, count WHERE section = "ownership" RETURN *
    """
    cfg = parse_config(config, "status", LIMITS)
    live = _LiveGraph(ctx)
    rows = status_rows(VERSION, MODELS, LIMITS, CACHE, live, cfg)
    return [mgp.Record(**row) for row in rows]


@mgp.read_proc
def invalidate(
    ctx: mgp.ProcCtx,
    user: mgp.Nullable[mgp.Any] = None,
) -> mgp.Record(dropped=int):
    """Drop what is cached for this database: one user's entries (a user_id, a :User node or the fast
    call shape's map) or, with null (or a map without users), every entry and the directory. Module
    state only, never the graph; reads nothing but the database's RecallMeta.

    CALL recall.invalidate("maya") YIELD dropped RETURN dropped
    """
    ref = None if user is None else user_ref(user, LIMITS.holders, "a user_id string, a :User node or null")
    database = CACHE.database(_LiveGraph(ctx), None if ref is None else ref.metas)
    if ref is None or ref.absent:
        return mgp.Record(dropped=CACHE.invalidate(database))
    if ref.user_id is not None:
        return mgp.Record(dropped=CACHE.invalidate(database, user_id=ref.user_id))
    user_id = id_text(ref.vertex.properties.get(USER_ID))
    return mgp.Record(dropped=CACHE.invalidate(database, user_id, ref.vertex.id))
