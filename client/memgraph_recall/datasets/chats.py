"""Your own chat history as memory: a JSON Lines format, its checks, and a builder for the graph.

Why a format of our own: recall reads the graph the context-graph SDKs write (users, sessions,
Actions, entities, facts), but a team arriving with a chat log has none of that. One JSON object per
line is what every chat export turns into in a few lines of code, streams, and lets a bad record be
named by its line. Two kinds of line:

    {"user": "maya", "session": "s1", "time": "2024-04-10T19:02:00+00:00", "role": "user",
     "text": "My sister Ana and I booked flights to Lisbon!", "id": "m1"}
    {"user": "maya", "fact": {"head": "@user", "relation": "TRAVELS_TO", "tail": "Lisbon",
     "source": "m1", "text": "Maya flies to Lisbon on June 14th.", "valid_at": "2024-06-14"}}

A message needs `user`, `session`, `time` (ISO 8601, with an offset or without) and `text`; `role` is
`user` (default) or `assistant`; `speaker` a display name (who spoke in a group chat); `id` its
action_id, unique in the database (default: a digest of the other fields, so importing the same
file twice adds nothing). A fact is what an extractor (an LLM, spaCy, the SDKs' own) read from a
message: `head` and `tail` are entity names, `@user` the user themself, `source` the id of the
message it came from. recall runs no extractor: without facts the entity and fact lanes are empty
and recall ranks the messages by meaning and by words (LongMemEval's figures are measured so).
"""

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memgraph_recall.datasets.memory_graph import MemoryGraph, Ref, chunk_hash
from memgraph_recall.files import READ_ERRORS, unreadable

USER_ENDPOINT = "@user"  # a fact's head or tail that is the user, not an entity
ROLES = {"user": "user_message", "assistant": "assistant_message"}
MESSAGE_KEYS = frozenset({"user", "session", "time", "role", "speaker", "text", "id"})
MESSAGE_REQUIRED = ("user", "session", "time", "text")
FACT_KEYS = frozenset({"head", "relation", "tail", "source", "text", "valid_at"})
MAX_NAME = 512  # characters of a user, session, id, speaker or entity name
MAX_TEXT = 1_000_000  # characters of one message
MAX_ERRORS = 20  # errors listed before the rest are only counted
_RELATION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_STRUCTURAL = frozenset({"HAD_SESSION", "HAS_ACTION", "HAS_AGENT", "HAS_CHUNK", "MENTIONED_IN", "HAS_MEMORY",
                         "ADOPTED"})


class ChatFormatError(ValueError):
    """Lines of a chat file that are not what the format says, each named by number and reason."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        shown = problems[:MAX_ERRORS]
        more = f"; and {len(problems) - MAX_ERRORS} more" if len(problems) > MAX_ERRORS else ""
        super().__init__(f"{source}: {len(problems)} bad line{'s' * (len(problems) != 1)}, nothing was "
                         f"written: " + "; ".join(shown) + more)


@dataclass(frozen=True)
class ChatMessage:
    user: str
    session: str
    time: datetime
    text: str
    role: str = "user"
    speaker: str | None = None
    id: str = ""
    line: int = 0  # where it was read, for errors found later (0: built in code)

    @property
    def action_type(self) -> str:
        return ROLES[self.role]

    def timestamp(self) -> str:
        """As stored: ISO 8601 text, which Memgraph keeps as given and recall parses with its offset."""
        return self.time.isoformat()


@dataclass(frozen=True)
class ChatFact:
    user: str
    head: str
    relation: str
    tail: str
    source: str
    text: str
    valid_at: date | None = None
    line: int = 0


@dataclass
class ChatHistory:
    """Messages and facts, checked as they are added; `elements()` is the graph recall reads.

    The public builder: `add_message` and `add_fact` take what a line of the file holds and raise
    `ValueError` naming the field; `read_chat_file` fills one from a file, naming bad lines.
    """

    messages: list[ChatMessage] = field(default_factory=list)
    facts: list[ChatFact] = field(default_factory=list)
    _ids: dict[str, ChatMessage] = field(default_factory=dict, repr=False)
    _digests: Counter = field(default_factory=Counter, repr=False)

    def add_message(self, user: str, session: str, time: str | datetime, text: str, role: str = "user",
                    speaker: str | None = None, id: str | None = None, line: int = 0) -> ChatMessage:
        user, session = _name("user", user), _name("session", session)
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"text: expected a non-empty string, got {text!r:.60}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"text: at most {MAX_TEXT:,} characters, got {len(text):,}")
        if role not in ROLES:
            raise ValueError(f"role: expected 'user' or 'assistant', got {role!r:.60}")
        speaker = None if speaker is None else _name("speaker", speaker)
        moment = _moment(time)
        if id is None:
            digest = _digest(user, session, moment.isoformat(), role, text)
            self._digests[digest] += 1
            id = f"{digest}-{self._digests[digest]}" if self._digests[digest] > 1 else digest
        id = _name("id", id)
        if id in self._ids:
            first = self._ids[id]
            raise ValueError(f"id: {id!r} is already the id of another message"
                             + (f" (line {first.line})" if first.line else ""))
        message = ChatMessage(user, session, moment, text, role, speaker, id, line)
        self._ids[id] = message
        self.messages.append(message)
        return message

    def add_fact(self, user: str, head: str, relation: str, tail: str, source: str, text: str,
                 valid_at: str | date | None = None, line: int = 0) -> ChatFact:
        user = _name("user", user)
        head, tail, source = _name("fact.head", head), _name("fact.tail", tail), _name("fact.source", source)
        if not isinstance(relation, str) or not _RELATION.fullmatch(relation) or relation in _STRUCTURAL:
            raise ValueError(f"fact.relation: expected a relationship type (letters, digits and _, not "
                             f"starting with a digit, not one of the graph's own), got {relation!r:.60}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"fact.text: expected the fact as a non-empty sentence, got {text!r:.60}")
        if valid_at is not None and not isinstance(valid_at, date):
            try:
                valid_at = date.fromisoformat(valid_at)
            except (TypeError, ValueError):
                raise ValueError(f"fact.valid_at: expected an ISO date YYYY-MM-DD, got {valid_at!r:.60}") \
                    from None
        fact = ChatFact(user, head, relation, tail, source, text, valid_at, line)
        self.facts.append(fact)
        return fact

    def problems_with_sources(self) -> list[str]:
        """Facts whose `source` is no message of the same user in this history (an import checks them
        against the target's messages too: `importing.plan`)."""
        problems = []
        for fact in self.facts:
            owner = self._ids[fact.source].user if fact.source in self._ids else None
            if owner is None:
                problems.append(_at(fact.line, f"fact.source: no message has the id {fact.source!r}"))
            elif owner != fact.user:
                problems.append(_at(fact.line, f"fact.source: message {fact.source!r} belongs to another "
                                               "user, not to this fact's user"))
        return problems

    def elements(self) -> list[dict]:
        """The history as `export_util.json` elements: load with `RecallClient.embedded(elements)`,
        save for `--graph`, or `memgraph-recall load` onto a server (a new graph; see `importing` to
        add to one)."""
        problems = self.problems_with_sources()
        if problems:
            raise ChatFormatError("chat history", problems)
        graph = MemoryGraph()
        graph.recall_meta()
        write_history(graph, self)
        return graph.elements()

    def users(self) -> list[str]:
        return list(dict.fromkeys(m.user for m in self.messages))


@dataclass
class Known:
    """The vertices a graph already holds that an import reuses rather than duplicates; `write_history`
    adds to it what it makes. Empty for a new graph."""

    users: dict[str, Ref] = field(default_factory=dict)  # by user_id
    sessions: dict[tuple[str, str], Ref] = field(default_factory=dict)  # by (user_id, session_id)
    entities: dict[str, Ref] = field(default_factory=dict)  # by name
    actions: dict[str, tuple[Ref, str]] = field(default_factory=dict)  # action_id -> (vertex, text)
    chunks: dict[str, Ref] = field(default_factory=dict)  # by content hash
    chunk_links: set[tuple[int, int]] = field(default_factory=set)  # (Action id, Chunk id) with HAS_CHUNK


def write_history(graph: MemoryGraph, history: ChatHistory, known: Known | None = None) -> Known:
    """Add `history` to `graph`, reusing what `known` holds; returns `known` with what was made."""
    known = Known() if known is None else known
    for message in history.messages:
        user = known.users.get(message.user)
        if user is None:
            user = known.users[message.user] = graph.user(message.user)
        session = known.sessions.get((message.user, message.session))
        if session is None:
            session = known.sessions[(message.user, message.session)] = graph.session(user, message.session)
        ref = graph.message(session, message.id, message.text, message.timestamp(),
                            action_type=message.action_type, speaker=message.speaker,
                            session_id=message.session)
        known.actions[message.id] = (ref, message.text)
    for fact in history.facts:
        source, text = known.actions[fact.source]
        chunk = _chunk_of(graph, known, source, text)
        ends = []
        for name in (fact.head, fact.tail):
            if name == USER_ENDPOINT:
                ends.append(known.users[fact.user])
                continue
            entity = known.entities.get(name)
            if entity is None:
                entity = known.entities[name] = graph.entity(name)
            graph.mention(entity, chunk, fact.source)
            ends.append(entity)
        graph.fact(ends[0], fact.relation, ends[1], source_id=fact.source, text=fact.text,
                   valid_at=fact.valid_at, role="user")
    return known


def _chunk_of(graph: MemoryGraph, known: Known, action: Ref, text: str) -> Ref:
    """The content-addressed Chunk of a message's text, linked from it once."""
    key = chunk_hash(text)
    chunk = known.chunks.get(key)
    if chunk is None:
        chunk = known.chunks[key] = graph.node(["Chunk"], hash=key, text=text)
    if (action.id, chunk.id) not in known.chunk_links:
        graph.relationship(action, "HAS_CHUNK", chunk)
        known.chunk_links.add((action.id, chunk.id))
    return chunk


def read_chat_file(path: str | Path) -> ChatHistory:
    """A chat file's history, or `ChatFormatError` naming every bad line (nothing is half-read).

    Bytes that are not UTF-8 are kept as lone surrogates ("surrogateescape") rather than stopping the
    read, so `read_chat_lines` names the line that holds them and goes on checking the rest.
    """
    path = Path(path)
    try:
        with path.open(encoding="utf-8", errors="surrogateescape") as handle:
            return read_chat_lines(handle, str(path))
    except READ_ERRORS as exc:
        raise ValueError(f"{path}: {unreadable(exc, 'a JSON Lines chat file')}") from None


_UNDECODED = re.compile("[\udc80-\udcff]")  # a byte "surrogateescape" could not decode


def read_chat_lines(lines: Iterable[str], source: str = "chat lines") -> ChatHistory:
    history, problems, seen = ChatHistory(), [], False
    for number, line in enumerate(lines, start=1):
        seen = True
        if not line.strip():
            continue
        undecoded = _UNDECODED.search(line)
        if undecoded:
            byte = ord(undecoded.group()) - 0xDC00
            problems.append(_at(number, f"not UTF-8 text (byte 0x{byte:02x} at character "
                                        f"{undecoded.start() + 1})"))
            continue
        try:
            _add_line(history, json.loads(line), number)
        except json.JSONDecodeError as exc:
            problems.append(_at(number, f"not JSON ({exc.msg} at column {exc.colno})"))
        except ValueError as exc:
            problems.append(_at(number, str(exc)))
    if problems:
        raise ChatFormatError(source, problems)
    if not history.messages and not history.facts:
        what = "holds only blank lines" if seen else "is empty"
        raise ValueError(f"{source}: {what}, nothing was written: expected JSON Lines, one message per "
                         f"line with {', '.join(MESSAGE_REQUIRED)}, and optionally fact lines "
                         "(see docs/import.md)")
    return history


def _add_line(history: ChatHistory, record: Any, line: int) -> None:
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    if "fact" in record:
        unknown = set(record) - {"user", "fact"}
        fact = record["fact"]
        if not isinstance(fact, dict):
            raise ValueError(f"fact: expected an object with {', '.join(sorted(FACT_KEYS))}")
        unknown |= {f"fact.{key}" for key in set(fact) - FACT_KEYS}
        missing = [f"fact.{key}" for key in ("head", "relation", "tail", "source", "text") if key not in fact]
        _check_keys(unknown, missing + (["user"] if "user" not in record else []))
        history.add_fact(record["user"], fact["head"], fact["relation"], fact["tail"], fact["source"],
                         fact["text"], fact.get("valid_at"), line=line)
        return
    missing = [key for key in MESSAGE_REQUIRED if key not in record]
    _check_keys(set(record) - MESSAGE_KEYS, missing)
    history.add_message(record["user"], record["session"], record["time"], record["text"],
                        record.get("role", "user"), record.get("speaker"), record.get("id"), line=line)


def _check_keys(unknown: set[str], missing: list[str]) -> None:
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    if unknown:
        raise ValueError(f"unknown key{'s' * (len(unknown) > 1)} {', '.join(sorted(unknown))} (a message has "
                         f"{', '.join(sorted(MESSAGE_KEYS))}; a fact line has user and fact)")


def _name(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what}: expected a non-empty string, got {value!r:.60}")
    if len(value) > MAX_NAME:
        raise ValueError(f"{what}: at most {MAX_NAME} characters, got {len(value)}")
    return value


def _moment(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"time: expected an ISO 8601 date and time such as 2024-04-10T19:02:00+00:00, got "
                         f"{value!r:.60}") from None


def _digest(*fields: str) -> str:
    return "m-" + hashlib.sha256("\x1f".join(fields).encode("utf-8")).hexdigest()[:20]


def _at(line: int, message: str) -> str:
    return f"line {line}: {message}" if line else message


def iter_lines(history: ChatHistory) -> Iterator[str]:
    """The history written back as JSON Lines: what `read_chat_file` reads."""
    for m in history.messages:
        record = {"user": m.user, "session": m.session, "time": m.timestamp(), "role": m.role, "text": m.text,
                  "id": m.id}
        if m.speaker is not None:
            record["speaker"] = m.speaker
        yield json.dumps(record, ensure_ascii=False)
    for f in history.facts:
        fact = {"head": f.head, "relation": f.relation, "tail": f.tail, "source": f.source, "text": f.text}
        if f.valid_at is not None:
            fact["valid_at"] = f.valid_at.isoformat()
        yield json.dumps({"user": f.user, "fact": fact}, ensure_ascii=False)
