"""Graphs in the upstream memory shape, written as Memgraph `export_util.json` elements."""
