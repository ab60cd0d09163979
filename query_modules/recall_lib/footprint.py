"""How many bytes a cached snapshot holds: what the cache's byte limit (`RECALL_CACHE_BYTES`) counts.

numpy arrays count their `.nbytes`; strings their `sys.getsizeof` (CPython's exact size, so non-ASCII
text counts 2 or 4 bytes a character); item objects (`Turn`, `Fact`, ...) the size of one instance
and of a dict of its fields, times their number; containers their own `getsizeof`. Python ints
and small shared objects (speaker names, session ids shared by a session's turns) are approximated,
not walked: the figure is an honest estimate within a few percent, cheap enough for every build
(`map(sys.getsizeof, ...)` runs at C speed, ~10 ms at 100k turns).
"""

import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .memory import UserMemory

_INT_BYTES = 32  # a Python int object (28-32 bytes) as held in id tuples, sets and dicts
_SLOT_BYTES = 8  # one pointer in a tuple, list, set or dict slot (dicts and sets hold more: see below)


def _strings(values: Iterable[str]) -> int:
    return sum(map(sys.getsizeof, values))


def _objects(items: Sequence[Any]) -> int:
    """The container, plus each item's own size and attributes (sized on the first item).

    The attributes count as a plain dict of the dataclass's fields: an upper bound that does not
    depend on whether CPython happened to materialise the instance's `__dict__`.
    """
    if not items:
        return sys.getsizeof(items)
    first = items[0]
    each = sys.getsizeof(first) + sys.getsizeof(dict.fromkeys(getattr(first, "__dataclass_fields__", ())))
    return sys.getsizeof(items) + each * len(items)


def _mapping(mapping: Mapping[Any, Any]) -> int:
    """A dict's table (keys and values are counted where they are owned)."""
    return sys.getsizeof(mapping)


def memory_bytes(memory: UserMemory) -> int:
    """Estimated bytes held by one `UserMemory`."""
    turns = memory.turns
    total = _objects(turns)
    total += _strings(t.text for t in turns) + _strings(t.action_id for t in turns)
    total += sum(map(sys.getsizeof, (t.passages for t in turns)))
    total += sum(_strings(t.passages) for t in turns if len(t.passages) > 1)  # split long texts
    total += 48 * sum(t.timestamp is not None for t in turns)  # one datetime each
    facts = memory.facts
    total += _objects(facts) + _strings(f.text for f in facts)
    total += (
        _strings(f.head for f in facts)
        + _strings(f.tail for f in facts)
        + _strings(f.source_id for f in facts)
    )
    total += _objects(memory.entities) + _strings(e.text for e in memory.entities)
    total += sum(sys.getsizeof(e.facts) for e in memory.entities)
    total += _objects(memory.memories) + _strings(n.content for n in memory.memories)
    total += sum(_strings(n.passages) + sys.getsizeof(n.passages) for n in memory.memories)
    for vectors in (memory.turn_vectors, memory.entity_vectors, memory.fact_vectors, memory.memory_vectors):
        total += vectors.nbytes
    total += memory.text_index.nbytes + memory.memory_text_index.nbytes
    total += _mapping(memory.turn_by_action) + _mapping(memory.action_sessions)
    total += _INT_BYTES * len(memory.turn_by_action)  # the turn positions
    total += _mapping(memory.relation_descriptions) + _strings(memory.relation_descriptions.values())
    return int(total)


def ids_bytes(count: int) -> int:
    """Bytes of `count` integer ids held in tuples or sets (object plus slot)."""
    return count * (_INT_BYTES + _SLOT_BYTES)
