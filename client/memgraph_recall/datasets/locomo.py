"""Load LoCoMo conversations into one memory graph, with their questions and evidence turns.

Mapping (one conversation = one User):
- `session_N` -> Session `<conv>:S<N>`; its turns -> Actions `<conv>:<dia_id>` (e.g. `conv-26:D1:3`)
  directly under the Session. Turn `i` of a session is timestamped at the session's
  `session_N_date_time` plus `i` minutes, so the order inside a session survives.
- `speaker` keeps the speaker's name; `speaker_a`'s turns are `user_message`, `speaker_b`'s are
  `assistant_message` (LoCoMo has two people, the graph shape has a user and an agent side).
- An image turn gets its caption appended: `<text> [shares a photo: <blip_caption>]`.
- `session_N_observation` -> facts: one Entity per speaker per conversation, a content-addressed
  Chunk per source turn that the speaker's entity is MENTIONED_IN (sources = that turn), and one
  relationship per observation from the speaker's entity to the User, with `source_id` = the first
  evidence turn, `text` = the sentence, `valid_at` = the session date and `role` = the speaker.
  The relation type comes from `relation_type(sentence)`: a fixed keyword table over the sentence's
  verbs (see `RELATION_TYPES`), so the user_facts lane has a few meaningful types to rank; each
  User adopts an ontology describing them.
- Evidence ids are repaired when the intent is unambiguous (`D8:6; D9:17`, `D:11:26`) and dropped
  when they name no turn of the conversation; both are counted in `LocomoData.evidence_issues`.

Both the per-conversation files (`conv-26.json`) and the combined `locomo10.json` list are accepted;
`python -m memgraph_recall.datasets.locomo locomo10.json FOLDER` writes the list as one file per
conversation (what `scripts/eval_locomo.py --conversations` takes to choose conversations).
"""

import json
import re
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from memgraph_recall.datasets.memory_graph import MemoryGraph, Ref

ONTOLOGY_MODEL = "locomo-observations"

# (type, description, trigger words). The first type with a trigger among the sentence's words wins,
# so more specific intents (plans, events) come before broad ones (likes, feels). Written from
# general English verbs for life events, not from the benchmark's questions.
RELATION_TYPES: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("PLANS_TO", "an intention, plan, wish or upcoming event",
     frozenset("plans planning plan intends wants hopes considering upcoming soon next".split())),
    ("ATTENDED", "an event, place, trip or group the person went to or took part in",
     frozenset("attended attends went visited visiting traveled travelled trip joined participated "
               "competed concert festival conference parade camping vacation".split())),
    ("CREATED", "something the person made, wrote, painted, built or started",
     frozenset("made created painted wrote written built baked drew designed launched opened "
               "published composed started".split())),
    ("LEARNS", "something the person studies, practises or is learning",
     frozenset("learning learned learns studying studies class classes course school education "
               "training practicing practising lessons".split())),
    ("WORKS_ON", "the person's job, career, business or work project",
     frozenset("work works working job career business company studio store boss colleagues "
               "project employed hired promotion".split())),
    ("FAMILY", "the person's family members and life with them",
     frozenset("family kids children child son daughter husband wife mother mom father dad parents "
               "brother sister grandma grandmother grandfather married".split())),
    ("OWNS", "a pet, possession or purchase of the person",
     frozenset("owns bought pet pets dog dogs cat cats puppy car house".split())),
    ("SUPPORTS", "people or causes the person helps, supports or volunteers for",
     frozenset("supports support supporting volunteering volunteers volunteered helps helping "
               "charity donated mentoring encourages".split())),
    ("LIKES", "things the person enjoys, loves, likes or is passionate about",
     frozenset("enjoys enjoyed loves love likes favorite favourite passion passionate fan hobby "
               "interest interested".split())),
    ("BELIEVES", "the person's beliefs, values and opinions",
     frozenset("believes values thinks considers importance important belief".split())),
    ("FEELS", "how the person feels about something",
     frozenset("feels felt finds happy proud excited stressed grateful appreciates inspired "
               "motivated".split())),
)
DEFAULT_RELATION = ("MENTIONED", "anything else the person said about themselves")

_DATE_FORMAT = "%I:%M %p on %d %B %Y"
_EVIDENCE_TOKEN = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class LocomoQuestion:
    """One QA item, with its evidence already mapped to action ids of this conversation."""

    conversation: str
    user_id: str
    index: int
    question: str
    answer: str | None
    category: int
    evidence: tuple[str, ...]
    today: date


@dataclass(frozen=True)
class EvidenceIssue:
    """An evidence reference that was repaired (`resolved` set) or dropped (`resolved` empty)."""

    conversation: str
    where: str
    raw: str
    resolved: tuple[str, ...]


@dataclass
class LocomoData:
    elements: list[dict]
    questions: list[LocomoQuestion]
    users: list[str]
    evidence_issues: list[EvidenceIssue] = field(default_factory=list)
    turns: int = 0
    facts: int = 0


def relation_type(sentence: str) -> str:
    """The relation type of an observation sentence, by the keyword table `RELATION_TYPES`."""
    words = set(re.findall(r"[a-z]+", sentence.lower()))
    for name, _description, triggers in RELATION_TYPES:
        if words & triggers:
            return name
    return DEFAULT_RELATION[0]


def relation_descriptions() -> list[tuple[str, str]]:
    """Every relation type the loader can emit, with its description (the adopted ontology)."""
    return [(name, description) for name, description, _ in RELATION_TYPES] + [DEFAULT_RELATION]


def parse_session_time(value: str) -> datetime:
    """Parse LoCoMo's `1:56 pm on 8 May, 2023` (the comma is optional)."""
    text = " ".join(str(value).replace(",", " ").split())
    try:
        return datetime.strptime(text, _DATE_FORMAT)
    except ValueError:
        raise ValueError(f"session date {value!r}: expected a time like '1:56 pm on 8 May, 2023'") from None


def action_id(conversation: str, dia_id: str) -> str:
    return f"{conversation}:{dia_id}"


def session_id(conversation: str, number: int) -> str:
    return f"{conversation}:S{number}"


def read_conversations(path: Path) -> list[tuple[str, dict]]:
    """(name, flat conversation dict) for a per-conversation file or a `locomo10.json` list."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return [(Path(path).stem, data)]
    if isinstance(data, list):
        out = []
        for sample in data:
            flat = {**sample["conversation"], **sample.get("observation", {}), "qa": sample["qa"]}
            out.append((str(sample["sample_id"]), flat))
        return out
    raise ValueError(f"{path}: expected a LoCoMo conversation object or a list of samples")


def find_conversation(folder: Path, name: str) -> dict | None:
    """Conversation `name` (e.g. `conv-26`) as `read_conversations` gives it: from `<name>.json`, else
    from a file of `folder` that lists it (the benchmark's `locomo10.json`); None when none has it."""
    own = folder / f"{name}.json"
    paths = [own] if own.is_file() else sorted(folder.glob("*.json")) if folder.is_dir() else []
    for path in paths:
        for found, conv in read_conversations(path):
            if found == name:
                return conv
    return None


def _sessions(conv: dict) -> list[tuple[int, list[dict], datetime]]:
    """Non-empty sessions in number order, each with its parsed start time."""
    out = []
    for key, turns in conv.items():
        match = _SESSION_KEY.match(key)
        if not match or not turns:
            continue
        number = int(match.group(1))
        when = conv.get(f"session_{number}_date_time")
        if not when:
            raise ValueError(f"session_{number} has turns but no session_{number}_date_time")
        out.append((number, turns, parse_session_time(when)))
    return sorted(out, key=lambda item: item[0])


def turn_text(turn: dict) -> str:
    caption = turn.get("blip_caption")
    text = str(turn.get("text", ""))
    return f"{text} [shares a photo: {caption}]" if caption else text


def resolve_evidence(conversation: str, where: str, raw: Any, known: set[str],
                     issues: list[EvidenceIssue]) -> tuple[str, ...]:
    """Map raw evidence (a dia_id, a list, or a malformed string) to known action ids, recording issues."""
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        tokens = [t for t in re.split(r"[;,\s]+", str(item)) if t]
        resolved: list[str] = []
        for token in tokens:
            match = _EVIDENCE_TOKEN.match(token)
            dia = f"D{match.group(1)}:{match.group(2)}" if match else None
            if dia is not None and dia in known:
                resolved.append(dia)
        if resolved != [str(item)]:
            issues.append(EvidenceIssue(conversation, where, str(item),
                                        tuple(action_id(conversation, d) for d in resolved)))
        out.extend(action_id(conversation, d) for d in resolved if action_id(conversation, d) not in out)
    return tuple(out)


def _add_conversation(graph: MemoryGraph, name: str, conv: dict, data: LocomoData) -> None:
    sessions = _sessions(conv)
    if not sessions:
        raise ValueError(f"conversation {name}: no sessions with turns")
    user = graph.user(name)
    data.users.append(name)
    graph.ontology(user, ONTOLOGY_MODEL, [{"label": label, "description": description}
                                          for label, description in relation_descriptions()])
    speaker_a = conv.get("speaker_a")
    actions: dict[str, Ref] = {}
    texts: dict[str, str] = {}
    session_dates: dict[int, date] = {}
    for number, turns, start in sessions:
        session = graph.session(user, session_id(name, number))
        session_dates[number] = start.date()
        for i, turn in enumerate(turns):
            dia = str(turn["dia_id"])
            if dia in actions:
                raise ValueError(f"conversation {name}: dia_id {dia} appears twice")
            text = turn_text(turn)
            kind = "user_message" if turn.get("speaker") == speaker_a else "assistant_message"
            actions[dia] = graph.message(session, action_id(name, dia), text, start + timedelta(minutes=i),
                                         action_type=kind, speaker=turn.get("speaker"))
            texts[dia] = text
            data.turns += 1
    known = set(actions)
    entities: dict[str, Ref] = {}
    for number, _turns, _start in sessions:
        for speaker, observations in (conv.get(f"session_{number}_observation") or {}).items():
            for k, (sentence, raw) in enumerate(observations):
                where = f"session_{number}_observation/{speaker}/{k}"
                evidence = resolve_evidence(name, where, raw, known, data.evidence_issues)
                if not evidence:
                    continue
                entity = entities.get(speaker)
                if entity is None:
                    entity = entities[speaker] = graph.entity(speaker)
                for source in evidence:
                    dia = source[len(name) + 1:]
                    graph.mention(entity, graph.chunk(actions[dia], texts[dia]), source)
                graph.fact(entity, relation_type(sentence), user, source_id=evidence[0], text=sentence,
                           valid_at=session_dates[number], role=speaker)
                data.facts += 1
    today = sessions[-1][2].date()
    for index, qa in enumerate(conv.get("qa", [])):
        evidence = resolve_evidence(name, f"qa/{index}", qa.get("evidence", []), known, data.evidence_issues)
        answer = qa.get("answer", qa.get("adversarial_answer"))
        data.questions.append(LocomoQuestion(
            conversation=name, user_id=name, index=index, question=str(qa["question"]),
            answer=None if answer is None else str(answer), category=int(qa["category"]),
            evidence=evidence, today=today))


def build_graph(paths: Sequence[Path] | Iterable[Path], only: Collection[str] | None = None) -> LocomoData:
    """All conversations of `paths` (or those named in `only`) in ONE graph (ids prefixed by
    conversation), with their questions."""
    graph = MemoryGraph()
    data = LocomoData(elements=[], questions=[], users=[])
    for path in paths:
        for name, conv in read_conversations(Path(path)):
            if only is not None and name not in only:
                continue
            if name in data.users:
                raise ValueError(f"conversation {name} given twice (from {path})")
            _add_conversation(graph, name, conv, data)
    data.elements = graph.elements()
    return data


def split_conversations(path: Path, folder: Path) -> list[Path]:
    """Write each conversation of `path` to `<folder>/<name>.json` in the per-conversation form."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, conv in read_conversations(path):
        target = folder / f"{name}.json"
        target.write_text(json.dumps(conv, ensure_ascii=False), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m memgraph_recall.datasets.locomo LOCOMO10_JSON FOLDER")
    for written in split_conversations(Path(sys.argv[1]), Path(sys.argv[2])):
        print(written)
