"""Embedded runtime: run Memgraph Python query modules in-process, without a Memgraph server.

`Runtime(modules_dir)` loads a folder of query modules the way Memgraph does, over named databases,
each an in-memory `GraphStore` loaded from (and saved to) Memgraph's `export_util.json` format.
"""

import logging

from .api_counts import ApiCounts
from .errors import (
    ArgumentError,
    ConstraintViolation,
    GraphFileError,
    ProcedureError,
    ProcedureNotFoundError,
    QueryError,
    QueryTimeoutError,
    ResultError,
    TypeConstraintViolation,
)
from .host import Runtime
from .snapshots import EdgeRef, GraphPath, Node, Relationship, VertexRef
from .store import GraphStore

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "ApiCounts",
    "ArgumentError",
    "ConstraintViolation",
    "EdgeRef",
    "GraphFileError",
    "GraphPath",
    "GraphStore",
    "Node",
    "ProcedureError",
    "ProcedureNotFoundError",
    "QueryError",
    "QueryTimeoutError",
    "Relationship",
    "ResultError",
    "Runtime",
    "TypeConstraintViolation",
    "VertexRef",
]
