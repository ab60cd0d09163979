"""BEAM (Tavakoli et al., "Beyond a Million Tokens") as recall graphs: long user-assistant project chats.

Only its 500K tier is read, and only two files per chat (`<i>/chat.json`, `<i>/probing_questions/
probing_questions.json`); the data is fetched at development time and never committed (the repository
states no licence). Each chat is one user's history: a list of batches, each batch a session dated
by the `time_anchor` (`%B-%d-%Y`) its first message carries (the batch's own `time_anchor` is empty);
a batch's `turns` are exchanges, each a list of messages `{role, id, content}`, `id` unique in the
chat. User messages end with a ` ->-> n,m` marker of the generator's plan, stripped here. Messages
get one minute each from their session's date, in order, so recall's dates and order are BEAM's.

Questions map ten types to lists; a question's `source_chat_ids` (a list of ints, or a map of such
lists) are its evidence message ids. Abstention questions have none and are not scored.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from memgraph_recall.datasets.memory_graph import MemoryGraph

QUESTION_TYPES = ("contradiction_resolution", "information_extraction", "instruction_following",
                  "knowledge_update", "multi_session_reasoning", "preference_following", "temporal_reasoning",
                  "event_ordering", "summarization", "abstention")
#: Reported apart from the lookups: they need 11-13 evidence messages on average.
GATHERING_TYPES = ("event_ordering", "summarization")
LOOKUP_TYPES = tuple(t for t in QUESTION_TYPES if t not in GATHERING_TYPES and t != "abstention")
_MARKER = re.compile(r"\s*->->\s*\d+(?:\s*,\s*\d+)*\s*$")
_ROLES = {"user": "user_message", "assistant": "assistant_message"}


@dataclass(frozen=True)
class BeamTurn:
    action_id: str
    session_id: str
    role: str
    text: str


@dataclass(frozen=True)
class BeamQuestion:
    user_id: str
    key: str  # unique over the file: chat, type and position
    question_type: str
    question: str
    evidence: tuple[str, ...]  # action ids
    today: date


@dataclass
class BeamChat:
    user_id: str
    turns: list[BeamTurn] = field(default_factory=list)
    questions: list[BeamQuestion] = field(default_factory=list)


@dataclass
class BeamData:
    elements: list[dict]
    chats: list[BeamChat]

    @property
    def questions(self) -> list[BeamQuestion]:
        return [q for chat in self.chats for q in chat.questions]


def chat_folders(root: Path, chats: Sequence[int] | None = None) -> list[Path]:
    """The chat folders under `root` (BEAM's `chats/500K`), by number; `chats` picks some."""
    found = sorted((p for p in Path(root).iterdir() if p.is_dir() and p.name.isdigit()),
                   key=lambda p: int(p.name))
    if not found:
        raise ValueError(f"{root}: no numbered chat folders (expected BEAM's chats/500K: 1/chat.json, ...)")
    if chats is None:
        return found
    by_number = {int(p.name): p for p in found}
    missing = [n for n in chats if n not in by_number]
    if missing:
        raise ValueError(f"{root}: no chat {missing[0]} (it has {min(by_number)}..{max(by_number)})")
    return [by_number[n] for n in chats]


def load(root: Path, chats: Sequence[int] | None = None) -> BeamData:
    """The chats under `root` in one graph, each its own user, with their scored questions."""
    graph = MemoryGraph()
    graph.recall_meta()
    loaded = [_add_chat(graph, folder) for folder in chat_folders(root, chats)]
    return BeamData(graph.elements(), loaded)


def _add_chat(graph: MemoryGraph, folder: Path) -> BeamChat:
    user_id = f"beam-{folder.name}"
    chat = BeamChat(user_id)
    user = graph.user(user_id)
    batches = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
    last = None
    for number, batch in enumerate(batches, start=1):
        messages = [m for exchange in batch["turns"] for m in exchange]
        anchor = next((m["time_anchor"] for m in messages if m.get("time_anchor")), None)
        day = datetime.strptime(anchor, "%B-%d-%Y").replace(tzinfo=timezone.utc) if anchor else \
            (last + timedelta(days=1) if last else datetime(2024, 1, 1, tzinfo=timezone.utc))
        start = day.replace(hour=9)
        last = day
        session_id = f"{user_id}-s{number}"
        session = graph.session(user, session_id)
        for offset, message in enumerate(messages):
            role = message["role"]
            text = message["content"] if role != "user" else _MARKER.sub("", message["content"])
            action_id = f"{user_id}-{message['id']}"
            graph.message(session, action_id, text, (start + timedelta(minutes=offset)).isoformat(),
                          action_type=_ROLES.get(role, f"{role}_message"), session_id=session_id)
            chat.turns.append(BeamTurn(action_id, session_id, role, text))
    today = (last or datetime(2024, 1, 1)).date() + timedelta(days=1)
    probing_file = folder / "probing_questions" / "probing_questions.json"
    probing = json.loads(probing_file.read_text(encoding="utf-8"))
    known = {t.action_id for t in chat.turns}
    for question_type in QUESTION_TYPES:
        for index, item in enumerate(probing.get(question_type, [])):
            ids = _ids(item.get("source_chat_ids"))
            evidence = tuple(dict.fromkeys(f"{user_id}-{i}" for i in ids if f"{user_id}-{i}" in known))
            chat.questions.append(BeamQuestion(user_id, f"{user_id}/{question_type}/{index}", question_type,
                                               item["question"], evidence, today))
    return chat


def _ids(source) -> list[int]:
    """Evidence ids of a question: a list of ints, or a map of lists (first and second statement...)."""
    if source is None:
        return []
    if isinstance(source, dict):
        return [i for part in source.values() for i in _ids(part)]
    if isinstance(source, list):
        return [i for i in source if isinstance(i, int)]
    return []
