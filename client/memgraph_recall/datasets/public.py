"""Where the public benchmark data lives: one setting, `MEMGRAPH_RECALL_DATA`, for tests and scripts.

The data is not part of the project and is never copied into it (LoCoMo is CC BY-NC 4.0, LongMemEval
has its own licence): each user fetches it once into a folder with `locomo/` and `longmemeval/`. By
default that folder is `shared/data` beside the checkout, where the project's own machines keep it.
"""

import os
from pathlib import Path

from memgraph_recall.locate import checkout_root

DATA_ENV = "MEMGRAPH_RECALL_DATA"
#: Where each data set comes from, as a line a skipped test or a script can print.
SOURCES = {
    "locomo": "data/locomo10.json from github.com/snap-research/locomo (LoCoMo; read as is)",
    "longmemeval": "longmemeval_s_cleaned.json, linked from the README of github.com/xiaowu0162/LongMemEval "
                   "(huggingface.co/datasets/xiaowu0162/longmemeval-cleaned)",
}


def data_folder() -> Path:
    """`$MEMGRAPH_RECALL_DATA`, else `shared/data` beside the checkout (beside the working directory
    when the package is installed from a wheel)."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    root = checkout_root() or Path.cwd()
    return root.parent / "shared" / "data"


def dataset_folder(name: str) -> Path:
    """The folder of one data set (`locomo`, `longmemeval`) inside `data_folder()`."""
    if name not in SOURCES:
        raise ValueError(f"dataset: expected one of {', '.join(SOURCES)}, got {name!r}")
    return data_folder() / name


def missing(name: str) -> str:
    """Why something needing data set `name` cannot run, and where to get the data."""
    return (f"{name} data not found in {dataset_folder(name)}: put {SOURCES[name]} there, or set "
            f"{DATA_ENV} to a folder holding {name}/")
