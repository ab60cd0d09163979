"""memgraph-recall: per-user agent-memory recall as Memgraph query-module procedures."""

__version__ = "0.1.0"
