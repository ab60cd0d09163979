"""`RecallClient`: one API over a Memgraph server (Bolt, `memgraph_recall.bolt`) or the embedded runtime.

The client only calls the `recall.*` procedures, always with query parameters and fixed query text,
so nothing a caller passes can change the Cypher that runs. Both backends return the same typed
results (`Recalled`, `LaneHit`, `EmbedProgress`), raise the same `RecallError` subclasses and bound
every call by the same `timeout` setting (`memgraph_recall.timeouts`).
"""

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from memgraph_recall.action_ids import ActionIdRule, BoltTarget, StoreTarget, establish
from memgraph_recall.bolt import READ, BoltAddress, BoltBackend
from memgraph_recall.checkpoint import Checkpoints
from memgraph_recall.errors import (
    RecallConflictError,
    RecallNotLoaded,
    RecallProcedureError,
    from_server_message,
)
from memgraph_recall.results import EmbedProgress, LaneHit, Recalled, json_ready
from memgraph_recall.retry import Backoff, retrying
from memgraph_recall.shape import FAST_QUERIES, NEW_TOKEN, SETUP
from memgraph_recall.timeouts import Timeouts

__all__ = ["Backend", "BoltAddress", "BoltBackend", "EmbeddedBackend", "RecallClient"]

_ARG_ORDER = {
    "recall.render": ("user", "q", "today", "config"),
    "recall.lanes": ("user", "q", "config"),
    "recall.embed": ("config",),
    "recall.status": ("config",),
    "recall.invalidate": ("user",),
}

Today = date | str | None
GraphSource = str | Path | Sequence[dict] | None  # an export_util.json path, its elements, or nothing
Graphs = GraphSource | Mapping[str, GraphSource]  # one graph, or {database name: graph}
DEFAULT_DATABASE = "memgraph"  # Memgraph's default database (src/dbms/constants.hpp, kDefaultDB)
#: How `render` and `lanes` name the user: the fast call shape (`memgraph_recall.shape`: the User found
#: through its index, the database and the holders' signatures passed in), or the bare user_id string.
CALL_FORMS = ("fast", "string")
PROGRESS_LIMIT = 512
FIRST_PROGRESS_LIMIT = 32


class Backend(Protocol):
    """Where procedures run: `call` takes named arguments in the procedure's order."""

    description: str

    def call(self, procedure: str, arguments: Mapping[str, Any]) -> list[dict]: ...

    def procedures(self) -> list[str]: ...

    def close(self) -> None: ...


class EmbeddedBackend:
    """The in-process runtime loading the packaged `query_modules/`, like Memgraph would.

    `graph` is one graph for the default database, or a mapping `{database: graph}` of several (each
    database created, then loaded); `database` is the one this backend's calls run against. Every
    database shares the runtime's modules, so the recall module's cache is one for all of them, as in
    a Memgraph instance; `use(database)` gives a backend of the same runtime bound to another one.
    """

    def __init__(self, graph: Graphs = None,
                 modules_dir: str | Path | None = None, timeouts: Timeouts | None = None, *,
                 database: str = DEFAULT_DATABASE, call_form: str = "fast") -> None:
        from memgraph_recall.locate import install_hint, query_modules_dir, use_packaged_model_by_default

        use_packaged_model_by_default()
        from memgraph_recall.embedded import Runtime

        self.timeouts = timeouts or Timeouts()
        self.call_form = _call_form(call_form)
        self.runtime = Runtime(Path(modules_dir) if modules_dir is not None else query_modules_dir())
        error = self.runtime.load_errors.get("recall")
        if error:
            last = error.strip().splitlines()[-1] if error.strip() else "unknown error"
            missing = "ModuleNotFoundError" in last
            hint = f" (install the embedded extra: {install_hint('embedded')})" if missing else ""
            raise RecallNotLoaded(f"the recall module failed to import in the embedded runtime: {last}{hint}")
        graphs = graph if isinstance(graph, Mapping) else {DEFAULT_DATABASE: graph}
        self.sources: dict[str, str] = {}  # database -> the file it was loaded from
        for name, one in graphs.items():
            if name != DEFAULT_DATABASE:
                try:
                    self.runtime.create_database(name)
                except TypeError as exc:
                    raise ValueError(f"graph: {exc}") from None
            if isinstance(one, (str, Path)):
                self.runtime.load_graph(one, database=name)
                self.sources[name] = str(one)
            elif one is not None:
                self.runtime.load_elements(list(one), database=name)
            setup_store(self.runtime.database(name))
        self._bind(database)

    def _bind(self, database: str) -> None:
        if database not in self.runtime.databases():
            raise ValueError(f"database: there is no database named {database!r} in this runtime "
                             f"(databases: {', '.join(map(repr, self.runtime.databases()))})")
        self.database = database
        where = f" over {self.sources[database]}" if database in self.sources else ""
        named = "" if database == DEFAULT_DATABASE else f", database {database!r}"
        self.description = f"embedded runtime{where}{named}"

    def use(self, database: str) -> "EmbeddedBackend":
        """A backend of the same runtime (same modules, so the same module state) calling into
        `database`; ValueError naming it if the runtime has no such database."""
        other = copy.copy(self)
        other._bind(database)
        return other

    def call(self, procedure: str, arguments: Mapping[str, Any]) -> list[dict]:
        from memgraph_recall.embedded import QueryError
        from memgraph_recall.embedded.prelude import call_prelude

        values = [arguments[name] for name in _ARG_ORDER[procedure]]
        prelude = None
        if self.call_form == "fast" and procedure in FAST_QUERIES:  # the Cypher before the CALL
            prelude = call_prelude(values[0], tuple(values[1:]))

        try:
            return self.runtime.call(procedure, *values, timeout=self.timeouts.call, database=self.database,
                                     prelude=prelude)
        except QueryError as exc:
            raise from_server_message(procedure, str(exc)) from exc

    def procedures(self) -> list[str]:
        names = (row["name"] if isinstance(row, dict) else str(row) for row in self.runtime.procedures())
        return sorted(name for name in names if name.startswith("recall."))

    def indexes(self) -> list[dict]:
        """What `SHOW INDEX INFO` lists for this backend's database."""
        return self.runtime.database(self.database).indexes()

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
                encrypted: bool = False, call_form: str = "fast", timeout: float | None = None,
                connect_timeout: float | None = None) -> "RecallClient":
        """A client of a Memgraph server running the memgraph-recall image (connects on first call).

        `render` and `lanes` send the fast call shape (`call_form="fast"`, `memgraph_recall.shape`: run
        `setup()` once so its indexes and the database's RecallMeta exist); an unknown user is then no
        row, reported as `Recalled.user_found` False. `call_form="string"` sends the bare user_id.
        `timeout` (default 60 s) bounds each call, `connect_timeout` (default 10 s) opening a connection.
        """
        address = BoltAddress(host, port, username, password, encrypted)
        return cls(BoltBackend(address, _call_form(call_form), Timeouts.of(timeout, connect_timeout)))

    @classmethod
    def from_url(cls, url: str, call_form: str = "fast", timeout: float | None = None,
                 connect_timeout: float | None = None) -> "RecallClient":
        """Like `connect`, from `bolt://[user[:password]@]host[:port]` (`bolt+s://` for TLS)."""
        timeouts = Timeouts.of(timeout, connect_timeout)
        return cls(BoltBackend(BoltAddress.parse(url), _call_form(call_form), timeouts))

    @classmethod
    def embedded(cls, graph: Graphs = None,
                 modules_dir: str | Path | None = None, timeout: float | None = None,
                 database: str = DEFAULT_DATABASE, call_form: str = "fast") -> "RecallClient":
        """A client with no server: the embedded runtime over an `export_util.json` file or elements,
        or over several databases `{name: file or elements}` (see `EmbeddedBackend`); this client's
        calls run against `database` (default "memgraph"), `use` gives a client of another one.

        Each database loaded is set up as `memgraph-recall setup` sets up a server (its indexes, and a
        RecallMeta when it has none), and `call_form` is as for `connect`. The packaged
        all-MiniLM-L6-v2 becomes the default model unless `RECALL_MODELS` or `RECALL_DEFAULT_MODEL` are
        already set. `timeout` (default 60 s) is each call's transaction timeout, enforced as Memgraph
        enforces its own (at the procedure's `check_must_abort()`).
        """
        backend = EmbeddedBackend(graph, modules_dir, Timeouts.of(timeout), database=database,
                                  call_form=call_form)
        return cls(backend)

    def use(self, database: str) -> "RecallClient":
        """Embedded only: a client of another database of the same runtime, sharing its modules and
        so the recall module's cache (as two databases of one Memgraph instance do), and this
        client's retry settings. ValueError naming the database if the runtime has none such."""
        if not isinstance(self.backend, EmbeddedBackend):
            raise ValueError("use: only an embedded client switches databases here; "
                             "connect to the other database instead")
        return RecallClient(self.backend.use(database), self.retry)

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
              save_to: str | Path | None = None, **options: Any) -> EmbedProgress:
        """Call `recall.embed` until nothing remains; totals over all calls, optional progress bar.

        Each call is its own transaction, and `recall.embed` embeds only units without a current
        vector, so a run that stops part-way keeps what its calls committed and the next run embeds
        the rest. Over Bolt the server keeps it; embedded, `save_to` is the graph file that keeps it:
        written as the run goes (`memgraph_recall.checkpoint`) and once more when it ends, is
        interrupted or fails, never if nothing was embedded.

        With a progress bar, a small first call learns the backlog's size before the bar opens; then,
        without a `limit` given, calls embed `PROGRESS_LIMIT` units each, so the bar moves.
        """
        if save_to is not None and not isinstance(self.backend, EmbeddedBackend):
            raise ValueError("save_to: only the embedded runtime writes graph files; over Bolt every "
                             "call is committed on the server")
        saves = Checkpoints(lambda: self.save_graph(save_to)) if save_to is not None else None
        first = options
        if progress:
            limit = {**(config or {}), **options}.get("limit", PROGRESS_LIMIT)
            options = {**options, "limit": limit}  # a bad limit goes on, for the module to refuse
            if isinstance(limit, int) and not isinstance(limit, bool) and limit > FIRST_PROGRESS_LIMIT:
                first = {**options, "limit": FIRST_PROGRESS_LIMIT}
            else:
                first = options
        bar = None
        try:
            done = self.embed_once(user, config, **first)
            if saves is not None and done.embedded:
                saves.committed()
            if progress:
                bar = _progress_bar(done.embedded + done.remaining, done.embedded, done.model)
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
                saved = saves is not None and saves.committed()
                if bar is not None:
                    bar.total = done.embedded + done.remaining  # others may add units meanwhile
                    if saved:
                        bar.set_postfix_str(f"saved {done.embedded:,}", refresh=False)
                    bar.update(step.embedded)
        finally:
            try:
                if bar is not None:
                    if saves is not None and saves.pending:
                        bar.set_postfix_str("saving", refresh=False)
                    bar.close()
            finally:
                if saves is not None:
                    saves.flush()
        return done

    def status(self, user: str | None = None, config: Mapping | None = None, **options: Any) -> list[dict]:
        """`recall.status`, the doctor: module version, models, vector counts, cache entries; then, in
        section "index", whether the indexes the fast call shape reads through exist (a procedure
        cannot see indexes: the client asks, with `SHOW INDEX INFO` on a server)."""
        config = _config(config, options)
        if user is not None:
            config["user"] = _user(user)
        rows = [json_ready(row) for row in self._call("recall.status", config=config)]
        return rows + index_rows(self.backend.indexes())

    def invalidate(self, user: str | None = None) -> int:
        """`recall.invalidate`: drop cached data for one user, or for all; returns how many entries."""
        rows = self._call("recall.invalidate", user=None if user is None else _user(user))
        return int(rows[0]["dropped"]) if rows else 0

    def procedures(self) -> list[str]:
        """The `recall.*` procedures the backend has, like `CALL mg.procedures()`."""
        return self.backend.procedures()

    def users_like(self, user: str) -> list[str]:
        """The user_ids equal to `user` but for letter case (`user` itself first when it exists): what a
        command checks a `--user` against before it serves or answers, to say "did you mean"."""
        if isinstance(self.backend, BoltBackend):
            rows = self.backend.run("users like", USERS_LIKE, {"user": user}, mode=READ)
            found = [row["user_id"] for row in rows]
        else:
            store = self.backend.runtime.database(self.backend.database)
            with store.lock.read():
                found = [store.get_vertex(v).props.get("user_id") for v in store.label_lookup("User")]
            found = [f for f in found if isinstance(f, str) and f.lower() == user.lower()][:5]
        return sorted(set(found), key=lambda f: (f != user, f))

    def setup(self, new_token: bool = False) -> str:
        """What the fast call shape needs (`memgraph_recall.shape.SETUP`): the `:User(user_id)` and
        `:RecallMeta` indexes and the database's RecallMeta; `new_token` gives the RecallMeta a new
        token (a database copied from another); then the uniqueness and `IS TYPED STRING` constraints
        on :Action(action_id), and on the RecallMeta what Memgraph enforces (`action_ids`: facts and
        entities are attributed only then). Idempotent: run it again after dropping a constraint or
        cleaning the ids. Embedded databases are set up on load."""
        if isinstance(self.backend, BoltBackend):
            for statement in SETUP:
                self.backend.run("setup", statement)
            if new_token:
                self.backend.run("setup", NEW_TOKEN)
            rule = establish(BoltTarget(self.backend), RecallProcedureError)  # on MAIN
            where = f"indexes on :User(user_id) and :RecallMeta, a RecallMeta on {self.backend.description}"
        else:
            store = self.backend.runtime.database(self.backend.database)
            rule = setup_store(store, new_token)
            where = f"indexes and a RecallMeta on the {self.backend.description}"
        return f"{where}; {rule.line()}"

    def save_graph(self, path: str | Path) -> Path:
        """Embedded only: write this client's database (with any new vectors) as `export_util.json`."""
        if not isinstance(self.backend, EmbeddedBackend):
            raise ValueError("save_graph: only the embedded runtime writes graph files; "
                             "use `memgraph-recall export` for a server")
        self.backend.runtime.save_graph(Path(path), database=self.backend.database)
        return Path(path)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> "RecallClient":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _call(self, procedure: str, **arguments: Any) -> list[dict]:
        return self.backend.call(procedure, arguments)


#: The indexes the fast call shape reads through: (label, property or None).
FAST_SHAPE_INDEXES = (("User", "user_id"), ("RecallMeta", None))


USERS_LIKE = ("MATCH (u:User) WHERE u.user_id = $user OR toLower(u.user_id) = toLower($user) "
              "RETURN u.user_id AS user_id LIMIT 5")


def did_you_mean(user: str, found: Sequence[str], where: str) -> str:
    """`--user`'s error for a user_id that does not exist in `where`, naming the near misses."""
    near = [f for f in found if f != user]
    hint = f": did you mean {' or '.join(repr(f) for f in near)}?" if near else \
        " (user ids are exact; `memgraph-recall status --user ID` checks one)"
    return f"--user: no user {user!r} in {where}{hint}"


def index_rows(indexes: Sequence[dict]) -> list[dict]:
    """`status` rows saying whether each of `FAST_SHAPE_INDEXES` exists, from `SHOW INDEX INFO` rows."""
    present = set()
    for row in indexes:
        prop = row.get("property")
        prop = prop[0] if isinstance(prop, (list, tuple)) and len(prop) == 1 else prop or None
        present.add((row.get("label"), prop))
    rows = []
    for label, prop in FAST_SHAPE_INDEXES:
        name = f":{label}({prop})" if prop else f":{label}"
        found = (label, prop) in present
        detail = "present" if found else "missing: the fast call shape scans all vertices; run setup"
        rows.append({"section": "index", "name": name, "model": None, "count": int(found), "detail": detail})
    return rows


def setup_store(store: Any, new_token: bool = False) -> ActionIdRule:
    """`memgraph-recall setup` for an embedded database: the indexes, a RecallMeta with a random token
    when it has none (or, with `new_token`, a new token on each), the constraints on
    :Action(action_id) and the record of what holds (`record_action_id_rule`)."""
    import uuid

    store.create_label_property_index("User", "user_id")
    store.create_label_index("RecallMeta")
    metas = store.label_lookup("RecallMeta")
    if not metas:
        store.add_vertex(["RecallMeta"], {"token": str(uuid.uuid4())})
    elif new_token:
        for vertex_id in metas:
            store.set_vertex_property(vertex_id, "token", str(uuid.uuid4()))
    return record_action_id_rule(store)


def record_action_id_rule(store: Any) -> ActionIdRule:
    """The constraints on :Action(action_id), created where the data allows, and on each RecallMeta of
    `store` what holds (`memgraph_recall.action_ids`)."""
    from memgraph_recall.embedded import ConstraintViolation

    return establish(StoreTarget(store), ConstraintViolation)


def _call_form(call_form: str) -> str:
    if call_form not in CALL_FORMS:
        raise ValueError(f"call_form: expected one of {', '.join(CALL_FORMS)}, got {call_form!r}")
    return call_form


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

    return tqdm(total=total, initial=initial, desc=f"embedding with {model}", unit=" units")

