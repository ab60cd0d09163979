"""Cypher types of procedure signatures: names as Memgraph prints them, and value checks.

Values are classified by exact Python type (Memgraph's marshalling is exact: a bool is not an
INTEGER, an int is not a FLOAT). Graph objects carry a `_cypher_kind` class attribute (NODE,
RELATIONSHIP, PATH) so live `mgp` objects, argument refs and result snapshots classify alike.
"""

from datetime import date, datetime, time, timedelta
from typing import Any

_KIND_BY_TYPE = {
    bool: "BOOLEAN",
    int: "INTEGER",
    float: "FLOAT",
    str: "STRING",
    list: "LIST",
    tuple: "LIST",
    dict: "MAP",
    date: "DATE",
    time: "LOCAL_TIME",
    timedelta: "DURATION",
}


def value_kind(value: Any) -> str | None:
    """The Cypher kind of a value, "NULL" for None, or None if Memgraph cannot represent it."""
    if value is None:
        return "NULL"
    kind = type(value)
    found = _KIND_BY_TYPE.get(kind)
    if found is not None:
        return found
    if kind is datetime:
        return "LOCAL_DATE_TIME" if value.tzinfo is None else "ZONED_DATE_TIME"
    return getattr(kind, "_cypher_kind", None)


class CypherType:
    """A simple (scalar or graph) type: satisfied by values of exactly these kinds."""

    __slots__ = ("name", "_kinds")

    def __init__(self, name: str, kinds: frozenset[str]) -> None:
        self.name = name
        self._kinds = kinds

    def satisfies(self, value: Any) -> bool:
        return value_kind(value) in self._kinds

    def __repr__(self) -> str:
        return f"<CypherType {self.name}>"


class AnyType(CypherType):
    """ANY: every value except null."""

    def __init__(self) -> None:
        super().__init__("ANY", frozenset())

    def satisfies(self, value: Any) -> bool:
        return value is not None


class ListType(CypherType):
    """LIST OF X: a list whose every element satisfies X."""

    __slots__ = ("element",)

    def __init__(self, element: CypherType) -> None:
        super().__init__(f"LIST OF {element.name}", frozenset({"LIST"}))
        self.element = element

    def satisfies(self, value: Any) -> bool:
        if value_kind(value) != "LIST":
            return False
        check = self.element.satisfies
        return all(check(item) for item in value)


class NullableType(CypherType):
    """X?: null or a value satisfying X (a nullable list prints as `LIST? OF X`)."""

    __slots__ = ("inner",)

    def __init__(self, inner: CypherType) -> None:
        if isinstance(inner, ListType):
            name = f"LIST? OF {inner.element.name}"
        else:
            name = f"{inner.name}?"
        super().__init__(name, frozenset())
        self.inner = inner

    def satisfies(self, value: Any) -> bool:
        return value is None or self.inner.satisfies(value)


def nullable(inner: CypherType) -> CypherType:
    """Wrap in NullableType unless already nullable (Memgraph never nests them)."""
    return inner if isinstance(inner, NullableType) else NullableType(inner)


def _simple(name: str, *kinds: str) -> CypherType:
    return CypherType(name, frozenset(kinds or (name,)))


ANY = AnyType()
BOOLEAN = _simple("BOOLEAN")
STRING = _simple("STRING")
INTEGER = _simple("INTEGER")
FLOAT = _simple("FLOAT")
NUMBER = _simple("NUMBER", "INTEGER", "FLOAT")
MAP = _simple("MAP", "MAP", "NODE", "RELATIONSHIP")
NODE = _simple("NODE")
RELATIONSHIP = _simple("RELATIONSHIP")
PATH = _simple("PATH")
DATE = _simple("DATE")
LOCAL_TIME = _simple("LOCAL_TIME")
LOCAL_DATE_TIME = _simple("LOCAL_DATE_TIME")
ZONED_DATE_TIME = _simple("ZONED_DATE_TIME")
DURATION = _simple("DURATION")
