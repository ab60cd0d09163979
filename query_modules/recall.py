"""recall: what does this user's own past say about a question? Memgraph query-module procedures.

Thin `@mgp` glue over the `recall_lib` helper package: argument checks, the model registry (module
state, one per process), reading one user's data into a `UserMemory`, and turning results into
records of plain Python values. Top-level imports are stdlib, mgp and recall_lib only (numpy is
used inside recall_lib): a failing import here would silently remove every `recall.*` procedure.

Recall reads a user through the per-user cache (`CACHE`, module state like `MODELS`): a snapshot kept
fresh by a cheap structure check on every call, and every row verified against the live graph before
it is returned (see `recall_lib.cache`). `recall.embed` and `recall.status` read the graph directly.
"""

from collections import Counter
from typing import Any

import mgp
from recall_lib.cache import RecallCache, cache_rows
from recall_lib.config import LANES, RecallConfig, parse_config
from recall_lib.embedding import (
    Units,
    all_units,
    compute_vectors,
    encodable,
    owned_units,
    plan_embedding,
    write_vectors,
)
from recall_lib.lanes import DERIVED, LaneResults, run_lanes
from recall_lib.limits import Ceilings
from recall_lib.memory import UserMemory
from recall_lib.models import ModelRegistry, ModelState
from recall_lib.ownership import GraphIndex, collect_owned, id_text, labels_of
from recall_lib.render import RenderContext
from recall_lib.render import render as render_rows
from recall_lib.rows import merge_rows
from recall_lib.status import limit_rows, model_rows, status_row, unit_rows
from recall_lib.timeparse import parse_date_arg
from recall_lib.vector_rows import unit_query
from recall_lib.verify import verify_results, without_items

VERSION = "0.1.0"
MODELS = ModelRegistry()
CACHE = RecallCache()
LIMITS = Ceilings.from_env()
_VECTOR_LANES = frozenset(LANES) - {"text"}


# -- data access ------------------------------------------------------------------------------------
class _LiveGraph:
    """The calling transaction's graph as `recall_lib.cache` uses it (the package never imports mgp)."""

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


def graph_index(ctx: mgp.ProcCtx) -> GraphIndex:
    """User and Action vertex ids by key: one full vertex scan (uncached: embed and status)."""
    return GraphIndex.scan(ctx.graph.vertices, ctx.check_must_abort)


def _user_node(user: Any, expected: str = "a user_id string or a :User node") -> Any:
    """`user` when it is a :User node; None for a string; an error naming `user` otherwise."""
    if isinstance(user, mgp.Vertex):
        if "User" not in labels_of(user):
            found = ", ".join(sorted(labels_of(user))) or "no label"
            raise ValueError(f"user must be {expected}, got a node with {found}")
        return user
    if not isinstance(user, str) or not user:
        raise ValueError(f"user must be {expected}, got {user!r}")
    return None


def find_user(live: _LiveGraph, user: Any) -> Any:
    """The User vertex `user` names (a user_id string or a :User node); None for an unknown user_id."""
    node = _user_node(user)
    return node if node is not None else CACHE.find_user(live, user)


# -- shared steps ----------------------------------------------------------------------------------
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


def _query_vector(question: str, cfg: RecallConfig, model: str, dim: int) -> Any:
    if cfg.query_vector is not None:
        if len(cfg.query_vector) != dim:
            raise ValueError(
                f"config['query_vector'] must have {dim} numbers (the dimension of {model!r}), "
                f"got {len(cfg.query_vector)}"
            )
        return unit_query(cfg.query_vector)
    return unit_query(MODELS.embed_queries([question], model, cfg.query_instruction)[0])


def _run_lanes(
    memory: UserMemory,
    question: str,
    cfg: RecallConfig,
    model: str,
    state: ModelState,
    queries: dict[str, Any],
    today: Any,
) -> LaneResults:
    """The lanes over one memory; `queries` keeps the question vector for a second attempt."""
    vector_off = None
    if not state.loaded:
        vector_off = f"embedding model {model} could not load: {state.failure}"
    elif memory.has_units and not memory.has_vectors:
        vector_off = f"this user has no vectors from {model} yet; run recall.embed"
    query = None
    if vector_off is None and memory.has_vectors and _VECTOR_LANES & set(cfg.lanes):
        if "query" not in queries:
            queries["query"] = _query_vector(question, cfg, model, state.dimension)
        query = queries["query"]
    return run_lanes(
        memory, question, query, cfg, lambda texts: MODELS.embed_labels(texts, model), vector_off, today
    )


def _recall(
    ctx: mgp.ProcCtx, user: Any, question: str, cfg: RecallConfig, today: Any = None
) -> tuple[UserMemory, LaneResults, str]:
    """Run the lanes for one user and question over the cached snapshot, every hit verified against
    the live graph: (memory, lane results, model name). A hit that fails drops the snapshot, and the
    lanes run again on a fresh build; should that fail too, the failing hits are removed."""
    model = MODELS.check_name(cfg.embedding_model)
    live = _LiveGraph(ctx)
    vertex = find_user(live, user)
    state = MODELS.state(model)
    if cfg.query_vector is not None and state.loaded and len(cfg.query_vector) != state.dimension:
        _query_vector(question, cfg, model, state.dimension)  # raises the dimension error
    queries: dict[str, Any] = {}
    if vertex is None:
        memory = UserMemory.empty(-1, user if isinstance(user, str) else None, model, state.dimension)
        return memory, _run_lanes(memory, question, cfg, model, state, queries, today), model
    key, snapshot = CACHE.snapshot(live, vertex, model, state.dimension)
    results = _run_lanes(snapshot.memory, question, cfg, model, state, queries, today)
    failing = verify_results(results, snapshot, vertex, live.vertex, CACHE.graph_index(live))
    if failing:
        CACHE.discard(key, snapshot)
        key, snapshot = CACHE.snapshot(live, vertex, model, state.dimension)
        results = _run_lanes(snapshot.memory, question, cfg, model, state, queries, today)
        failing = verify_results(results, snapshot, vertex, live.vertex, CACHE.graph_index(live))
        if failing:
            results = without_items(results, failing)
    return snapshot.memory, results, model


# -- procedures ------------------------------------------------------------------------------------
@mgp.read_proc
def render(
    ctx: mgp.ProcCtx,
    user: mgp.Any,
    question: str,
    today: mgp.Nullable[mgp.Any] = None,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(text=str, recalled=mgp.Map):
    """The rows an LLM answers from: a header with reading rules, then MEMORY/FACT/TURN lines."""
    question = _question(question)
    cfg = parse_config(config, "render", LIMITS)
    day = parse_date_arg(today, "today")
    memory, results, model = _recall(ctx, user, question, cfg, day)
    rows = merge_rows(memory, results)
    context = RenderContext(
        question=question,
        today=day,
        vector_off=results.vector_off,
        model=model,
        messages=len(memory.turns),
        messages_without_vectors=memory.turns_without_vectors,
        turn_chars=cfg.turn_chars,
        explain=cfg.explain,
        max_chars=cfg.max_chars,
    )
    text, recalled = render_rows(memory, rows, context)
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
    """Every lane's hits, ranked, before merging: graph objects included so Cypher can go on from them."""
    question = _question(question)
    cfg = parse_config(config, "lanes", LIMITS)
    memory, results, _ = _recall(ctx, user, question, cfg)
    records = []
    for lane in (*LANES, *DERIVED):
        for hit in results.of(lane):
            node = relationship = turn = passage = None
            if hit.kind == "turn":
                item = memory.turns[hit.index]
                node, key, turn, passage = (
                    ctx.graph.get_vertex_by_id(item.vertex_id),
                    item.action_id,
                    item.action_id,
                    hit.passage,
                )
                text = item.passages[hit.passage] if hit.passage is not None else item.text
            elif hit.kind == "memory":
                item = memory.memories[hit.index]
                node, key, passage = ctx.graph.get_vertex_by_id(item.vertex_id), item.memory_id, hit.passage
                text = item.passages[hit.passage] if hit.passage is not None else item.content
            elif hit.kind == "entity":
                item = memory.entities[hit.index]
                node, key, text = ctx.graph.get_vertex_by_id(item.vertex_id), item.text, item.text
            else:
                item = memory.facts[hit.index]
                relationship, key, turn, text = (
                    _edge(ctx, item.head_vertex_id, item.edge_id),
                    item.identity,
                    item.source_id,
                    item.text,
                )
            records.append(
                mgp.Record(
                    lane=lane,
                    rank=hit.rank,
                    score=float(hit.score),
                    node=node,
                    relationship=relationship,
                    key=key,
                    turn=turn,
                    passage=passage,
                    text=text,
                )
            )
    return records


@mgp.write_proc
def embed(
    ctx: mgp.ProcCtx,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(messages=int, entities=int, edges=int, memories=int, remaining=int, model=str):
    """Catch-up: embed up to `limit` units without a current vector from the model; callers loop."""
    cfg = parse_config(config, "embed", LIMITS)
    model = MODELS.check_name(cfg.embedding_model)
    state = MODELS.state(model)
    if not state.loaded:
        raise RuntimeError(f"embedding_model {model!r} could not load: {state.failure}")
    units = _units(ctx, cfg.user)
    plan = plan_embedding(units.units, model, state.dimension, cfg.limit)
    vectors = compute_vectors(
        plan.todo,
        lambda texts: MODELS.embed_documents(texts, model, cfg.batch_size),
        cfg.batch_size,
        ctx.check_must_abort,
        model,
        state.dimension,
    )
    counts = write_vectors(plan.todo, vectors, model)
    if any(counts.values()):  # cached snapshots hold the old vectors (or none): read them again
        CACHE.invalidate(user_id=cfg.user, keep_index=True)
    return mgp.Record(
        messages=counts["messages"],
        entities=counts["entities"],
        edges=counts["edges"],
        memories=counts["memories"],
        remaining=plan.remaining,
        model=model,
    )


def _units(ctx: mgp.ProcCtx, user: str | None) -> Units:
    if user is None:
        return all_units(ctx.graph.vertices, ctx.check_must_abort)
    index = graph_index(ctx)
    holders = index.users.get(user, ())
    if len(holders) > 1:
        raise ValueError(f"user: {len(holders)} :User nodes have user_id {user!r}; pass the node instead")
    if not holders:
        return Units([], Counter())
    vertex = ctx.graph.get_vertex_by_id(holders[0])
    return owned_units(collect_owned(vertex, index, ctx.check_must_abort))


@mgp.read_proc
def status(
    ctx: mgp.ProcCtx,
    config: mgp.Map = {},  # noqa: B006 - Memgraph rebuilds defaults on every call
) -> mgp.Record(
    section=str, name=str, model=mgp.Nullable[str], count=mgp.Nullable[int], detail=mgp.Nullable[str]
):
    """The doctor: version, configured models (loaded, dimension), units with/without vectors, malformed."""
    cfg = parse_config(config, "status", LIMITS)
    names = [MODELS.check_name(cfg.embedding_model)] if cfg.embedding_model else list(MODELS.names)
    states = [MODELS.state(name) for name in names]
    rows = [
        status_row("module", "version", detail=VERSION),
        status_row("module", "default_model", MODELS.default_model),
    ]
    for problem in (MODELS.settings.problem, LIMITS.problem):
        if problem:
            rows.append(status_row("module", "configuration", detail=problem))
    rows += limit_rows(LIMITS)
    if cfg.user is not None:
        known = bool(graph_index(ctx).users.get(cfg.user))
        rows.append(status_row("module", "user", detail=cfg.user if known else f"{cfg.user} (not found)"))
    rows += model_rows(states, MODELS.default_model)
    rows += cache_rows(CACHE.stats())
    rows += unit_rows(_units(ctx, cfg.user), states)
    return [mgp.Record(**row) for row in rows]


@mgp.read_proc
def invalidate(
    ctx: mgp.ProcCtx,
    user: mgp.Nullable[mgp.Any] = None,
) -> mgp.Record(dropped=int):
    """Drop cached data: one user's (a user_id or a :User node) or, with null, all of it (the index too).

    A read procedure: it changes module state only, never the graph.
    """
    if user is None:
        return mgp.Record(dropped=CACHE.invalidate())
    node = _user_node(user, "a user_id string, a :User node or null")
    if node is None:
        return mgp.Record(dropped=CACHE.invalidate(user_id=user))
    return mgp.Record(
        dropped=CACHE.invalidate(user_id=id_text(node.properties.get("user_id")), vertex_id=node.id)
    )
