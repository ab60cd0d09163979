"""The databases of one Runtime: named graph stores beside one set of loaded modules.

As in Memgraph's multi-tenancy: each database owns its storage (src/dbms/database.hpp, `storage_`),
so its vertex and edge ids start at 0 (src/storage/v2/storage.hpp, `vertex_id_{0}`) and it has its
own lock, while the query modules and their module-level state are one per process for every
database (src/query/procedure/module.hpp, `gModuleRegistry`). The default database is "memgraph"
(src/dbms/constants.hpp, `kDefaultDB`) and cannot be dropped; dropping another refuses while a call
is using it, like DROP DATABASE without FORCE (src/query/interpreter.cpp, `DeleteError::USING`).
"""

import threading

from .store import GraphStore

DEFAULT_DATABASE = "memgraph"


def _check_name(name: object, what: str) -> str:
    if type(name) is not str or not name:
        raise TypeError(f"{what}: a database name must be a non-empty string, got {name!r}")
    return name


class Databases:
    """Name -> GraphStore. `stores` is read without a lock on every call (a dict lookup); only
    creating and dropping take `_lock`, so they never race each other."""

    def __init__(self) -> None:
        self.stores: dict[str, GraphStore] = {DEFAULT_DATABASE: GraphStore()}
        self._lock = threading.Lock()

    def get(self, name: str) -> GraphStore:
        store = self.stores.get(name)
        if store is None:
            raise self.unknown(name)
        return store

    def unknown(self, name: object) -> LookupError:
        return LookupError(f"database: there is no database named {name!r} "
                           f"(databases: {', '.join(map(repr, self.names()))})")

    def names(self) -> list[str]:
        return sorted(self.stores)

    def create(self, name: str) -> GraphStore:
        _check_name(name, "create_database")
        with self._lock:
            if name in self.stores:
                raise ValueError(f"create_database: database {name!r} already exists")
            store = self.stores[name] = GraphStore()
            return store

    def serve(self, name: str, store: GraphStore) -> None:
        """Make `store` the database `name` (existing), in place of its own."""
        if not isinstance(store, GraphStore):
            raise TypeError(f"store: expected a GraphStore, got {type(store).__name__}")
        with self._lock:
            self.get(name)
            self.stores[name] = store

    def drop(self, name: str) -> None:
        _check_name(name, "drop_database")
        if name == DEFAULT_DATABASE:
            raise ValueError(f"drop_database: cannot delete the default database {name!r}")
        with self._lock:
            store = self.stores.get(name)
            if store is None:
                raise LookupError(f"drop_database: database {name!r} does not exist")
            if not store.lock.try_acquire_write():
                raise RuntimeError(f"drop_database: cannot delete {name!r}, it is currently being used")
            try:
                del self.stores[name]
            finally:
                store.lock.release_write()
