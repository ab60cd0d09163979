"""The `user` argument of the recall procedures: how a call names its user, and what it brings along.

Three shapes, checked here before any work:
- a **user_id string** (`CALL recall.render("maya", ...)`): recall finds the User itself, through its
  directory of the database (`directory`), and reads the user's structure to stay fresh;
- a **:User node** (`MATCH (u:User {user_id: $user}) CALL recall.render(u, ...)`): found by Memgraph;
- the **fast call shape**, a map its Cypher prelude builds in the call's own transaction
  (`FAST_SHAPE_KEYS`): `users`, the :User nodes holding the user_id (through the `:User(user_id)`
  index; one expected), `metas`, the database's :RecallMeta nodes (which database this is), and for each
  holder (the User, its Sessions, their Agents) its vertex id in `holders` with its degree and the sum of
  its edge ids in `degrees` and `id_sums` (what Python's mgp cannot read without walking every edge).

The signature is the caller's claim, never a baseline: recall compares it with what it read itself
(`structure.Structure.differing`) and reads the holders that differ. A forged one can only make its
own call answer from the cache as it stands.

A map lacking any of its keys, or with no RecallMeta in `metas`, is refused: without them recall could
neither tell the database nor keep anything, and would have to read the whole graph on every call.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import schema as s
from .ownership import id_text, labels_of
from .structure import PassedSignatures

FAST_SHAPE_KEYS = ("users", "metas", "holders", "degrees", "id_sums")
EXPECTED = "a user_id string, a :User node or the fast call shape's map"


@dataclass(frozen=True)
class UserRef:
    """How one call names its user (exactly one of `user_id` / `vertex`, unless `absent`)."""

    user_id: str | None = None  # the string form: recall looks the User up
    vertex: Any = None  # the node forms: the live User vertex
    metas: tuple[Any, ...] | None = None  # the fast shape's RecallMeta vertices (None: not that shape)
    signature: PassedSignatures | None = None  # each holder's (degree, id sum), as the caller claims
    absent: bool = False  # the fast shape found no User with the user_id

    @property
    def fast(self) -> bool:
        return self.metas is not None


def user_ref(user: Any, max_holders: int, expected: str = EXPECTED) -> UserRef:
    """`user` checked and read as a UserRef; a ValueError naming `user` and what was expected."""
    if isinstance(user, str) and user:
        return UserRef(user_id=user)
    if _is_vertex(user):
        return UserRef(vertex=_user_vertex(user, expected))
    if isinstance(user, Mapping):
        return _fast_shape(user, max_holders)
    raise ValueError(f"user must be {expected}, got {user!r}")


def _is_vertex(value: Any) -> bool:
    return hasattr(value, "labels") and hasattr(value, "properties") and hasattr(value, "out_edges")


def _user_vertex(vertex: Any, expected: str) -> Any:
    if s.USER not in labels_of(vertex):
        found = ", ".join(sorted(labels_of(vertex))) or "no label"
        raise ValueError(f"user must be {expected}, got a node with {found}")
    return vertex


def _fast_shape(shape: Mapping, max_holders: int) -> UserRef:
    expected = ", ".join(FAST_SHAPE_KEYS)
    unknown = sorted(set(map(str, shape)) - set(FAST_SHAPE_KEYS))
    if unknown:
        raise ValueError(f"user: unknown key(s) {unknown} in the call shape's map; it takes {expected}")
    missing = [key for key in FAST_SHAPE_KEYS if key not in shape]
    if missing:
        raise ValueError(
            f"user: the call shape's map lacks {', '.join(missing)}; it takes {expected}, as "
            "memgraph_recall.shape.FAST_QUERIES builds it"
        )
    users = _list(shape, "users")
    metas = _list(shape, "metas")
    if not metas:
        raise ValueError(
            "user['metas'] is empty: this database has no :RecallMeta node, which the fast call shape "
            "needs to tell the databases of an instance apart; run memgraph-recall setup"
        )
    for vertex in (*users, *metas):
        if not _is_vertex(vertex):
            raise ValueError(f"user['users'] and user['metas'] must hold nodes, got {vertex!r}")
    for vertex in users:
        _user_vertex(vertex, "the fast call shape's map of :User nodes")
    if len(users) > 1:
        ids = sorted({str(id_text(v.properties.get(s.USER_ID))) for v in users})
        raise ValueError(
            f"user: {len(users)} :User nodes have user_id {', '.join(map(repr, ids))}; pass the node instead"
        )
    columns = [_integers(shape, key, max_holders) for key in ("holders", "degrees", "id_sums")]
    if len({len(c) for c in columns}) > 1:
        names = ("holders", "degrees", "id_sums")
        sizes = ", ".join(f"{name} {len(c)}" for name, c in zip(names, columns, strict=True))
        raise ValueError(f"user: holders, degrees and id_sums must be lists of one length, got {sizes}")
    signature = PassedSignatures(*map(tuple, columns))
    first = users[0] if users else None
    return UserRef(vertex=first, metas=tuple(metas), signature=signature, absent=not users)


def _list(shape: Mapping, key: str) -> Sequence[Any]:
    value = shape.get(key)
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"user['{key}'] must be a list, got {type(value).__name__}")
    return value


def _integers(shape: Mapping, key: str, ceiling: int) -> Sequence[int]:
    values = _list(shape, key)
    if len(values) > ceiling:
        raise ValueError(
            f"user['{key}'] holds {len(values)} entries, above this server's ceiling of {ceiling} "
            "(RECALL_MAX_HOLDERS)"
        )
    if not set(map(type, values)) <= {int}:
        wrong = next(value for value in values if type(value) is not int)
        raise ValueError(f"user['{key}'] must hold integers, got {wrong!r}")
    return values
