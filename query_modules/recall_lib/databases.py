"""Which database a call runs in: module state is shared by every database of a Memgraph instance.

Memgraph keeps one module state per instance and starts vertex ids at 0 in each database, and a
procedure cannot learn which database it runs in. So everything recall keeps that is derived from a
graph (a database's `Directory`, its users' cache entries) is filed under the database's **token**: the
`token` of its `(:RecallMeta)` vertex, a random UUID `memgraph-recall setup` creates once per database.

- The fast call shape passes the database's RecallMeta vertices (found through their label index):
  the tokens are read from them in the call's own transaction.
- The bare forms (`CALL recall.render("maya", ...)`, a `:User` node) are identified by probing the
  RecallMeta vertex ids of databases already seen: a vertex there with that database's token means
  this database (tokens are random, so no other database holds one). When none matches, the node form
  probes the first `LOW_IDS` ids (setup usually runs on an empty database, so its RecallMeta is there)
  and the string form's one full pass per database reads the graph: either finds this database's
  RecallMeta (a database seen for the first time) or none.
- **A database with no RecallMeta cannot be told apart from another**: calls there keep nothing
  between calls (each builds the user afresh). Slower, never wrong.

The RecallMeta also carries the collision rule's evidence (`recorded_rule`): `action_ids_unique`, which
setup writes once Memgraph enforces a uniqueness constraint on `(:Action) action_id`, and
`action_ids_text`, once it also enforces `IS TYPED STRING` there. It is read from the live vertex on
every call, never remembered.

Trust: a token names one database only while no other database holds a RecallMeta with the same token.
Copying a database (a snapshot restored into another one) copies its token: give the copy its own
(`memgraph-recall setup --new-token`). A writer who can create vertices in one database could plant
another database's token there; rows are still read back from the live graph before they are shown
(`verify`), so what is shown is this database's own data.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import schema as s
from .directory import Directory
from .ownership import Attribution, has_label

#: Most databases kept (least recently used dropped first, with their directories and entries).
MAX_DATABASES = 256
#: Ids the node form probes for a RecallMeta in a database no call has identified yet.
LOW_IDS = 64

DatabaseKey = tuple[str, ...]  # the database's RecallMeta tokens, sorted


@dataclass
class Database:
    """What recall keeps for one database: its key and its directory (built on first need)."""

    key: DatabaseKey
    meta_ids: dict[int, str] = field(default_factory=dict)  # RecallMeta vertex id -> token
    directory: Directory | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def meta_token(vertex: Any) -> str | None:
    """The token of a live RecallMeta vertex; None for anything else."""
    if vertex is None or not has_label(vertex, s.META):
        return None
    token = vertex.properties.get(s.TOKEN)
    return token if isinstance(token, str) and token else None


def recorded_rule(metas: Sequence[Any]) -> Attribution:
    """What the live RecallMeta vertices of this call's database record that Memgraph enforces on
    :Action(action_id) (every one of them, and at least one): uniqueness (`UNIQUE`), and with it the
    `IS TYPED STRING` constraint (`TYPED`); else `OFF`."""
    if not metas or not all(meta.properties.get(s.ACTION_IDS_UNIQUE) is True for meta in metas):
        return Attribution.OFF
    if all(meta.properties.get(s.ACTION_IDS_TEXT) is True for meta in metas):
        return Attribution.TYPED
    return Attribution.UNIQUE


class Databases:
    """Every database seen, by key, least recently used first; see the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, limit: int = MAX_DATABASES) -> None:
        self.clock = clock
        self.limit = limit
        self._lock = threading.Lock()
        self._known: OrderedDict[DatabaseKey, Database] = OrderedDict()
        self.evicted: list[DatabaseKey] = []  # keys dropped for the limit, for the cache to forget

    def named(self, metas: Sequence[Any]) -> Database | None:
        """The database whose RecallMeta vertices the caller passed (None when it passed none)."""
        tokens = {}
        for vertex in metas:
            token = meta_token(vertex)
            if token is None:
                raise ValueError(f"user: metas must be :RecallMeta nodes with a token, got {vertex!r}")
            tokens[vertex.id] = token
        return self._database(tokens) if tokens else None

    def identify(self, lookup: Callable[[int], Any]) -> tuple[Database, list[Any]] | None:
        """The known database this transaction's graph is, by probing known RecallMeta ids, with the
        live RecallMeta vertices found there; None."""
        with self._lock:
            known = reversed(self._known.values())
            candidates = [(i, token, db) for db in known for i, token in db.meta_ids.items()]
        probed: dict[int, Any] = {}
        for vertex_id, token, db in candidates:
            if vertex_id not in probed:
                probed[vertex_id] = lookup(vertex_id)
            if meta_token(probed[vertex_id]) == token:
                metas = []
                for meta_id, meta in db.meta_ids.items():
                    vertex = probed[meta_id] if meta_id in probed else lookup(meta_id)
                    if meta_token(vertex) == meta:
                        metas.append(vertex)
                return self._touch(db), metas
        return None

    def probe_low(self, lookup: Callable[[int], Any]) -> tuple[Database, list[Any]] | None:
        """The database whose RecallMeta vertices sit among the first `LOW_IDS` ids, registered, with
        those vertices; None when there is none."""
        metas = [v for v in map(lookup, range(LOW_IDS)) if meta_token(v) is not None]
        return (self._database({v.id: meta_token(v) for v in metas}), metas) if metas else None

    def found(self, directory: Directory) -> Database | None:
        """The database a full pass describes (its RecallMeta vertices), holding that directory; None
        when the graph has no RecallMeta."""
        metas = directory.metas()
        if not metas:
            return None
        db = self._database(metas)
        with db.lock:
            if db.directory is None:
                db.directory = directory
        return db

    def _database(self, tokens: dict[int, str]) -> Database:
        key = tuple(sorted(set(tokens.values())))
        with self._lock:
            db = self._known.get(key)
            if db is None:
                db = self._known[key] = Database(key)
                while len(self._known) > self.limit:
                    self.evicted.append(self._known.popitem(last=False)[0])
            db.meta_ids.update(tokens)
            self._known.move_to_end(key)
            return db

    def _touch(self, db: Database) -> Database:
        with self._lock:
            if db.key in self._known:
                self._known.move_to_end(db.key)
        return db

    def __iter__(self) -> Iterable[Database]:
        with self._lock:
            return iter(list(self._known.values()))

    def take_evicted(self) -> list[DatabaseKey]:
        with self._lock:
            evicted, self.evicted = self.evicted, []
            return evicted
