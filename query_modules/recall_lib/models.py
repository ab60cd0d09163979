"""Embedding models the operator configured, loaded lazily, once per process, under a lock.

The caller never picks a path: only the names in `RECALL_MODELS` and the default model may be used, so
no Bolt client can make the database load arbitrary files. A model that fails to load is remembered
with its reason (recall then runs degraded) instead of failing every call.

`sentence_transformers` and `torch` are imported inside functions only: a failing heavy import must
never stop the query module from loading.
"""

import json
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .environment import env_number

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_BGE_ENGLISH = re.compile(r"(^|/)bge-[^/]*-en(-|$)", re.IGNORECASE)
_LABEL_MEMO_SIZE = 4096


def default_query_instruction(model_name: str) -> str:
    """bge English models expect this prefix on questions (never on what is searched)."""
    return BGE_QUERY_INSTRUCTION if _BGE_ENGLISH.search(model_name) else ""


@dataclass(frozen=True)
class ModelSettings:
    """The operator's model configuration, read from the environment once."""

    folders: Mapping[str, str]
    default_model: str
    torch_threads: int
    problem: str | None = None  # a configuration error every load reports

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([self.default_model, *self.folders]))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ModelSettings":
        env = os.environ if env is None else env
        default = env.get("RECALL_DEFAULT_MODEL", "").strip() or DEFAULT_MODEL
        problems = []
        folders: dict[str, str] = {}
        raw = env.get("RECALL_MODELS", "").strip()
        if raw:
            try:
                parsed = json.loads(raw)
            except ValueError as exc:
                parsed = None
                problems.append(f"RECALL_MODELS is not valid JSON ({exc})")
            if parsed is not None:
                if isinstance(parsed, dict) and all(
                    isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()
                ):
                    folders = dict(parsed)
                else:
                    problems.append("RECALL_MODELS must be a JSON object of model name -> folder")
        threads = env_number(env, "RECALL_TORCH_THREADS", int, 1, 1, problems)
        return cls(folders, default, threads, "; ".join(problems) or None)


@dataclass(frozen=True)
class ModelState:
    """What is known about one configured model: its dimension once loaded, or why it failed."""

    name: str
    loaded: bool
    dimension: int | None = None
    failure: str | None = None


class ModelRegistry:
    """Configured models, each loaded at most once (double-checked locking), with embed helpers.

    One instance lives in `recall.py` (module state); this package holds none.
    """

    def __init__(self, settings: ModelSettings | None = None) -> None:
        self.settings = settings or ModelSettings.from_env()
        self._lock = threading.Lock()
        self._models: dict[str, object] = {}
        self._dims: dict[str, int] = {}
        self._failures: dict[str, str] = {}
        self._label_memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    @property
    def names(self) -> tuple[str, ...]:
        return self.settings.names

    @property
    def default_model(self) -> str:
        return self.settings.default_model

    def check_name(self, name: str | None) -> str:
        """The model to use for a call: `name` if configured, the default when None."""
        if name is None:
            return self.default_model
        if name not in self.names:
            raise ValueError(
                f"embedding_model: {name!r} is not a configured model; configured: "
                + ", ".join(repr(n) for n in self.names)
            )
        return name

    def state(self, name: str) -> ModelState:
        """Load `name` if needed and say whether it is usable (never raises for a load failure)."""
        model = self._get(self.check_name(name))
        if model is None:
            return ModelState(name, False, failure=self._failures.get(name, "not loaded"))
        return ModelState(name, True, dimension=self._dims[name])

    def embed_queries(self, texts: Sequence[str], name: str, instruction: str | None = None) -> np.ndarray:
        """Question vectors: the model's query instruction (or `instruction`) is prepended."""
        prefix = default_query_instruction(name) if instruction is None else instruction
        return self._encode([prefix + t for t in texts], name, batch_size=32)

    def embed_documents(self, texts: Sequence[str], name: str, batch_size: int = 32) -> np.ndarray:
        """Vectors of stored units (passages, entities, facts): never with an instruction."""
        return self._encode(list(texts), name, batch_size=batch_size)

    def embed_labels(self, texts: Sequence[str], name: str) -> np.ndarray:
        """Document vectors of short, recurring texts (relation types), memoised per model."""
        missing = [t for t in dict.fromkeys(texts) if (name, t) not in self._label_memo]
        if missing:
            vectors = self.embed_documents(missing, name)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._label_memo[(name, text)] = vector
                while len(self._label_memo) > _LABEL_MEMO_SIZE:
                    self._label_memo.popitem(last=False)
        with self._lock:
            rows = [self._label_memo.get((name, t)) for t in texts]
        if any(r is None for r in rows):  # evicted by a concurrent caller meanwhile: recompute
            return self.embed_documents(list(texts), name)
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    # -- internals ---------------------------------------------------------------------------
    def _encode(self, texts: list[str], name: str, batch_size: int) -> np.ndarray:
        model = self._get(self.check_name(name))
        if model is None:
            raise RuntimeError(f"embedding model {name!r} is not available: {self._failures.get(name)}")
        if not texts:
            return np.zeros((0, self._dims[name]), dtype=np.float32)
        if len(texts) == 1 and _is_torch_module(model):
            vectors = _encode_one(model, texts[0])
        else:
            vectors = model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        vectors = np.asarray(vectors, dtype=np.float32)
        if not np.isfinite(vectors).all():
            raise RuntimeError(f"embedding model {name!r} produced non-finite vectors")
        return vectors

    def _get(self, name: str) -> object | None:
        model = self._models.get(name)
        if model is not None or name in self._failures:
            return model
        with self._lock:
            if name not in self._models and name not in self._failures:
                try:
                    model = self._load(name)
                    self._dims[name] = _dimension(model)
                    self._models[name] = model
                except Exception as exc:  # noqa: BLE001 - any load failure means degraded mode
                    self._failures[name] = f"{type(exc).__name__}: {exc}"
            return self._models.get(name)

    def _load(self, name: str) -> object:
        if self.settings.problem:
            raise RuntimeError(self.settings.problem)
        import torch
        from sentence_transformers import SentenceTransformer

        # Process-wide: inside Memgraph this sets the intra-op threads of the whole database process.
        torch.set_num_threads(self.settings.torch_threads)
        folder = self.settings.folders.get(name)
        if folder is not None:
            if not os.path.isdir(folder):
                raise FileNotFoundError(f"model folder {folder!r} for {name!r} does not exist")
            model = SentenceTransformer(folder, device="cpu")
        else:
            model = SentenceTransformer(name, device="cpu", local_files_only=True)
        return model.eval()  # as `encode` sets it on each call: `_encode_one` runs the model as it is


def _is_torch_module(model: object) -> bool:
    """Whether `model` is a torch module (a SentenceTransformer is one); torch is imported only once a
    model was loaded, so this never imports it."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def _encode_one(model: object, text: str) -> np.ndarray:
    """One text's unit vector through the model's own modules: what `encode` computes for a batch of one
    (its tokenisation, forward pass and L2 normalisation; the same bits), without `encode`'s per-call
    set-up, which checks the device of every parameter (about 1 ms of a 9 ms question on one core; a
    question is embedded on every call)."""
    import torch

    with torch.inference_mode():
        prepare = getattr(model, "preprocess", None) or model.tokenize  # `tokenize` before v5
        vector = model(prepare([text]))["sentence_embedding"]
        return torch.nn.functional.normalize(vector, p=2, dim=1).numpy()


def _dimension(model: object) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = getter()
    if not isinstance(dim, int) or dim <= 0:
        raise RuntimeError("the model does not report its embedding dimension")
    return dim
