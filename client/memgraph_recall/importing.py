"""`memgraph-recall import`: add a chat history (`datasets.chats`) to a graph file or to a server.

Both targets follow one plan. First every line is checked (`read_chat_file`); then the target is
asked what it already holds of the history's message ids: a message already there with the same
user, session and text is skipped (so importing a file again, or a longer version of it, adds only
what is new), and an id held by another user, another session or other text is refused, naming the
line, before anything is written. recall hides facts sourced from an action_id two users hold, so
letting one through would silently cost both users their facts.

A graph file is rewritten whole, through a temporary file and a rename: it is either as before or
complete, and an import that adds nothing leaves it untouched. On a server the messages are one
query (one transaction: all or none) and the facts one query per relationship type, each MERGEd so
a repeat writes nothing twice; a failure between them says so, and the same import run again
finishes the job.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from memgraph_recall.datasets.chats import (
    USER_ENDPOINT,
    ChatFact,
    ChatFormatError,
    ChatHistory,
    Known,
    write_history,
)
from memgraph_recall.datasets.memory_graph import MemoryGraph, Ref, chunk_hash

_STRUCTURE_TYPES = frozenset({"HAD_SESSION", "HAS_ACTION", "HAS_AGENT", "HAS_CHUNK", "MENTIONED_IN",
                              "HAS_MEMORY", "ADOPTED"})
_STRUCTURE_LABELS = frozenset({"User", "Session", "Action", "Agent", "Chunk", "Memory", "OntologyVersion",
                               "RecallMeta"})


@dataclass(frozen=True)
class Held:
    """What the target holds under one action_id: its user, session and text (None where unknown)."""

    user: str | None
    session: str | None
    text: str | None


@dataclass(frozen=True)
class ImportReport:
    messages: int  # written
    messages_present: int  # skipped: already there
    facts: int
    facts_present: int
    users: tuple[str, ...]

    @property
    def added(self) -> bool:
        return bool(self.messages or self.facts)

    def line(self) -> str:
        names = ", ".join(self.users[:5]) + (", ..." if len(self.users) > 5 else "")
        users = f"{_count(len(self.users), 'user')} ({names})"
        present = (f"{_count(self.messages_present, 'message')} and {_count(self.facts_present, 'fact')} "
                   "were already there")
        if not self.added:
            return f"nothing new for {users}: {present}"
        imported = f"imported {_count(self.messages, 'message')} and {_count(self.facts, 'fact')} for {users}"
        return f"{imported} ({present})" if self.messages_present or self.facts_present else imported


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def plan(history: ChatHistory, held: dict[str, Held], facts_held: set[tuple[str, str, str]],
         source: str) -> tuple[ChatHistory, ImportReport]:
    """What of `history` to write, given what the target holds; `ChatFormatError` for any conflict."""
    problems, new = [], ChatHistory()
    present = 0
    for message in history.messages:
        there = held.get(message.id)
        if there is None:
            new.messages.append(message)
        elif there == Held(message.user, message.session, message.text):
            present += 1
        else:
            whose = "another user's or another session's message" if (there.user, there.session) != \
                (message.user, message.session) else "a message with other text"
            problems.append(f"line {message.line}: id {message.id!r} is already {whose} in the target; "
                            "give this message another id")
    ours = {m.id: m.user for m in history.messages}
    facts_present = 0
    for fact in history.facts:
        owner = ours.get(fact.source) or (held[fact.source].user if fact.source in held else None)
        if owner != fact.user:
            reason = "no message has" if owner is None else "another user's message has"
            problems.append(f"line {fact.line}: fact.source: {reason} the id {fact.source!r}")
        elif (fact.source, fact.relation, fact.text) in facts_held:
            facts_present += 1
        else:
            new.facts.append(fact)
    if problems:
        raise ChatFormatError(source, problems)
    report = ImportReport(len(new.messages), present, len(new.facts), facts_present, tuple(history.users()))
    return new, report


# -- into a graph file -----------------------------------------------------------------------------
def import_into_file(history: ChatHistory, path: Path, source: str) -> ImportReport:
    """Add `history` to the `export_util.json` file `path` (made, with a RecallMeta, if absent)."""
    from memgraph_recall.embedded.interchange import build_store, read_elements

    elements = read_elements(path) if path.exists() else []
    build_store(elements)  # refuses a broken file before anything is planned
    known, held, facts_held, has_meta = _index(elements)
    new, report = plan(history, held, facts_held, source)
    if not report.added:  # an import run again: the file stays exactly as it was
        return report
    nodes = [e["id"] for e in elements if e.get("type") == "node"]
    relationships = [e["id"] for e in elements if e.get("type") != "node"]
    graph = MemoryGraph(max(map(int, nodes), default=-1) + 1, max(map(int, relationships), default=-1) + 1)
    if not has_meta:
        graph.recall_meta()
    write_history(graph, new, known)
    added = graph.elements()
    combined = [e for e in elements if e.get("type") == "node"] + [e for e in added if e["type"] == "node"] \
        + [e for e in elements if e.get("type") != "node"] + [e for e in added if e["type"] != "node"]
    build_store(combined)
    temporary = path.with_name(f".{path.name}.import-{os.getpid()}")
    try:
        temporary.write_text(json.dumps(combined, ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
    return report


def _index(elements: list[dict]) -> tuple[Known, dict[str, Held], set[tuple[str, str, str]], bool]:
    """What a graph file holds that an import reuses: users, sessions, entities, actions, chunks."""
    known, nodes = Known(), {}
    has_meta = False
    for e in elements:
        if e.get("type") != "node":
            continue
        labels, props, ref = set(e.get("labels") or ()), e.get("properties") or {}, Ref(int(e["id"]))
        nodes[ref.id] = (labels, props)
        has_meta |= "RecallMeta" in labels
        if "User" in labels and isinstance(props.get("user_id"), str):
            known.users.setdefault(props["user_id"], ref)
        elif "Chunk" in labels and isinstance(props.get("hash"), str):
            known.chunks.setdefault(props["hash"], ref)
        elif not labels & _STRUCTURE_LABELS and isinstance(props.get("text"), str):
            known.entities.setdefault(props["text"], ref)
    owner_of_session, parent_of_action = {}, {}
    facts_held = set()
    for e in elements:
        if e.get("type") == "node":
            continue
        start, end, kind = int(e["start"]), int(e["end"]), e.get("label")
        if kind == "HAD_SESSION":
            owner_of_session[end] = start
        elif kind == "HAS_ACTION":
            parent_of_action.setdefault(end, []).append(start)
        elif kind == "HAS_CHUNK":
            known.chunk_links.add((start, end))
        elif kind not in _STRUCTURE_TYPES:
            props = e.get("properties") or {}
            facts_held.add((props.get("source_id"), kind, props.get("text")))
    held = {}
    for vertex, (labels, props) in nodes.items():
        if "Action" not in labels or not isinstance(props.get("action_id"), str):
            continue
        parents = parent_of_action.get(vertex, [])
        session = parents[0] if len(parents) == 1 and "Session" in nodes[parents[0]][0] else None
        user = owner_of_session.get(session) if session is not None else None
        user_id = nodes[user][1].get("user_id") if user is not None else None
        session_id = nodes[session][1].get("session_id") if session is not None else None
        held[props["action_id"]] = Held(user_id, session_id, props.get("text"))
        known.actions[props["action_id"]] = (Ref(vertex), props.get("text") or "")
        if user_id is not None and session is not None:
            known.sessions.setdefault((user_id, session_id), Ref(session))
    return known, held, facts_held, has_meta


# -- onto a server ---------------------------------------------------------------------------------
HELD_QUERY = ("UNWIND $ids AS id MATCH (a:Action {action_id: id}) "
              "OPTIONAL MATCH (s:Session)-[:HAS_ACTION]->(a) OPTIONAL MATCH (u:User)-[:HAD_SESSION]->(s) "
              "RETURN id, u.user_id AS user, s.session_id AS session, a.text AS text")
MESSAGES_QUERY = ("UNWIND $sessions AS row MERGE (u:User {user_id: row.user}) "
                  "MERGE (u)-[:HAD_SESSION]->(s:Session {session_id: row.session}) "
                  "WITH s, row UNWIND row.messages AS m "
                  "MERGE (a:Action {action_id: m.action_id}) MERGE (s)-[:HAS_ACTION]->(a) SET a += m")
_MENTION = ("MERGE ({v}:Entity {{text: f.{v}}}) MERGE ({v})-[m{v}:MENTIONED_IN]->(c) "
            "ON CREATE SET m{v}.sources = [f.source] "
            "ON MATCH SET m{v}.sources = CASE WHEN f.source IN m{v}.sources THEN m{v}.sources "
            "ELSE m{v}.sources + [f.source] END ")
FACTS_QUERY = ("UNWIND $facts AS f MATCH (a:Action {{action_id: f.source}}) "
               "MATCH (u:User {{user_id: f.user}}) "
               "MERGE (c:Chunk {{hash: f.hash}}) ON CREATE SET c.text = a.text MERGE (a)-[:HAS_CHUNK]->(c) "
               "{head}{tail}MERGE ({h})-[r:`{relation}` {{source_id: f.source, text: f.text}}]->({t}) "
               "SET r.valid_at = f.valid_at, r.role = 'user'")


def import_over_bolt(history: ChatHistory, runner, source: str) -> ImportReport:
    """Add `history` to the server behind `runner` (a `BoltBackend`); see the module docstring."""
    ids = list(dict.fromkeys([m.id for m in history.messages] + [f.source for f in history.facts]))
    rows = runner.run("import: looking up the history's ids", HELD_QUERY, {"ids": ids})
    held = {row["id"]: Held(row["user"], row["session"], row["text"]) for row in rows}
    new, report = plan(history, held, set(), source)
    sessions: dict[tuple[str, str], list[dict]] = {}
    for m in new.messages:
        sessions.setdefault((m.user, m.session), []).append(
            {k: v for k, v in {"action_id": m.id, "action_type": m.action_type, "text": m.text,
                               "timestamp": m.timestamp(), "speaker": m.speaker,
                               "session_id": m.session}.items() if v is not None})
    if sessions:
        rows = [{"user": user, "session": session, "messages": messages}
                for (user, session), messages in sessions.items()]
        runner.run("import: writing the messages", MESSAGES_QUERY, {"sessions": rows})
    texts = {m.id: m.text for m in history.messages} | {k: v.text or "" for k, v in held.items()}
    groups: dict[tuple[str, bool, bool], list[dict]] = {}
    for fact in new.facts:
        key = (fact.relation, fact.head == USER_ENDPOINT, fact.tail == USER_ENDPOINT)
        groups.setdefault(key, []).append(_fact_row(fact, texts[fact.source]))
    for number, ((relation, head_is_user, tail_is_user), rows) in enumerate(groups.items()):
        query = FACTS_QUERY.format(relation=relation, head="" if head_is_user else _MENTION.format(v="h"),
                                   tail="" if tail_is_user else _MENTION.format(v="t"),
                                   h="u" if head_is_user else "h", t="u" if tail_is_user else "t")
        try:
            runner.run(f"import: writing the {relation} facts", query, {"facts": rows})
        except Exception as exc:
            done = ", ".join(r for r, *_ in list(groups)[:number]) or "none"
            raise type(exc)(f"{exc}. The {report.messages} messages were written, and the facts of these "
                            f"types: {done}; run the same import again to add the rest (it writes nothing "
                            "twice)") from exc
    return report


def _fact_row(fact: ChatFact, source_text: str) -> dict:
    return {"user": fact.user, "source": fact.source, "text": fact.text, "valid_at": fact.valid_at,
            "hash": chunk_hash(source_text), "h": fact.head, "t": fact.tail}
