"""The embedded LongMemEval graph under `results/cache/`: built through `recall.embed`, and resumable.

Embedding the dev file (~73k passages) takes over an hour on a small machine, so progress must survive an
interruption. Each question (= user) is embedded on its own, `recall.embed({user: ...})` until nothing
remains, and its vectors go at once into a shard `<stem>.partial/<question>.npz` (written atomically).
A later run loads the graph, puts the shards' vectors back and embeds only the questions without one.
Once every question of the file is embedded, the whole graph is exported as the LoCoMo evaluation caches
it (`<stem>.json`, Memgraph's `export_util.json`, and `<stem>.meta.json`) and the shards are removed.
"""

import json
import os
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bench_common import EMBEDDED_KINDS
from tqdm import tqdm

#: Messages per `recall.embed` call: small enough that the progress bar moves, large enough to batch.
EMBED_LIMIT = 128
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class CacheFiles:
    graph: Path  # the finished export
    meta: Path  # embedding figures of the finished export
    partial: Path  # one shard per embedded question while the export is unfinished

    @classmethod
    def of(cls, cache_dir: Path, key: str, dataset: str = "longmemeval") -> "CacheFiles":
        stem = Path(cache_dir) / f"{dataset}-{key}"
        return cls(stem.with_suffix(".json"), stem.with_suffix(".meta.json"), stem.with_suffix(".partial"))

    def shard(self, user_id: str) -> Path:
        return self.partial / f"{_SAFE.sub('_', user_id)}.npz"


@dataclass(frozen=True)
class Prose:
    """The prose vectors of a question's messages holding code (`recall_lib.prose`), as written."""

    action_ids: tuple[str, ...] = ()
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    digests: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shard:
    """One question's vectors as `recall.embed` wrote them, and what it cost."""

    user_id: str
    action_ids: tuple[str, ...]
    counts: np.ndarray  # passages per action
    vectors: np.ndarray  # float32, all passages in action order
    messages: int  # messages embedded (over all runs that worked on this question)
    seconds: float
    prose: Prose = field(default_factory=Prose)  # a shard saved before the prose vectors holds none

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        stats = json.dumps({"user_id": self.user_id, "messages": self.messages, "seconds": self.seconds})
        np.savez(tmp, action_ids=np.array(self.action_ids), counts=self.counts, vectors=self.vectors,
                 stats=np.array(stats), prose_ids=np.array(self.prose.action_ids, dtype=str),
                 prose_vectors=self.prose.vectors, prose_digests=np.array(self.prose.digests, dtype=str))
        os.replace(tmp, path)  # a kill leaves the old shard or the new one, never half of one

    @classmethod
    def load(cls, path: Path) -> "Shard":
        with np.load(path) as data:
            stats = json.loads(str(data["stats"]))
            prose = Prose(tuple(data["prose_ids"].tolist()), data["prose_vectors"],
                          tuple(data["prose_digests"].tolist())) if "prose_ids" in data else Prose()
            return cls(stats["user_id"], tuple(data["action_ids"].tolist()), data["counts"], data["vectors"],
                       int(stats["messages"]), float(stats["seconds"]), prose)

    def rows(self) -> list[np.ndarray]:
        return np.split(self.vectors, np.cumsum(self.counts)[:-1])


class ActionVertices:
    """action_id -> vertex id of the runtime's graph, and the vectors stored on those vertices."""

    def __init__(self, runtime) -> None:
        self.runtime = runtime
        store = runtime.store
        with store.lock.read():
            self.ids = {v.props["action_id"]: v.id for v in store.vertices.values()
                        if "Action" in v.labels and "action_id" in v.props}

    def properties(self, action_id: str) -> dict:
        """The action's properties as plain values (vectors as lists of floats)."""
        return self.runtime.store.node(self.ids[action_id]).properties

    def read(self, user_id: str, action_ids: Sequence[str], model: str, messages: int,
             seconds: float) -> Shard:
        """The vectors of `action_ids` (all from `model`) as a shard."""
        kept, counts, rows, prose = [], [], [], []
        for action_id in action_ids:
            props = self.properties(action_id)
            if props.get("prose_embedding_model") == model and props.get("prose_embedding") is not None:
                prose.append((action_id, props["prose_embedding"], props["prose_digest"]))
            if props.get("embedding_model") != model or props.get("passage_embeddings") is None:
                continue  # a message without text has no vector
            vectors = np.asarray(props["passage_embeddings"], dtype=np.float32)
            kept.append(action_id)
            counts.append(len(vectors))
            rows.append(vectors)
        matrix = np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)
        prose_vectors = np.asarray([v for _, v, _ in prose], dtype=np.float32) if prose else Prose().vectors
        return Shard(user_id, tuple(kept), np.asarray(counts, dtype=np.int32), matrix, messages, seconds,
                     Prose(tuple(a for a, _, _ in prose), prose_vectors, tuple(d for _, _, d in prose)))

    def restore(self, shard: Shard, model: str) -> None:
        """Put a shard's vectors back on its actions (exactly the floats `recall.embed` wrote)."""
        store = self.runtime.store
        for action_id, vectors in zip(shard.action_ids, shard.rows(), strict=True):
            vertex = self.ids[action_id]
            store.set_vertex_property(vertex, "passage_embeddings", vectors.tolist())
            store.set_vertex_property(vertex, "embedding_model", model)
        for action_id, vector, digest in zip(shard.prose.action_ids, shard.prose.vectors, shard.prose.digests,
                                             strict=True):
            vertex = self.ids[action_id]
            store.set_vertex_property(vertex, "prose_embedding", vector.tolist())
            store.set_vertex_property(vertex, "prose_embedding_model", model)
            store.set_vertex_property(vertex, "prose_digest", digest)


def embed_user(runtime, user_id: str, model: str) -> tuple[int, int, float]:
    """`recall.embed` on one user until nothing remains: (messages embedded, units of every kind
    embedded, seconds)."""
    config = {"user": user_id, "embedding_model": model, "limit": EMBED_LIMIT}
    messages, units, start = 0, 0, time.perf_counter()
    while True:
        row = runtime.call("recall.embed", config)[0]
        step = sum(int(row[kind]) for kind in EMBEDDED_KINDS)
        messages, units = messages + int(row["messages"]), units + step
        if int(row["remaining"]) == 0:
            return messages, units, time.perf_counter() - start
        if not step:
            raise RuntimeError(f"recall.embed made no progress on {user_id} ({row['remaining']} remaining)")


def rates(messages: int, passages: int, seconds: float) -> dict:
    seconds = max(seconds, 1e-9)
    return {"messages": messages, "passages": passages, "seconds": round(seconds, 1),
            "messages_per_s": round(messages / seconds, 2), "passages_per_s": round(passages / seconds, 2)}


def save_export(runtime, files: CacheFiles) -> None:
    """The runtime's graph as the finished export, replaced whole (a kill leaves the old one)."""
    tmp = files.graph.with_suffix(".tmp")
    runtime.save_graph(tmp)
    os.replace(tmp, files.graph)


def load_embedded(runtime, data, selected: Sequence, model: str, files: CacheFiles) -> dict:
    """The file's graph in `runtime` with every `selected` question embedded; the embedding's figures.

    From the finished export when there is one; else the loader's graph, the shards put back, and the
    selected questions without a shard embedded (each saved as soon as it is done). When that leaves
    every question of the file embedded, the export is written and the shards removed.
    """
    if files.graph.is_file() and files.meta.is_file():
        runtime.load_graph(files.graph)
        # What an export made before the prose vectors lacks; written back, so that a later load (the
        # timing benchmarks' too) holds what a fresh embed holds.
        if sum([embed_user(runtime, question.user_id, model)[1] for question in selected]):
            save_export(runtime, files)
        return {**json.loads(files.meta.read_text()), "from_cache": True}
    runtime.load_elements(data.elements)
    vertices = ActionVertices(runtime)
    shards = {}
    for question in data.questions:
        path = files.shard(question.user_id)
        if path.is_file():
            shards[question.user_id] = shard = Shard.load(path)
            vertices.restore(shard, model)
    todo = [q for q in selected if q.user_id not in shards]
    total = sum(len(q.turns) for q in selected)
    bar = tqdm(total=total, initial=total - sum(len(q.turns) for q in todo), desc="recall.embed",
               unit="msg", mininterval=5)
    for question in selected:
        messages, units, seconds = embed_user(runtime, question.user_id, model)  # marks the sessions
        if question.user_id in shards and units == 0:
            continue  # resumed whole (a shard saved before the prose vectors is saved again with them)
        before = shards.get(question.user_id)
        shard = vertices.read(question.user_id, [t.action_id for t in question.turns], model,
                              messages + (before.messages if before else 0),
                              seconds + (before.seconds if before else 0.0))
        shard.save(files.shard(question.user_id))
        if before is None:
            bar.update(len(question.turns))
        shards[question.user_id] = shard
        bar.set_postfix_str(f"{messages / max(seconds, 1e-9):.1f} msg/s, {len(shards)}/{len(data.questions)} "
                            "questions")
    bar.close()
    resumed = len(selected) - len(todo)
    done = [shards[q.user_id] for q in selected]
    figures = rates(sum(s.messages for s in done), sum(int(s.counts.sum()) for s in done),
                    sum(s.seconds for s in done))
    if len(shards) == len(data.questions):
        everything = [shards[q.user_id] for q in data.questions]
        meta = {**rates(sum(s.messages for s in everything), sum(int(s.counts.sum()) for s in everything),
                        sum(s.seconds for s in everything)), "questions": len(everything)}
        save_export(runtime, files)
        files.meta.write_text(json.dumps(meta))
        shutil.rmtree(files.partial, ignore_errors=True)
        return {**meta, "from_cache": False, "resumed_questions": resumed}
    return {**figures, "questions": len(selected), "from_cache": False, "resumed_questions": resumed,
            "partial": f"{len(shards)} of {len(data.questions)} questions embedded"}
