"""The user's structure as edge ids: what the cache checks on every call to stay fresh.

A `Structure` records, for each holder (the User vertex, the user's Sessions and Agents, and the
Sessions and Agents the walk reached but the rules turned away, which are **watched**: any change to
their edges means a full build, since it may make them the user's), the ids of its edges out and in.
Reading it touches edge ids only (no property, no vector). From it, each holder's **signature**
follows: (its degree, the sum of its edge ids), what the fast call shape's Cypher computes in the
call's own snapshot (`degree(h)`, `sum(id(e))`) and passes in, so only holders whose signature differs
from the one recall derived from its own last read need reading at all.

Why (degree, id sum) is exact: edge ids in a database come from one counter that only grows, so every
edge created after recall read a holder has an id above all it read. If edges were added and removed
and the degree stayed the same, as many were added as removed, and the added ones' ids sum to more
than the removed ones' unless some added edge was created (id taken) **before** recall's read and
committed after it. So a change goes unseen only when at least two such late-committing edges of one
holder are matched by removals of the same total id: the rolling check (`recheck`) also reads each
holder's edge ids within the cache's maximum age (`RECALL_CACHE_MAX_AGE`), which bounds even that.
Ids restart after a storage rebuild (`RECOVER SNAPSHOT`, replica resync); see the cache's docstring for
what recall does then.

Comparing a read with the cached structure says:
- nothing changed: the cached snapshot is current for sessions and messages;
- it only grew: new sessions, messages, agent links, or edges into the User (facts about the user),
  read incrementally (`Growth`);
- something was removed, or a Session/Agent vanished: the caller rebuilds.

What it cannot see (by design: it reads no properties and only these vertices' edges): edited
properties, edges into the user's Actions from elsewhere, anything past the Actions (chunks, mentions,
facts between entities). Verification of every returned row covers the dangerous direction of all of
these; the rest is the rolling check's (`recheck`), within the maximum age.
"""

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

#: Looks up a vertex of the current transaction by id; None when it does not exist (any more).
VertexLookup = Callable[[int], Any]
#: A holder's signature: (degree, sum of its edge ids), out and in together.
Signature = tuple[int, int]


@dataclass(frozen=True)
class Structure:
    user: int  # the User vertex id (itself a holder)
    out_edges: Mapping[int, tuple[int, ...]]  # each holder -> its out-edge ids, in graph order
    in_edges: Mapping[int, tuple[int, ...]]  # each holder -> its in-edge ids
    # signatures already derived for holders whose edges are as here (`with_holders` keeps them)
    known: Mapping[int, Signature] = field(default_factory=dict, compare=False, repr=False)
    watched: frozenset[int] = frozenset()  # holders turned away: a change to them is a Removal

    @cached_property
    def signatures(self) -> Mapping[int, Signature]:
        """Each holder's signature; derived on first use (only the fast call shape compares them)."""
        known, in_edges = self.known, self.in_edges
        return {
            holder: known[holder] if holder in known else (len(out) + len(in_edges[holder]),
                                                           sum(out) + sum(in_edges[holder]))
            for holder, out in self.out_edges.items()
        }

    @property
    def edge_count(self) -> int:
        """How many edge ids the structure holds (for the cache's byte estimate)."""
        return sum(map(len, self.out_edges.values())) + sum(map(len, self.in_edges.values()))

    def differing(self, passed: "PassedSignatures") -> set[int]:
        """The holders whose signature in `passed` (the caller's, unchecked) is missing or not this one.

        A claim found to agree is remembered on this structure (never as a baseline: it only stands for
        "this exact claim agrees with what recall read"), so the usual call, the same claim again,
        compares three lists in C instead of building a map of thousands of pairs."""
        if self.__dict__.get("_agreeing") == passed:
            return set()
        claimed = passed.as_map()
        found = {holder for holder, mine in self.signatures.items() if claimed.get(holder) != mine}
        if not found:
            self.__dict__["_agreeing"] = passed  # frozen: set as `cached_property` sets its value
        return found

    def with_holders(self, read: "Structure") -> "Structure":
        """This structure with the holders `read` (e.g. `read_holders`) holds replaced or added; the
        signatures derived for the others are kept."""
        derived = self.__dict__.get("signatures")  # set by `cached_property` once derived
        known = {} if derived is None else {h: sig for h, sig in derived.items() if h not in read.out_edges}
        return Structure(
            self.user,
            {**self.out_edges, **read.out_edges},
            {**self.in_edges, **read.in_edges},
            known,
            self.watched,
        )


@dataclass(frozen=True)
class PassedSignatures:
    """The fast call shape's claim as passed: holder ids and, position by position, each one's degree
    and edge-id sum (tuples: the caller's lists cannot change it afterwards)."""

    holders: tuple[int, ...]
    degrees: tuple[int, ...]
    id_sums: tuple[int, ...]

    def as_map(self) -> dict[int, Signature]:
        """Holder id -> signature (a holder listed twice: its last entry)."""
        return dict(zip(self.holders, zip(self.degrees, self.id_sums, strict=True), strict=True))


@dataclass(frozen=True)
class Growth:
    """Edges that appeared since the cached structure (live objects, valid during this call only)."""

    structure: Structure  # the structure as read now, for the holders already known
    out_edges: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)
    in_edges: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)

    @property
    def unchanged(self) -> bool:
        return not (self.out_edges or self.in_edges)


@dataclass(frozen=True)
class Removal:
    """Something the baseline holds is gone: the caller builds afresh. `user_edges` and `user_ids`: the
    User's out-edges (live objects, valid during this call only) and their ids as the walk read them,
    so the build does not read them again; None when the walk had not read them."""

    user_edges: tuple[Any, ...] | None = None
    user_ids: tuple[int, ...] | None = None

    @property
    def user_out(self) -> Iterable[tuple[Any, int]] | None:
        """(edge, id) pairs, as `ownership.collect_owned` takes them."""
        return None if self.user_edges is None else zip(self.user_edges, self.user_ids, strict=True)


def _ids(edges: Iterable[Any]) -> tuple[int, ...]:
    return tuple([edge.id for edge in edges])


def read_holders(
    lookup: VertexLookup,
    holders: Iterable[int],
    walked: Mapping[int, tuple[int, ...]] | None = None,
    walked_in: Mapping[int, tuple[int, ...]] | None = None,
) -> Structure | None:
    """The edges of `holders` (vertex ids), as a partial structure; None when one no longer exists.
    `walked`, `walked_in`: out- and in-edge ids a walk of this same transaction already read (a holder
    with both is not looked up again)."""
    walked, walked_in = walked or {}, walked_in or {}
    out_edges: dict[int, tuple[int, ...]] = {}
    in_edges: dict[int, tuple[int, ...]] = {}
    for holder in holders:
        out, inward = walked.get(holder), walked_in.get(holder)
        if out is not None and inward is not None:
            out_edges[holder], in_edges[holder] = out, inward
            continue
        vertex = lookup(holder)
        if vertex is None:
            return None
        out_edges[holder] = _ids(vertex.out_edges) if out is None else out
        in_edges[holder] = _ids(vertex.in_edges) if inward is None else inward
    return Structure(-1, out_edges, in_edges)


def read_structure(
    user: Any,
    lookup: VertexLookup,
    holders: Iterable[int],
    walked: Mapping[int, tuple[int, ...]] | None = None,
    walked_in: Mapping[int, tuple[int, ...]] | None = None,
    watched: Collection[int] = frozenset(),
) -> Structure | None:
    """The structure of `user`, its other `holders` (Session and Agent vertex ids) and the `watched`
    ones; None when one of them no longer exists. `walked`, `walked_in`: as in `read_holders` (the
    User's out-edges included)."""
    every = [*holders, *watched] if watched else holders
    others = read_holders(lookup, (h for h in every if h != user.id), walked, walked_in)
    if others is None:
        return None
    user_out = (walked or {}).get(user.id)
    out_edges = {user.id: _ids(user.out_edges) if user_out is None else user_out, **others.out_edges}
    in_edges = {user.id: _ids(user.in_edges), **others.in_edges}
    return Structure(user.id, out_edges, in_edges, watched=frozenset(watched))


def _added(known: tuple[int, ...], now: tuple[int, ...], edges: Callable[[], Iterable[Any]]):
    """The live edges in `now` but not `known`; None when an edge of `known` is gone."""
    if now == known:
        return ()
    old = set(known)
    if not old.issubset(now):
        return None
    return tuple(edge for edge in edges() if edge.id not in old)


def _recorded(
    holder: int,
    known: tuple[int, ...],
    now: tuple[int, ...],
    edges: Callable[[], Iterable[Any]],
    changed: dict[int, tuple[int, ...]],
    added: dict[int, tuple[Any, ...]],
) -> bool:
    """Note one side of `holder` read as `now` (differing from `known`) in `changed`, its new live edges
    in `added`; False when an edge of `known` is gone (a removal)."""
    new = _added(known, now, edges)
    if new is None:
        return False
    changed[holder] = now
    if new:
        added[holder] = new
    return True


def compare(
    user: Any,
    baseline: Structure,
    lookup: VertexLookup,
    abort: Callable[[], None],
    only: Collection[int] | None = None,
) -> Growth | Removal:
    """How `user`'s structure differs from `baseline`: a Growth, or a Removal when anything was removed.

    Reads every holder, or with `only` just those (the rest are taken as the baseline has them). Any
    change to a watched holder is a Removal: only a build can tell whether it is the user's now.
    Order is not compared (Memgraph may reorder a vertex's edges when one is deleted), only id sets,
    with an exact tuple comparison as the fast path. The loop runs once per holder (thousands on a
    bare call), so it reads each side by name rather than through a per-side table.
    """
    changed_out: dict[int, tuple[int, ...]] = {}  # ids read anew
    changed_in: dict[int, tuple[int, ...]] = {}
    out_added: dict[int, tuple[Any, ...]] = {}
    in_added: dict[int, tuple[Any, ...]] = {}
    known_out, known_in, watched = baseline.out_edges, baseline.in_edges, baseline.watched
    holders = known_out.keys() if only is None else [h for h in only if h in known_out]
    user_id = baseline.user  # the User's id as the baseline's read found it (`user.id` is an API call)
    # The User's out-edges are kept as read: a build after a removal takes them (`Removal.user_out`).
    user_edges = tuple(user.out_edges) if user_id in holders else None
    user_ids = None if user_edges is None else _ids(user_edges)
    for count, holder in enumerate(holders):
        if count % 512 == 0:
            abort()
        if holder == user_id:
            vertex, out_ids = user, user_ids
        else:
            vertex = lookup(holder)
            if vertex is None:
                return Removal(user_edges, user_ids)
            out_ids = _ids(vertex.out_edges)
        if holder in watched:
            if out_ids != known_out[holder] or _ids(vertex.in_edges) != known_in[holder]:
                return Removal(user_edges, user_ids)
            continue
        if out_ids != known_out[holder] and not _recorded(
            holder, known_out[holder], out_ids, lambda v=vertex: v.out_edges, changed_out, out_added
        ):
            return Removal(user_edges, user_ids)
        in_ids = _ids(vertex.in_edges)  # after the out side: a removal there ends the walk unread
        if in_ids != known_in[holder] and not _recorded(
            holder, known_in[holder], in_ids, lambda v=vertex: v.in_edges, changed_in, in_added
        ):
            return Removal(user_edges, user_ids)
    touched = changed_out.keys() | changed_in.keys()
    if not touched:  # the usual call: the baseline stands as it is
        return Growth(baseline)
    read = Structure(
        -1,
        {h: changed_out.get(h, known_out[h]) for h in touched},
        {h: changed_in.get(h, known_in[h]) for h in touched},
    )
    return Growth(baseline.with_holders(read), out_added, in_added)
