"""Refuse bad input before the embedded runtime loads anything: the bundled sample takes seconds to
embed, so a typo in a config key must not wait for it.

The checks are the recall module's own. Its config parser and ceilings (`recall_lib.config`,
`recall_lib.limits`, pure Python beside `recall.py`) are imported from the same `query_modules/` the
runtime loads, so a key, type or ceiling the module changes is checked here the same way. Only for the
embedded runtime, whose ceilings come from this process's environment: a server applies its own.
"""

import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from memgraph_recall.locate import query_modules_dir


def recall_lib(name: str) -> ModuleType:
    """`recall_lib.<name>`, imported from the packaged `query_modules/` as the embedded runtime does."""
    import importlib

    folder = str(query_modules_dir())
    if folder not in sys.path:
        sys.path.append(folder)  # where `Runtime` puts it, so both import the same recall_lib
    return importlib.import_module(f"recall_lib.{name}")


def check_question(question: str) -> None:
    """The module's rules for a question: not blank, within RECALL_MAX_QUESTION_CHARS, valid Unicode."""
    ceiling = recall_lib("limits").Ceilings.from_env().question_chars
    if not question.strip():
        raise ValueError(f"question: expected the question to recall memory for, got {question!r}")
    if len(question) > ceiling:
        raise ValueError(f"question: expected at most {ceiling} characters (RECALL_MAX_QUESTION_CHARS), "
                         f"got {len(question)}")
    if not recall_lib("embedding").encodable(question):
        raise ValueError("question: expected valid Unicode text, got a lone surrogate")


def check_config(config: Mapping[str, Any], procedure: str) -> None:
    """`config` through the module's own parser for `procedure` (`render`, `lanes`, `embed`, `status`)."""
    limits = recall_lib("limits")
    recall_lib("config").parse_config(config, procedure, limits.Ceilings.from_env())
