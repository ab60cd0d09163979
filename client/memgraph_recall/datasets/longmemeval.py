"""Load LongMemEval questions into one memory graph: each question is its own user with its own history.

LongMemEval (Wu et al., ICLR 2025) gives every question a haystack of ~48 chat sessions between a user
and an assistant; `has_answer` marks the evidence turns. The same file format holds the full releases
(`longmemeval_s_cleaned.json`, `longmemeval_m_cleaned.json`, `longmemeval_oracle.json`) and any subset.

Mapping (one question = one User, `user_id` = `question_id`):
- haystack session `sid` -> Session `<question_id>:<sid>`. Session ids repeat across questions (with other
  dates) and a few questions hold the same session twice, so every id is namespaced by the question and
  a session's second copy in one history becomes `<question_id>:<sid>#2` (a third `#3`, ...).
- turn `i` of a session (counting every turn from 1, as LongMemEval's own turn ids `<sid>_<i>` do) ->
  Action `<session>:<i>` directly under the Session, timestamped at the session's `haystack_dates` entry
  plus `i - 1` minutes so the order inside a session survives; `user` turns are `user_message`,
  `assistant` turns `assistant_message`, and `speaker` holds the role.
- `today` is the day of `question_date`, parsed like the haystack dates (`2023/05/20 (Sat) 02:21`).

No facts or notes: LongMemEval has no extracted facts, so it measures what a user without an extractor
gets. Text is kept verbatim (an empty turn stays empty; recall counts it as malformed).
"""

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from memgraph_recall.datasets.memory_graph import MemoryGraph

#: The benchmark's question types (`question_type`); abstention questions are marked by their id.
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
ABSTENTION_SUFFIX = "_abs"
ACTION_TYPES = {"user": "user_message", "assistant": "assistant_message"}
_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


@dataclass(frozen=True)
class LongMemEvalTurn:
    """One turn of a question's history, with what the benchmark says about it."""

    action_id: str
    session_id: str  # the namespaced Session id
    haystack_session_id: str  # the benchmark's own session id
    position: int  # 1-based, counting every turn of the session
    role: str  # "user" or "assistant"
    has_answer: bool
    chars: int

    @property
    def benchmark_id(self) -> str:
        """LongMemEval's turn id: `<sid>_<i>`; in an answer session a turn without `has_answer` is renamed
        `noans...` (its retrieval code does this, so such a turn's session is not a gold one)."""
        turn_id = f"{self.haystack_session_id}_{self.position}"
        if "answer" in self.haystack_session_id and not self.has_answer:
            turn_id = turn_id.replace("answer", "noans")
        return turn_id


@dataclass(frozen=True)
class LongMemEvalQuestion:
    """One question, its history's turns in order, and its evidence as action ids."""

    question_id: str
    question_type: str
    question: str
    answer: str
    asked_at: datetime
    turns: tuple[LongMemEvalTurn, ...]
    answer_sessions: tuple[str, ...]  # namespaced Session ids of `answer_session_ids` (every copy)

    @property
    def user_id(self) -> str:
        return self.question_id

    @property
    def today(self) -> date:
        return self.asked_at.date()

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith(ABSTENTION_SUFFIX)

    @property
    def evidence(self) -> tuple[str, ...]:
        """Every `has_answer` turn, user or assistant, in history order."""
        return tuple(t.action_id for t in self.turns if t.has_answer)


@dataclass
class LongMemEvalData:
    elements: list[dict]
    questions: list[LongMemEvalQuestion]
    sessions: int = 0
    turns: int = 0
    repeated_sessions: int = 0  # session copies beyond the first within one history
    missing_answer_sessions: list[tuple[str, str]] = field(default_factory=list)  # (question, sid)

    @property
    def users(self) -> list[str]:
        return [q.user_id for q in self.questions]


def parse_date(value: str) -> datetime:
    """Parse LongMemEval's `2023/05/20 (Sat) 02:21`."""
    try:
        return datetime.strptime(str(value).strip(), _DATE_FORMAT)
    except ValueError:
        raise ValueError(f"date {value!r}: expected a date like '2023/05/20 (Sat) 02:21'") from None


def read_questions(path: Path) -> list[dict]:
    """The question items of a LongMemEval file (a JSON list, as the benchmark publishes it)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ValueError(f"{path}: expected a LongMemEval file (a JSON list of question objects)")
    return data


def _require(item: dict, key: str, where: str) -> Any:
    if key not in item:
        raise ValueError(f"{where}: missing {key!r}")
    return item[key]


def _add_question(graph: MemoryGraph, item: dict, data: LongMemEvalData) -> LongMemEvalQuestion:
    qid = str(_require(item, "question_id", "question"))
    sids = _require(item, "haystack_session_ids", qid)
    dates = _require(item, "haystack_dates", qid)
    sessions = _require(item, "haystack_sessions", qid)
    if not len(sids) == len(dates) == len(sessions):
        raise ValueError(f"{qid}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
                         "length")
    user = graph.user(qid)
    copies: Counter = Counter()
    copies_of: dict[str, list[str]] = {}
    turns: list[LongMemEvalTurn] = []
    for sid, when, session in zip(sids, dates, sessions, strict=True):
        sid = str(sid)
        copies[sid] += 1
        namespaced = f"{qid}:{sid}" if copies[sid] == 1 else f"{qid}:{sid}#{copies[sid]}"
        copies_of.setdefault(sid, []).append(namespaced)
        data.repeated_sessions += copies[sid] > 1
        start = parse_date(when)
        ref = graph.session(user, namespaced)
        data.sessions += 1
        for position, turn in enumerate(session, 1):
            role = turn.get("role")
            if role not in ACTION_TYPES:
                raise ValueError(f"{qid}: session {sid} turn {position}: role {role!r}, expected user or "
                                 "assistant")
            text = str(turn.get("content", ""))
            action_id = f"{namespaced}:{position}"
            graph.message(ref, action_id, text, start + timedelta(minutes=position - 1),
                          action_type=ACTION_TYPES[role], speaker=role)
            turns.append(LongMemEvalTurn(action_id, namespaced, sid, position, role,
                                         bool(turn.get("has_answer")), len(text)))
            data.turns += 1
    answer_sessions: list[str] = []
    for sid in item.get("answer_session_ids", []):
        if str(sid) in copies_of:
            answer_sessions += copies_of[str(sid)]
        else:
            data.missing_answer_sessions.append((qid, str(sid)))
    return LongMemEvalQuestion(
        question_id=qid, question_type=str(_require(item, "question_type", qid)),
        question=str(_require(item, "question", qid)), answer=str(item.get("answer", "")),
        asked_at=parse_date(_require(item, "question_date", qid)), turns=tuple(turns),
        answer_sessions=tuple(answer_sessions))


def build_graph(items: Iterable[dict]) -> LongMemEvalData:
    """All questions of `items` in ONE graph, each its own user (ids namespaced by question)."""
    graph = MemoryGraph()
    data = LongMemEvalData(elements=[], questions=[])
    seen: set[str] = set()
    for item in items:
        qid = str(item.get("question_id"))
        if qid in seen:
            raise ValueError(f"question {qid} given twice")
        seen.add(qid)
        data.questions.append(_add_question(graph, item, data))
    data.elements = graph.elements()
    return data


def load(path: Path, question_ids: Sequence[str] | None = None) -> LongMemEvalData:
    """The graph of a LongMemEval file, optionally only the questions `question_ids` names (in file order)."""
    items = read_questions(path)
    if question_ids is not None:
        wanted = set(question_ids)
        items = [item for item in items if str(item.get("question_id")) in wanted]
    return build_graph(items)
