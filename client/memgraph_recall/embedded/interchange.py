"""Read and write Memgraph's `export_util.json` format.

A file is one JSON array: nodes `{"id","labels","properties","type":"node"}` and relationships
`{"id","start","end","label","properties","type":"relationship"}` (ids as ints or numeric strings;
vertex and edge ids are separate spaces). Temporal values carry prefixes: `date(2024-01-15)`,
`localTime(10:30:00)`, `localDateTime(2024-01-15T10:30:00[+01:00])` (with an offset: a zoned
datetime) and `duration(<Python str(timedelta)>)`, e.g. `duration(1 day, 2:00:00)`; bare `NaN` and
`Infinity` are accepted. A string that only looks like a prefix but does not parse stays a string.
Memgraph writes nested temporals without prefixes (plain strings); we write them with prefixes,
so our own files round-trip exactly.
"""

import gc
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from .errors import GraphFileError
from .store import GraphStore
from .values import Thawable, check_int64, freeze, unpack

_DURATION = re.compile(r"(?:(-?\d+) days?, )?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?")
_NO_STRINGS = frozenset({int, float, bool, type(None)})


def _parse_duration(text: str) -> timedelta:
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(text)
    days, hours, minutes, seconds, fraction = match.groups()
    return timedelta(days=int(days or 0), hours=int(hours), minutes=int(minutes), seconds=int(seconds),
                     microseconds=int((fraction or "0").ljust(6, "0")))


_DECODERS = (
    ("date(", date.fromisoformat),
    ("localTime(", time.fromisoformat),
    ("localDateTime(", datetime.fromisoformat),
    ("duration(", _parse_duration),
)


def decode_value(value: Any) -> Any:
    """A JSON property value as a Python value: temporal prefixes decoded at any depth."""
    kind = type(value)
    if kind is str:
        if value.endswith(")"):
            for prefix, parse in _DECODERS:
                if value.startswith(prefix):
                    try:
                        return parse(value[len(prefix):-1])
                    except ValueError:
                        return value
        return value
    if kind is list:
        if set(map(type, value)) <= _NO_STRINGS:
            return value
        return [decode_value(v) for v in value]
    if kind is dict:
        return {k: decode_value(v) for k, v in value.items()}
    return value


def encode_value(value: Any) -> Any:
    """A stored property value as JSON: temporals get their prefixes, tuples become lists."""
    kind = type(value)
    if kind is Thawable:
        return encode_value(value.frozen)
    if kind is bytes:
        return unpack(value)
    if kind is datetime:
        return f"localDateTime({value.isoformat()})"
    if kind is date:
        return f"date({value.isoformat()})"
    if kind is time:
        return f"localTime({value.isoformat()})"
    if kind is timedelta:
        return f"duration({value})"
    if kind is tuple or kind is list:
        if set(map(type, value)) <= _NO_STRINGS:
            return list(value)
        return [encode_value(v) for v in value]
    if kind is dict:
        return {k: encode_value(v) for k, v in value.items()}
    return value


def _element_id(element: dict, key: str) -> int:
    raw = element.get(key)
    if type(raw) is int and raw >= 0:
        return check_int64(raw)
    if type(raw) is str and raw.isdigit():
        return int(raw)
    raise ValueError(f"'{key}' must be an integer or a numeric string, got {raw!r}")


def _properties(element: dict) -> dict:
    """Decoded and frozen properties (the loader's hot path: scalars skip the generic code)."""
    props = element.get("properties")
    if type(props) is not dict:
        raise ValueError(f"'properties' must be a JSON object, got {type(props).__name__}")
    out = {}
    for key, value in props.items():
        kind = type(value)
        if kind is str:
            if value.endswith(")"):
                value = decode_value(value)
        elif kind is not float and kind is not bool:
            if value is None:
                continue
            value = freeze(decode_value(value))
        out[key] = value
    return out


def _labels(element: dict) -> tuple[str, ...]:
    labels = element.get("labels")
    if type(labels) is not list:
        raise ValueError(f"'labels' must be a list of strings, got {labels!r}")
    for label in labels:
        if type(label) is not str or not label:
            raise ValueError(f"a label must be a non-empty string, got {label!r}")
    return tuple(dict.fromkeys(labels))


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: loading creates millions of objects, and the collections
    they trigger would otherwise re-scan the growing graph again and again (~30% of load time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_store(elements: Iterable[Any], *, consume: bool = False) -> GraphStore:
    """A new store holding `elements`; raises GraphFileError naming the first bad element.
    With `consume`, each element of the (list) argument is dropped once stored, to lower peak memory."""
    with _gc_paused():
        return _build_store(elements, consume)


def _build_store(elements: Iterable[Any], consume: bool) -> GraphStore:
    if not isinstance(elements, list | tuple):
        raise GraphFileError(f"expected a JSON array of elements, got {type(elements).__name__}")
    consume = consume and type(elements) is list
    store = GraphStore()
    relationships = []
    for index, element in enumerate(elements):
        if consume:
            elements[index] = None
        try:
            if type(element) is not dict:
                raise ValueError(f"expected a JSON object, got {type(element).__name__}")
            kind = element.get("type")
            if kind == "relationship":
                relationships.append((index, element))
                continue
            if kind != "node":
                raise ValueError(f"'type' must be \"node\" or \"relationship\", got {kind!r}")
            vertex_id = _element_id(element, "id")
            if vertex_id in store.vertices:
                raise ValueError(f"node id {vertex_id} appears twice")
            store.load_vertex(vertex_id, _labels(element), _properties(element))
        except (ValueError, TypeError, OverflowError) as exc:
            raise GraphFileError(f"element {index}: {exc}") from None
    relationships.reverse()  # pop from the end: each element is dropped once stored
    while relationships:
        index, element = relationships.pop()
        try:
            edge_id = _element_id(element, "id")
            if edge_id in store.edges:
                raise ValueError(f"relationship id {edge_id} appears twice")
            ends = []
            for key in ("start", "end"):
                vertex = store.vertices.get(_element_id(element, key))
                if vertex is None:
                    raise ValueError(f"'{key}' {element[key]!r} is not the id of a node in this file")
                ends.append(vertex)
            edge_type = element.get("label")
            if type(edge_type) is not str or not edge_type:
                raise ValueError(f"an edge type must be a non-empty string, got {edge_type!r}")
            store.load_edge(edge_id, edge_type, ends[0], ends[1], _properties(element))
        except (ValueError, TypeError, OverflowError) as exc:
            raise GraphFileError(f"element {index}: {exc}") from None
    return store


def read_elements(path: str | Path) -> list:
    """The element list of an `export_util.json` file."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle, _gc_paused():
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise GraphFileError(f"not valid JSON ({exc})") from None


def load_store(path: str | Path) -> GraphStore:
    try:
        return build_store(read_elements(path), consume=True)
    except GraphFileError as exc:
        raise GraphFileError(f"{path}: {exc}") from None


def store_elements(store: GraphStore) -> Iterable[dict]:
    """The store as export elements: all nodes, then all relationships (caller holds a read lock)."""
    for vertex in store.vertices.values():
        yield {"id": vertex.id, "labels": list(vertex.labels),
               "properties": {k: encode_value(v) for k, v in vertex.props.items()}, "type": "node"}
    for edge in store.edges.values():
        yield {"id": edge.id, "start": edge.start.id, "end": edge.end.id, "label": edge.type,
               "properties": {k: encode_value(v) for k, v in edge.props.items()}, "type": "relationship"}


def save_store(store: GraphStore, path: str | Path) -> None:
    """Write the store as an `export_util.json` file, one element per line.

    Through a temporary file beside it and a rename, so `path` is the old file or the whole new one,
    whenever the writer is stopped (an interrupted `embed` saves as it goes); the temporary file does
    not outlive a failed write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with store.lock.read(), tmp.open("w", encoding="utf-8") as handle:
            handle.write("[\n")
            first = True
            for element in store_elements(store):
                if not first:
                    handle.write(",\n")
                handle.write(json.dumps(element, ensure_ascii=False))
                first = False
            handle.write("\n]\n")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
