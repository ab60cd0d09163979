"""The three dev sets as one kind of thing for `eval_joint.py`: an embedded runtime holding the set's cached
graph (built and embedded by the set's own evaluation, which must have run once), and its scored questions,
each with its evidence, the group it is reported in, and its vector (encoded once here, passed as
`query_vector` so a grid of configs pays no embedding).

- LoCoMo (`eval_locomo.py`'s cache): categories 1-4, the headline; category 5 reported apart;
- LongMemEval S (`eval_longmemeval.py`'s cache): every non-abstention question;
- BEAM 500K (`eval_beam.py`'s cache, the chats asked for): the seven lookup types, the headline;
  event_ordering and summarization ("gathering") apart.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from bench_common import graph_cache_key, model_folder
from longmemeval_cache import CacheFiles, load_embedded


@dataclass(frozen=True)
class JointQuestion:
    key: str
    user_id: str
    question: str
    today: str  # ISO date
    evidence: tuple[str, ...]
    group: str  # "headline" counts towards the set's score; others are reported apart


@dataclass
class DevSet:
    name: str
    runtime: object
    questions: list[JointQuestion]
    vectors: dict[str, list[float]]  # question key -> its unit vector
    inputs: str  # what the set was read from, for the report


def _runtime():
    from memgraph_recall.client import setup_store
    from memgraph_recall.embedded import Runtime
    from memgraph_recall.locate import query_modules_dir

    runtime = Runtime(query_modules_dir())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    return runtime, setup_store


def _vectors(model: str, questions: Sequence[JointQuestion]) -> dict[str, list[float]]:
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
    vectors = encoder.encode([q.question for q in questions], batch_size=64, normalize_embeddings=True,
                             convert_to_numpy=True)
    return {q.key: v.astype(float).tolist() for q, v in zip(questions, vectors, strict=True)}


def locomo(paths: Sequence[Path], model: str, cache: Path) -> DevSet:
    from eval_locomo import cache_key
    from memgraph_recall.datasets.locomo import build_graph

    graph = cache / f"locomo-{cache_key(model, paths)}.json"
    if not graph.is_file():
        raise SystemExit(f"--locomo: no cached graph {graph}; run scripts/eval_locomo.py on these files")
    runtime, setup = _runtime()
    runtime.load_graph(graph)
    setup(runtime.store)
    data = build_graph(paths)
    questions = [JointQuestion(f"{q.user_id}/{q.index}", q.user_id, q.question, q.today.isoformat(),
                               q.evidence, "headline" if q.category < 5 else "category 5")
                 for q in data.questions if q.evidence]
    return DevSet("locomo", runtime, questions, _vectors(model, questions), ", ".join(p.name for p in paths))


def longmemeval(path: Path, model: str, cache: Path) -> DevSet:
    from memgraph_recall.datasets import longmemeval as lme

    data = lme.load(path)
    files = CacheFiles.of(cache, graph_cache_key(model, [path], Path(lme.__file__)))
    if not files.graph.is_file():
        raise SystemExit(f"--longmemeval: no cached graph {files.graph}; run scripts/eval_longmemeval.py")
    runtime, setup = _runtime()
    runtime.load_graph(files.graph)
    setup(runtime.store)
    questions = [JointQuestion(q.question_id, q.user_id, q.question, q.today.isoformat(), tuple(q.evidence),
                               "headline") for q in data.questions if not q.abstention]
    return DevSet("longmemeval", runtime, questions, _vectors(model, questions), path.name)


def beam(folder: Path, chats: Sequence[int], model: str, cache: Path) -> DevSet:
    from memgraph_recall.datasets import beam as beam_data

    data = beam_data.load(folder)
    chosen = {f"beam-{n}" for n in chats}
    selected = [c for c in data.chats if c.user_id in chosen]
    if len(selected) != len(chosen):
        missing = sorted(chosen - {c.user_id for c in selected})
        raise SystemExit(f"--beam-chats: {folder} has no chat {missing[0]}")
    inputs = [f / "chat.json" for f in beam_data.chat_folders(folder)]
    files = CacheFiles.of(cache, graph_cache_key(model, inputs, Path(beam_data.__file__)), dataset="beam")
    runtime, setup = _runtime()
    every_chat = SimpleNamespace(elements=data.elements, questions=data.chats)
    load_embedded(runtime, every_chat, selected, model, files)  # from the shards; embeds what is missing
    setup(runtime.store)
    questions = [JointQuestion(q.key, q.user_id, q.question, q.today.isoformat(), q.evidence,
                               "headline" if q.question_type in beam_data.LOOKUP_TYPES else "gathering")
                 for c in selected for q in c.questions if q.evidence and q.question_type != "abstention"]
    span = f"chats {min(chats)}-{max(chats)}" if list(chats) == list(range(min(chats), max(chats) + 1)) else (
        f"chats {', '.join(map(str, chats))}")
    return DevSet("beam", runtime, questions, _vectors(model, questions), span)
