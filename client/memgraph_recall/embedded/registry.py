"""What a query module registered: procedures and functions with their Cypher signatures.

The mgp decorators register into `loading_module()`, the registry of the module the host is
importing right now (Memgraph's `_mgp._MODULE`), so a helper imported by a module can never register
procedures under another module's name after loading ends.
"""

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cached_property
from typing import Any

from .cypher_types import CypherType
from .values import plain_value

_context = threading.local()


@dataclass
class Argument:
    name: str
    type: CypherType
    has_default: bool = False
    default: Any = None  # stored form (see store.freeze); rebuilt for every call


@dataclass
class Registration:
    """A registered procedure (`kind` "read"/"write") or function (`kind` "function")."""

    module: str
    name: str
    func: Callable[..., Any]
    takes_ctx: bool
    kind: str
    args: list[Argument] = field(default_factory=list)
    results: dict[str, CypherType] = field(default_factory=dict)
    deprecated: frozenset[str] = frozenset()

    @cached_property
    def full_name(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def is_write(self) -> bool:
        return self.kind == "write"

    @cached_property
    def required(self) -> int:
        """How many leading arguments have no default (arguments never change after registration)."""
        return sum(1 for a in self.args if not a.has_default)

    def signature(self) -> str:
        """`m.p(a :: STRING, k = 10 :: INTEGER) :: (x :: FLOAT)`, as `mg.procedures()` prints it."""
        args = ", ".join(
            f"{a.name} = {cypher_literal(a.default)} :: {a.type.name}" if a.has_default
            else f"{a.name} :: {a.type.name}"
            for a in self.args
        )
        head = f"{self.full_name}({args})"
        if self.kind == "function":
            return head
        fields = ", ".join(
            f"{name} :: {ctype.name}" + (" (deprecated)" if name in self.deprecated else "")
            for name, ctype in self.results.items()
        )
        return f"{head} :: ({fields})"


class ModuleRegistry:
    """Procedures, functions and transformations of one loaded module."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.procedures: dict[str, Registration] = {}
        self.functions: dict[str, Registration] = {}
        self.transformations: dict[str, Callable[..., Any]] = {}

    def add(self, spec: Registration) -> None:
        table = self.functions if spec.kind == "function" else self.procedures
        if spec.name in table:
            raise ValueError(f"'{spec.full_name}' is already registered in this module")
        table[spec.name] = spec


@dataclass
class Context:
    """Who is running module code on this thread: the module's name and where its logs go."""

    module: str
    log_sink: Callable[[str, str, str], None] | None
    registry: ModuleRegistry | None = None  # set only while importing the module


@contextmanager
def running(ctx: Context) -> Iterator[None]:
    previous = getattr(_context, "value", None)
    _context.value = ctx
    try:
        yield
    finally:
        _context.value = previous


def current() -> Context | None:
    return getattr(_context, "value", None)


def loading_module() -> ModuleRegistry:
    ctx = current()
    if ctx is None or ctx.registry is None:
        raise RuntimeError("mgp decorators register callables only while a query module is being loaded")
    return ctx.registry


def cypher_literal(value: Any) -> str:
    """A stored default written as a Cypher literal (`null`, `"x"`, `[1, 2]`, `{}`)."""
    value = plain_value(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {cypher_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, datetime | date | time | timedelta):
        return repr(str(value))
    return repr(value)
