"""Graphs in the upstream memory shape, written as Memgraph `export_util.json` elements."""

from memgraph_recall.datasets.public import data_folder

__all__ = ["data_folder"]
