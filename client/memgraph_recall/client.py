"""`RecallClient`: one API over a Memgraph server (Bolt, `memgraph_recall.bolt`) or the embedded runtime.

The client only calls the `recall.*` procedures, always with query parameters and fixed query text,
so nothing a caller passes can change the Cypher that runs. Both backends return the same typed
results (`Recalled`, `LaneHit`, `EmbedProgress`), raise the same `RecallError` subclasses and bound
every call by the same `timeout` setting (`memgraph_recall.timeouts`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from memgraph_recall.bolt import BoltAddress, BoltBackend
from memgraph_recall.errors import (
    RecallConflictError,
    RecallNotLoaded,
    RecallProcedureError,
    from_server_message,
)
from memgraph_recall.results import EmbedProgress, LaneHit, Recalled, json_ready
from memgraph_recall.retry import Backoff, retrying
from memgraph_recall.timeouts import Timeouts

__all__ = ["Backend", "BoltAddress", "BoltBackend", "EmbeddedBackend", "RecallClient"]

USER_INDEX = "CREATE INDEX ON :User(user_id)"
_ARG_ORDER = {
    "recall.render": ("user", "q", "today", "config"),
    "recall.lanes": ("user", "q", "config"),
    "recall.embed": ("config",),
    "recall.status": ("config",),
    "recall.invalidate": ("user",),
}

Today = date | str | None
PROGRESS_LIMIT = 512
FIRST_PROGRESS_LIMIT = 32


class Backend(Protocol):
    """Where procedures run: `call` takes named arguments in the procedure's order."""

    description: str

    def call(self, procedure: str, arguments: Mapping[str, Any]) -> list[dict]: ...

    def procedures(self) -> list[str]: ...

    def close(self) -> None: ...


class EmbeddedBackend:
    """The in-process runtime loading the packaged `query_modules/`, like Memgraph would."""

    def __init__(self, graph: "str | Path | Sequence[dict] | None" = None,
                 modules_dir: str | Path | None = None, timeouts: Timeouts | None = None) -> None:
        from memgraph_recall.locate import install_hint, query_modules_dir, use_packaged_model_by_default

        use_packaged_model_by_default()
        from memgraph_recall.embedded import Runtime

        self.timeouts = timeouts or Timeouts()
        self.runtime = Runtime(Path(modules_dir) if modules_dir is not None else query_modules_dir())
        error = self.runtime.load_errors.get("recall")
        if error:
            last = error.strip().splitlines()[-1] if error.strip() else "unknown error"
            missing = "ModuleNotFoundError" in last
            hint = f" (install the embedded extra: {install_hint('embedded')})" if missing else ""
            raise RecallNotLoaded(f"the recall module failed to import in the embedded runtime: {last}{hint}")
        self.description = "embedded runtime"
        if isinstance(graph, (str, Path)):
            self.runtime.load_graph(graph)
            self.description = f"embedded runtime over {graph}"
        elif graph is not None:
            self.runtime.load_elements(list(graph))

    def call(self, procedure: str, arguments: Mapping[str, Any]) -> list[dict]:
        from memgraph_recall.embedded import QueryError

        try:
            rows = self.runtime.call(procedure, *(arguments[name] for name in _ARG_ORDER[procedure]),
                                     timeout=self.timeouts.call)
        except QueryError as exc:
            raise from_server_message(procedure, str(exc)) from exc
        if procedure == "recall.render" and _nothing_recalled(rows) and not self.runtime.store.find_vertices(
                "User", "user_id", arguments["user"]):
            return []  # what the node form answers for an unknown user (a scan, so only when nothing came)
        return rows

    def procedures(self) -> list[str]:
        names = (row["name"] if isinstance(row, dict) else str(row) for row in self.runtime.procedures())
        return sorted(name for name in names if name.startswith("recall."))

    def close(self) -> None:
        """Nothing to release: the runtime lives as long as the client object."""


class RecallClient:
    """Recall over Memgraph or the embedded runtime: `render`, `lanes`, `embed`, `status`, `invalidate`."""

    def __init__(self, backend: Backend, retry: Backoff | None = None) -> None:
        """`retry`: how `embed` retries a serialization conflict (default: 5 attempts over ~3 s)."""
        self.backend = backend
        self.retry = retry or Backoff()

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def connect(cls, host: str = "localhost", port: int = 7687, username: str = "", password: str = "",
                encrypted: bool = False, node_form: bool = False, timeout: float | None = None,
                connect_timeout: float | None = None) -> "RecallClient":
        """A client of a Memgraph server running the memgraph-recall image (connects on first call).

        With `node_form=True`, `render` looks the user up with `MATCH (u:User {user_id: $user})` (fast
        with `memgraph-recall setup`'s index); an unknown user is then an empty memory. `timeout`
        (default 60 s) bounds each call, `connect_timeout` (default 10 s) opening a connection.
        """
        address = BoltAddress(host, port, username, password, encrypted)
        return cls(BoltBackend(address, node_form, Timeouts.of(timeout, connect_timeout)))

    @classmethod
    def from_url(cls, url: str, node_form: bool = False, timeout: float | None = None,
                 connect_timeout: float | None = None) -> "RecallClient":
        """Like `connect`, from `bolt://[user[:password]@]host[:port]` (`bolt+s://` for TLS)."""
        return cls(BoltBackend(BoltAddress.parse(url), node_form, Timeouts.of(timeout, connect_timeout)))

    @classmethod
    def embedded(cls, graph: "str | Path | Sequence[dict] | None" = None,
                 modules_dir: str | Path | None = None, timeout: float | None = None) -> "RecallClient":
        """A client with no server: the embedded runtime over an `export_util.json` file or elements.

        The packaged all-MiniLM-L6-v2 becomes the default model unless `RECALL_MODELS` or
        `RECALL_DEFAULT_MODEL` are already set. `timeout` (default 60 s) is each call's transaction
        timeout, enforced as Memgraph enforces its own (at the procedure's `check_must_abort()`).
        """
        return cls(EmbeddedBackend(graph, modules_dir, Timeouts.of(timeout)))

    # -- procedures -----------------------------------------------------------------------------
    def render(self, user: str, question: str, today: Today = None, config: Mapping | None = None,
               **options: Any) -> Recalled:
        """`recall.render`: the rows an LLM answers from, as text and as typed rows."""
        rows = self._call("recall.render", user=_user(user), q=question, today=today,
                          config=_config(config, options))
        if not rows:  # the node form (and the embedded runtime) return no row: the user does not exist
            nobody = Recalled.from_row({"text": "", "recalled": {"question": question}})
            return replace(nobody, user_found=False)
        return Recalled.from_row(rows[0])

    def lanes(self, user: str, question: str, config: Mapping | None = None, **options: Any) -> list[LaneHit]:
        """`recall.lanes`: every lane's hits, ranked, before merging."""
        rows = self._call("recall.lanes", user=_user(user), q=question, config=_config(config, options))
        return [LaneHit.from_row(row) for row in rows]

    def embed_once(self, user: str | None = None, config: Mapping | None = None,
                   **options: Any) -> EmbedProgress:
        """One `recall.embed` call: embeds up to `limit` units and says how many remain.

        A serialization conflict with a concurrent write is retried with backoff (`self.retry`): the
        procedure writes only what is still missing, so repeating it is safe.
        """
        config = _config(config, options)
        if user is not None:
            config["user"] = _user(user)
        rows = retrying(lambda: self._call("recall.embed", config=config), "recall.embed",
                        (RecallConflictError,), self.retry)
        return EmbedProgress.from_row(rows[0])

    def embed(self, user: str | None = None, config: Mapping | None = None, progress: bool = False,
              **options: Any) -> EmbedProgress:
        """Call `recall.embed` until nothing remains; totals over all calls, optional progress bar.

        With a progress bar and no `limit` given, a small first call learns the backlog's size, then
        calls embed `PROGRESS_LIMIT` units each, so the bar moves while a large backlog is worked off
        (each call is its own transaction either way).
        """
        chosen = "limit" in (config or {}) or "limit" in options
        first = options if chosen or not progress else {**options, "limit": FIRST_PROGRESS_LIMIT}
        if progress and not chosen:
            options = {**options, "limit": PROGRESS_LIMIT}
        done = self.embed_once(user, config, **first)
        bar = _progress_bar(done.embedded + done.remaining, done.embedded, done.model) if progress else None
        try:
            while done.remaining > 0:
                step = self.embed_once(user, config, **options)
                if step.embedded == 0 or step.remaining >= done.remaining:
                    # e.g. a model whose vectors are stored but not accepted as current: each call
                    # would write the same units again, forever
                    raise RecallProcedureError(
                        f"recall.embed made no progress: {step.remaining} units remained after a call "
                        f"that started with {done.remaining}; check `memgraph-recall status` for "
                        "malformed vectors or a model that cannot load")
                done = done + step
                if bar is not None:
                    bar.update(step.embedded)
        finally:
            if bar is not None:
                bar.close()
        return done

    def status(self, user: str | None = None, config: Mapping | None = None, **options: Any) -> list[dict]:
        """`recall.status`, the doctor: module version, models, vector counts, cache entries."""
        config = _config(config, options)
        if user is not None:
            config["user"] = _user(user)
        return [json_ready(row) for row in self._call("recall.status", config=config)]

    def invalidate(self, user: str | None = None) -> int:
        """`recall.invalidate`: drop cached data for one user, or for all; returns how many entries."""
        rows = self._call("recall.invalidate", user=None if user is None else _user(user))
        return int(rows[0]["dropped"]) if rows else 0

    def procedures(self) -> list[str]:
        """The `recall.*` procedures the backend has, like `CALL mg.procedures()`."""
        return self.backend.procedures()

    def setup(self) -> str:
        """Create the `:User(user_id)` index the node form needs; nothing to do in embedded mode."""
        if isinstance(self.backend, BoltBackend):
            self.backend.run("setup", USER_INDEX)
            return f"{USER_INDEX} on {self.backend.description}"
        return "embedded runtime: no index needed"

    def save_graph(self, path: str | Path) -> Path:
        """Embedded only: write the runtime's graph (with any new vectors) as `export_util.json`."""
        if not isinstance(self.backend, EmbeddedBackend):
            raise ValueError("save_graph: only the embedded runtime writes graph files; "
                             "use `memgraph-recall export` for a server")
        self.backend.runtime.save_graph(Path(path))
        return Path(path)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> "RecallClient":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _call(self, procedure: str, **arguments: Any) -> list[dict]:
        return self.backend.call(procedure, arguments)


def _nothing_recalled(rows: list[dict]) -> bool:
    recalled = (rows[0].get("recalled") or {}) if rows else {}
    return not any(recalled.get(kind) for kind in ("turns", "facts", "memories"))


def _user(user: Any) -> str:
    if not isinstance(user, str) or not user.strip():
        raise ValueError(f"user: expected a non-empty user_id string, got {user!r}")
    return user


def _config(config: Mapping | None, options: Mapping[str, Any]) -> dict:
    """Merge a config map and keyword options (options win) into the procedures' `config` map."""
    if config is not None and not isinstance(config, Mapping):
        raise ValueError(f"config: expected a mapping of recall config keys, got {type(config).__name__}")
    merged = {**(config or {}), **options}
    return {key: list(value) if isinstance(value, tuple) else value for key, value in merged.items()}


def _progress_bar(total: int, initial: int, model: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=f"embedding with {model}", unit="unit")

