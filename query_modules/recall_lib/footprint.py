"""How many bytes a cached snapshot holds: what the cache's byte limit (`RECALL_CACHE_BYTES`) counts.

numpy arrays count their `.nbytes`; strings their `sys.getsizeof` (CPython's exact size, so non-ASCII
text counts 2 or 4 bytes a character); item objects (`Turn`, `Fact`, ...) the size of one instance
and of a dict of its fields, times their number; containers their own `getsizeof`. Python ints
and small shared objects (speaker names, session ids shared by a session's turns) are approximated,
not walked: the figure is an honest estimate within a few percent, cheap enough for every build
(`map(sys.getsizeof, ...)` runs at C speed, ~10 ms at 100k turns).
"""

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .memory import Note, UserMemory
from .turn_table import TurnTable

_INT_BYTES = 32  # a Python int object (28-32 bytes) as held in id tuples, sets and dicts
_SLOT_BYTES = 8  # one pointer in a tuple, list, set or dict slot (dicts and sets hold more: see below)


def _strings(values: Iterable[str]) -> int:
    return sum(map(sys.getsizeof, values))


def _objects(items: Sequence[Any]) -> int:
    """Each item's own size and attributes (sized on the first item; the container is not counted).

    Slotted dataclasses hold their fields in the object itself; others count a plain dict of their
    fields: an upper bound that does not depend on whether CPython materialised the `__dict__`.
    """
    if not items:
        return 0
    first = items[0]
    each = sys.getsizeof(first)
    if hasattr(first, "__dict__"):
        each += sys.getsizeof(dict.fromkeys(getattr(first, "__dataclass_fields__", ())))
    return each * len(items)


def turns_bytes(turns: TurnTable) -> int:
    """The turns' columns and strings (O(turns): counted once per turn, added up as turns are merged).

    Per turn: a slot in each of the seven column tuples, its text and action id, a datetime, and the
    one-passage tuple a `Turn` built from it would hold; texts split into passages count those too.
    """
    total = 7 * _SLOT_BYTES * len(turns)
    total += _strings(turns.texts) + _strings(turns.action_ids)
    total += 48 * sum(t is not None for t in turns.timestamps)  # one datetime each
    total += sum(sys.getsizeof(p) + _strings(p) for p in turns.split.values())  # split long texts
    return total


def notes_bytes(notes: Sequence[Note]) -> int:
    return _objects(notes) + sum(
        sys.getsizeof(n.content) + _strings(n.passages) + sys.getsizeof(n.passages) for n in notes
    )


def _facts_and_entities_bytes(memory: UserMemory) -> int:
    facts = memory.facts
    total = _objects(facts) + _strings(f.text for f in facts)
    total += (
        _strings(f.head for f in facts)
        + _strings(f.tail for f in facts)
        + _strings(f.source_id for f in facts)
    )
    total += _objects(memory.entities) + _strings(e.text for e in memory.entities)
    total += sum(sys.getsizeof(e.facts) for e in memory.entities)
    return total


def other_items_bytes(memory: UserMemory) -> int:
    """The objects and strings of the facts, entities and notes (few next to the turns)."""
    return _facts_and_entities_bytes(memory) + notes_bytes(memory.memories)


def items_bytes(memory: UserMemory) -> int:
    """Every item's objects and strings (turns, facts, entities, notes)."""
    return turns_bytes(memory.turns) + other_items_bytes(memory)


def fixed_bytes(memory: UserMemory) -> int:
    """What `items_bytes` leaves out, read in O(1): arrays, indexes, containers and dict tables."""
    total = sum(sys.getsizeof(items) for items in (memory.facts, memory.entities, memory.memories))
    for vectors in (memory.turn_vectors, memory.entity_vectors, memory.fact_vectors, memory.memory_vectors):
        total += vectors.nbytes
    total += memory.text_index.nbytes + memory.memory_text_index.nbytes
    total += sys.getsizeof(memory.turn_by_action) + sys.getsizeof(memory.action_sessions)
    total += _INT_BYTES * len(memory.turn_by_action)  # the turn positions
    total += sys.getsizeof(memory.relation_descriptions) + _strings(memory.relation_descriptions.values())
    return int(total)


def ids_bytes(count: int) -> int:
    """Bytes of `count` integer ids held in tuples or sets (object plus slot)."""
    return count * (_INT_BYTES + _SLOT_BYTES)
