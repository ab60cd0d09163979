"""`Runtime`: hosts a folder of Python query modules in-process, the way Memgraph does.

Loading: every top-level `*.py` of the folder is executed afresh for each Runtime (its own module
objects and module state), with the folder appended to `sys.path` so helper packages import. A module
that fails to import or register is recorded in `load_errors` with its traceback; the rest load.

`sys.modules["mgp"]` is our `mgp` only while some Runtime is importing or running module code
(reference-counted across threads); otherwise the previous entry, or its absence, is restored.

Databases: like a Memgraph instance, a Runtime holds several named databases (module `databases`),
each its own graph store with its own ids and lock, and one set of loaded modules shared by all of
them, so module-level state (a cache) is shared across databases exactly as in Memgraph, where a
procedure cannot learn which database it runs in. Every graph method takes `database=` (default
"memgraph"); the other databases' calls never wait for this one's lock.

Isolation: a readers-writer lock around each call. Read procedures run concurrently; a write
procedure runs alone and all-or-nothing (undo log). Every call therefore sees the graph either
before or after each write, never a mix (serializable). We chose this over MVCC because the store
then needs no per-element versions, so the hot read path (recall walks ~100k vertices per cold
call) pays nothing for isolation; the cost is that a long write procedure delays reads until it
finishes, so module write procedures should do slow work (e.g. embedding) in bounded batches.
"""

import importlib.util
import logging
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from . import interchange
from .api_counts import ApiCounts, count_arguments, counting_api
from .collector import collector_paused
from .databases import DEFAULT_DATABASE, Databases
from .errors import ArgumentError, ProcedureError, ProcedureNotFoundError, QueryTimeoutError, ResultError
from .marshal import to_output, to_proc_value
from .registry import Context, ModuleRegistry, Registration, running
from .scope import CallScope
from .snapshots import EdgeRef, VertexRef
from .store import GraphStore
from .values import read_value

_log = logging.getLogger("memgraph_recall.embedded")
_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}
_ABSENT = object()

# -- our mgp, and when it is visible as sys.modules["mgp"] ---------------------------------------
_mgp_lock = threading.Lock()
_mgp_module: ModuleType | None = None
_mgp_users = 0
_mgp_saved: Any = _ABSENT
_load_lock = threading.RLock()  # module imports register into one "module being loaded" at a time


def mgp_module() -> ModuleType:
    """Our mgp, loaded once per process under the name `mgp` (not registered in sys.modules)."""
    global _mgp_module
    with _mgp_lock:
        if _mgp_module is None:
            spec = importlib.util.spec_from_file_location("mgp", Path(__file__).with_name("_mgp_compat.py"))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _mgp_module = module
        return _mgp_module


@contextmanager
def mgp_installed() -> Iterator[ModuleType]:
    """Make `import mgp` resolve to our mgp for the duration of the block."""
    global _mgp_users, _mgp_saved
    module = mgp_module()
    with _mgp_lock:
        if _mgp_users == 0:
            _mgp_saved = sys.modules.get("mgp", _ABSENT)
            sys.modules["mgp"] = module
        _mgp_users += 1
    try:
        yield module
    finally:
        with _mgp_lock:
            _mgp_users -= 1
            if _mgp_users == 0:
                if _mgp_saved is _ABSENT:
                    sys.modules.pop("mgp", None)
                else:
                    sys.modules["mgp"] = _mgp_saved
                _mgp_saved = _ABSENT


def _arity_error(spec: Registration) -> ArgumentError:
    required, total = spec.required, len(spec.args)
    if total == 0:
        return ArgumentError(f"'{spec.full_name}' requires no arguments.")
    if required == total:
        noun = "argument" if total == 1 else "arguments"
        return ArgumentError(f"'{spec.full_name}' requires exactly {total} {noun}.")
    return ArgumentError(f"'{spec.full_name}' requires between {required} and {total} arguments.")


class Runtime:
    """Query modules from `modules_dir`, named databases (graph stores), and Cypher-like calls into
    the modules against one database."""

    def __init__(self, modules_dir: str | Path, *, log_capacity: int = 10_000,
                 pause_gc: bool = False) -> None:
        """`pause_gc`: keep Python's cyclic garbage collector off while procedures run (process-wide;
        off by default, see `collector`)."""
        folder = Path(modules_dir).resolve()
        if not folder.is_dir():
            raise ValueError(f"modules_dir must be an existing folder of query modules, got {modules_dir!r}")
        if type(pause_gc) is not bool:
            raise TypeError(f"pause_gc must be True or False, got {pause_gc!r}")
        self.modules_dir = folder
        self.pause_gc = pause_gc
        self._databases = Databases()
        self._stores = self._databases.stores  # read on every call: one dict lookup
        self.load_errors: dict[str, str] = {}
        self.logs: deque[tuple[str, str]] = deque(maxlen=log_capacity)
        self.modules: dict[str, ModuleType] = {}
        self._module_paths: dict[str, Path] = {}
        self._procedures: dict[str, Registration] = {}
        self._functions: dict[str, Registration] = {}
        self._contexts: dict[str, Context] = {}  # per module, reused by every call
        self._mgp = mgp_module()
        self._load_modules()

    # -- loading --------------------------------------------------------------------------------
    def _load_modules(self) -> None:
        if str(self.modules_dir) not in sys.path:
            sys.path.append(str(self.modules_dir))
        for path in sorted(self.modules_dir.glob("*.py")):
            name = path.stem
            registry = ModuleRegistry(name)
            try:
                with _load_lock, mgp_installed(), running(Context(name, self._log_sink, registry)):
                    module = self._execute(name, path)
            except Exception as exc:
                self.load_errors[name] = _module_traceback(exc)
                self._log_sink(name, "error", f'Unable to load module "{path}"; {self.load_errors[name]}')
                continue
            self.modules[name] = module
            self._module_paths[name] = path
            self._contexts[name] = Context(name, self._log_sink)
            for spec in registry.procedures.values():
                self._procedures[spec.full_name] = spec
            for spec in registry.functions.values():
                self._functions[spec.full_name] = spec

    @staticmethod
    def _execute(name: str, path: Path) -> ModuleType:
        """Run the module file as a fresh module object; `sys.modules[name]` points at it only
        while it runs (so dataclasses and typing work), then is restored."""
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        previous = sys.modules.get(name, _ABSENT)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            if previous is _ABSENT:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        return module

    def _log_sink(self, module: str, level: str, message: str) -> None:
        self.logs.append((level, message))
        logger = logging.getLogger(f"memgraph_recall.embedded.{module}")
        logger.log(_LEVELS.get(level, logging.INFO), "%s", message)

    # -- databases ------------------------------------------------------------------------------
    @property
    def store(self) -> GraphStore:
        """The default database's store."""
        return self._stores[DEFAULT_DATABASE]

    @store.setter
    def store(self, store: GraphStore) -> None:
        """Serve another store as the default database (e.g. one runtime's graph under a second
        runtime's modules, as scripts/bench_scale.py's floor does)."""
        self._databases.serve(DEFAULT_DATABASE, store)

    def create_database(self, name: str) -> GraphStore:
        """`CREATE DATABASE name`: a new empty graph (ids from 0) served by this runtime's modules."""
        return self._databases.create(name)

    def drop_database(self, name: str) -> None:
        """`DROP DATABASE name`: not the default, not while a call uses it; module state survives."""
        self._databases.drop(name)

    def databases(self) -> list[str]:
        """The database names, sorted (`SHOW DATABASES`)."""
        return self._databases.names()

    def database(self, name: str) -> GraphStore:
        """The graph store of database `name` (LookupError naming it if there is none)."""
        return self._databases.get(name)

    # -- graph ----------------------------------------------------------------------------------
    def load_graph(self, path: str | Path, *, database: str = DEFAULT_DATABASE) -> None:
        """Replace a database's graph with an `export_util.json` file (nothing changes if it is
        malformed); its index and constraint definitions stay and are rebuilt over the new graph
        (ConstraintViolation, and nothing changes, if the file violates a unique or type
        constraint)."""
        store = self._databases.get(database)
        store.replace_with(interchange.load_store(path))

    def load_elements(self, elements: Iterable[dict], *, database: str = DEFAULT_DATABASE) -> None:
        """Replace a database's graph with export elements (e.g. `MemoryGraph.elements()`), as
        `load_graph` does."""
        store = self._databases.get(database)
        store.replace_with(interchange.build_store(list(elements), consume=True))

    def save_graph(self, path: str | Path, *, database: str = DEFAULT_DATABASE) -> None:
        """Write a database's graph as an `export_util.json` file."""
        interchange.save_store(self._databases.get(database), path)

    def vertex(self, vertex_id: int, *, database: str = DEFAULT_DATABASE) -> VertexRef:
        """A vertex to pass as a procedure argument, as Cypher would after `MATCH (n) WHERE id(n) = ...`.
        A ref is only an id: passed to a call on another database, it names that database's vertex
        with the same id (ids restart in every database, as in Memgraph)."""
        store = self._databases.get(database)
        with store.lock.read():
            return VertexRef(store.get_vertex(vertex_id).id)

    def edge(self, edge_id: int, *, database: str = DEFAULT_DATABASE) -> EdgeRef:
        """An edge to pass as a procedure argument (an id, like `vertex`)."""
        store = self._databases.get(database)
        with store.lock.read():
            return EdgeRef(store.get_edge(edge_id).id)

    def find_vertex(self, label: str, key: str, value: Any, *, database: str = DEFAULT_DATABASE) -> VertexRef:
        """The one vertex `(:label {key: value})`, to pass as an argument (through the database's
        label-property index if it has one); LookupError if there is none, ValueError if several match."""
        ids = self._databases.get(database).find_vertices(label, key, value)
        if not ids:
            raise LookupError(f"no vertex (:{label} {{{key}: {value!r}}})")
        if len(ids) > 1:
            raise ValueError(f"{len(ids)} vertices match (:{label} {{{key}: {value!r}}}), expected one")
        return VertexRef(ids[0])

    # -- introspection --------------------------------------------------------------------------
    def procedures(self) -> list[dict[str, Any]]:
        """Like `CALL mg.procedures()`: name, signature, is_write, is_editable, path."""
        return [
            {"name": name, "signature": spec.signature(), "is_write": spec.is_write, "is_editable": True,
             "path": str(self._module_paths[spec.module])}
            for name, spec in sorted(self._procedures.items())
        ]

    def functions(self) -> list[dict[str, Any]]:
        """Like `CALL mg.functions()`: name, signature, path."""
        return [{"name": name, "signature": spec.signature(), "path": str(self._module_paths[spec.module])}
                for name, spec in sorted(self._functions.items())]

    # -- calls ----------------------------------------------------------------------------------
    def call(self, name: str, *args: Any, timeout: float | None = None, api_counts: ApiCounts | None = None,
             database: str = DEFAULT_DATABASE,
             prelude: Callable[[GraphStore], tuple | None] | None = None) -> list[dict[str, Any]]:
        """`CALL name(args...)` in `database`: positional arguments as Cypher passes them; rows as dicts.

        `timeout` (seconds) makes `ctx.check_must_abort()` raise AbortError once elapsed, and fails
        the call (rolling back writes) if the procedure finishes after it. `api_counts` adds the
        procedure-API calls the procedure makes, and the argument values handed in, to that object
        (see `api_counts`; off: no cost). `prelude(store)`: the query's Cypher before the CALL (e.g.
        `prelude.fast_shape`), run in the same transaction: it returns the arguments to call with
        (`args` are then unused), or None when the query finds no row (nothing is called: no rows).
        """
        spec = self._procedures.get(name)
        if spec is None:
            raise ProcedureNotFoundError(f"There is no procedure named '{name}'.")
        try:
            store = self._stores[database]
        except (KeyError, TypeError):
            raise self._databases.unknown(database) from None
        deadline = _deadline(timeout)
        if prelude is None and not spec.required <= len(args) <= len(spec.args):
            raise _arity_error(spec)
        if api_counts is not None and not isinstance(api_counts, ApiCounts):
            raise TypeError(f"api_counts must be an ApiCounts or None, got {type(api_counts).__name__}")
        scope = CallScope(store, spec.is_write, deadline, time.time_ns() // 1000, counts=api_counts)
        if spec.is_write:
            with store.transaction():
                args = self._prelude_args(spec, prelude, store, args)
                return [] if args is None else self._run(spec, args, scope)
        lock = store.lock  # plain acquire/release: this is the per-call hot path
        lock.acquire_read()
        try:
            args = self._prelude_args(spec, prelude, store, args)
            return [] if args is None else self._run(spec, args, scope)
        finally:
            lock.release_read()

    @staticmethod
    def _prelude_args(spec: Registration, prelude: Any, store: GraphStore, args: tuple) -> tuple | None:
        if prelude is None:
            return args
        found = prelude(store)
        if found is not None and not spec.required <= len(found) <= len(spec.args):
            raise _arity_error(spec)
        return found

    def _run(self, spec: Registration, args: tuple, scope: CallScope) -> list[dict[str, Any]]:
        """Run a procedure under the caller's lock, with the collector paused if this runtime asks."""
        if self.pause_gc:
            with collector_paused():
                return self._run_procedure(spec, args, scope)
        return self._run_procedure(spec, args, scope)

    def _run_procedure(self, spec: Registration, args: tuple, scope: CallScope) -> list[dict[str, Any]]:
        """Arguments, call, result checks, invalidation of the objects handed out."""
        with mgp_installed() as mgp, running(self._contexts[spec.module]):
            api = mgp if scope.counts is None else counting_api(mgp)
            try:
                values = self._arguments(spec, args, scope, api)
                if scope.counts is not None:
                    scope.counts.arguments += count_arguments(values)
                try:
                    if spec.takes_ctx:
                        result = spec.func(api.ProcCtx(scope), *values)
                    else:
                        result = spec.func(*values)
                except mgp.AbortError as exc:
                    if scope.deadline is not None and time.monotonic() >= scope.deadline:
                        raise _timeout(spec) from exc
                    raise ProcedureError(f"{spec.full_name}: {_module_traceback(exc)}") from exc
                except Exception as exc:
                    raise ProcedureError(f"{spec.full_name}: {_module_traceback(exc)}") from exc
                rows = self._rows(spec, result)
                if scope.deadline is not None and time.monotonic() >= scope.deadline:
                    raise _timeout(spec)
                return rows
            finally:
                scope.valid = False

    def call_function(self, name: str, *args: Any, database: str = DEFAULT_DATABASE) -> Any:
        """`RETURN name(args...)` in `database` for a function registered with `@mgp.function`."""
        spec = self._functions.get(name)
        if spec is None:
            raise ProcedureNotFoundError(f"Function '{name}' doesn't exist.")
        if not spec.required <= len(args) <= len(spec.args):
            raise _arity_error(spec)
        store = self._databases.get(database)
        scope = CallScope(store, False)
        with store.lock.read(), mgp_installed() as mgp, running(self._contexts[spec.module]):
            try:
                values = self._arguments(spec, args, scope, mgp)
                try:
                    result = spec.func(mgp.FuncCtx(scope), *values) if spec.takes_ctx else spec.func(*values)
                except Exception as exc:
                    raise ProcedureError(f"{spec.full_name}: {_module_traceback(exc)}") from exc
                try:
                    return to_output(result, mgp)
                except (ValueError, OverflowError) as exc:
                    raise ResultError(f"{spec.full_name}: {exc}") from exc
            finally:
                scope.valid = False

    def _arguments(self, spec: Registration, args: tuple, scope: CallScope, api: Any) -> list[Any]:
        """Convert and type-check the caller's arguments, then append fresh copies of defaults;
        graph elements become `api`'s classes (our mgp's, or its counting subclasses)."""
        values = []
        for position, (arg, value) in enumerate(zip(spec.args, args, strict=False)):
            try:
                converted = to_proc_value(value, scope, api)
            except (TypeError, OverflowError) as exc:
                where = _where(spec, position)
                raise ArgumentError(f"{where} is not a value Cypher can pass: {exc}.") from None
            except LookupError as exc:
                where = _where(spec, position)
                raise ArgumentError(f"{where} refers to a missing graph element: {exc}.") from None
            if not arg.type.satisfies(converted):
                raise ArgumentError(f"{_where(spec, position)} must be of type {arg.type.name}.")
            values.append(converted)
        values.extend(read_value(arg.default) for arg in spec.args[len(args):])
        return values

    def _rows(self, spec: Registration, result: Any) -> list[dict[str, Any]]:
        """Check the procedure's return value as Memgraph does and convert it to client rows.

        As Memgraph: a sequence is read record by record and then emptied in place (the procedure's
        list is left empty); None only for a void signature; anything else must be one Record.
        """
        mgp, name = self._mgp, spec.full_name
        if result is None:
            if spec.results:
                raise ResultError(f"{name}: the procedure returned None, but its signature declares "
                                  f"result fields ({', '.join(spec.results)}); return mgp.Record(...) "
                                  "or a list of them.")
            return []
        if type(result) is mgp.Record:  # the common case first; a Record is no sequence
            return [self._row(spec, result)]
        if type(result) is list or _is_sequence(result):
            rows = [self._row(spec, record) for record in _items(result)]
            _empty(result, name)
            return rows
        if not isinstance(result, mgp.Record):
            raise ResultError(f"{name}: the returned value is not an instance of 'mgp.Record' or a list "
                              f"of them (got {type(result).__name__}).")
        return [self._row(spec, result)]

    def _row(self, spec: Registration, record: Any) -> dict[str, Any]:
        mgp, name = self._mgp, spec.full_name
        if not isinstance(record, mgp.Record):
            raise ResultError(f"{name}: the returned value is not an instance of 'mgp.Record' "
                              f"(got {type(record).__name__}).")
        row = dict.fromkeys(spec.results)
        for field, value in record.fields.items():
            ctype = spec.results.get(field)
            if ctype is None:
                raise ResultError(f"{name}: The result doesn't have any field named '{field}'.")
            try:
                converted = to_output(value, mgp)
            except (ValueError, OverflowError) as exc:
                raise ResultError(f"{name}: field '{field}': {exc}.") from exc
            if not ctype.satisfies(converted):
                raise ResultError(f"{name}: The type of value doesn't satisfy the type '{ctype.name}'! "
                                  f"(field '{field}', got {type(value).__name__})")
            row[field] = converted
        return row


def _is_sequence(value: Any) -> bool:
    """Python's sequence protocol, as the C API's PySequence_Check sees it (a dict is not one)."""
    return not isinstance(value, dict) and hasattr(type(value), "__getitem__") and hasattr(value, "__len__")


def _items(sequence: Any) -> list[Any]:
    return list(sequence) if type(sequence) is list else [sequence[i] for i in range(len(sequence))]


def _empty(sequence: Any, name: str) -> None:
    """Memgraph empties the returned sequence with PySequence_DelSlice once its records are read. On
    a sequence that cannot delete (a tuple) the call fails, the failure is left pending, and the
    cleanup that follows finds it and stops the server (LOG_FATAL in py_module.cpp): refuse it here."""
    try:
        del sequence[0:len(sequence)]
    except TypeError as exc:
        kind = type(sequence).__name__
        raise ResultError(
            f"{name}: the procedure returned a {kind} of records. Memgraph would abort the whole server "
            f"on this: after reading the records it empties the returned sequence with "
            f"PySequence_DelSlice, which fails on a {kind} ({exc}), and the cleanup after that failure "
            "is fatal. Return a list of mgp.Record instead.") from exc


def _where(spec: Registration, position: int) -> str:
    return f"'{spec.full_name}' argument named '{spec.args[position].name}' at position {position}"


def _deadline(timeout: float | None) -> float | None:
    if timeout is None:
        return None
    if type(timeout) not in (int, float) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    return time.monotonic() + timeout


def _timeout(spec: Registration) -> QueryTimeoutError:
    return QueryTimeoutError(
        f"{spec.full_name}: Transaction was asked to abort because of transaction timeout.")


def _module_traceback(exc: BaseException) -> str:
    """Python's full traceback (chained exceptions included) from the module's own frames on, host
    and importlib frames dropped. Memgraph logs it for a module that fails to load, and a client
    reads it after `<procedure>: ` when a procedure raised (py_module.cpp formats it with
    `traceback.format_exception`, skipping the first frame: mgp's wrapper, here the host's)."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename == __file__
                              or tb.tb_frame.f_code.co_filename.startswith("<frozen importlib")):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))
