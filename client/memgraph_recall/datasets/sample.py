"""The bundled sample memory: three users of one assistant, written for the demo and the client tests.

Each user has three hand-written sessions holding what the demo asks about (with facts and notes),
among about 45 generated everyday sessions (`chatter`, a few hundred messages per user), so recall has
to choose.

Kept as code built with `MemoryGraph` rather than as a JSON export: the builder defines the memory
shape in one place, so the sample can never drift from it, and the text stays reviewable in a diff.
It carries no vectors: `memgraph-recall demo` embeds it with `recall.embed`, as a real deployment
would catch up on new messages.

What makes scoping visible: all three users talk to the same Agent (linked from every session, as
SDK adapters share Agents by name), two of them mention the same `Lisbon` entity and both keep a
`Tuesday` routine, and the Agent holds a note of its own that belongs to no user and must never
be recalled.
"""

from dataclasses import dataclass
from datetime import date, datetime, timezone

from memgraph_recall.datasets import chatter
from memgraph_recall.datasets.memory_graph import MemoryGraph, Ref

AGENT = "pocket-assistant"
CHATTER_SEED, CHATTER_SESSIONS = 7, 45
CHATTER_SPAN = (datetime(2024, 1, 2, tzinfo=timezone.utc), datetime(2024, 5, 19, tzinfo=timezone.utc))
USERS = ("maya", "tom", "priya")


@dataclass(frozen=True)
class DemoQuestion:
    user: str
    question: str
    today: date


# Asked by `memgraph-recall demo`: the first two are asked as two users each to show scoping.
DEMO_QUESTIONS = (
    DemoQuestion("maya", "When is my trip to Lisbon and who am I going with?", date(2024, 5, 20)),
    DemoQuestion("tom", "When is my trip to Lisbon and who am I going with?", date(2024, 5, 20)),
    DemoQuestion("maya", "What should you keep in mind when suggesting food for me?", date(2024, 5, 20)),
    DemoQuestion("tom", "What should you keep in mind when suggesting food for me?", date(2024, 5, 20)),
    DemoQuestion("priya", "How many weddings did I go to this year?", date(2024, 6, 30)),
)

# The demo narrows the lanes so each answer fits a screen (the defaults show 24 TURN rows).
# `--config`/`--set` override these.
DEMO_CONFIG = {"memories_k": 1, "turns_k": 2, "text_k": 2, "entities_k": 2, "edges_per_entity": 2,
               "facts_k": 3, "fact_turns_k": 2, "user_fact_types": 1, "user_facts_k": 4}

# (session_id, [(speaker_role, ISO timestamp, text), ...]) per user: "user" or "assistant".
_SESSIONS: dict[str, list[tuple[str, list[tuple[str, str, str]]]]] = {
    "maya": [
        ("maya-s1", [
            ("user", "2024-03-02T09:14:00+00:00",
             "I just signed the offer from Fieldnote, the design studio. I start on the 18th of March."),
            ("assistant", "2024-03-02T09:14:20+00:00",
             "Congratulations! Do you want a checklist for your first week at Fieldnote?"),
            ("user", "2024-03-02T09:16:00+00:00",
             "Yes please. Also remind me that I'm vegetarian when you suggest team lunch places, "
             "and that I'm allergic to peanuts, it's a real allergy, not a preference."),
            ("assistant", "2024-03-02T09:16:30+00:00",
             "Noted: vegetarian, and a peanut allergy. I'll keep both in mind for any food suggestion."),
        ]),
        ("maya-s2", [
            ("user", "2024-04-10T19:02:00+00:00",
             "My sister Ana and I booked flights to Lisbon! We fly out on June 14th and come back on "
             "the 21st."),
            ("assistant", "2024-04-10T19:02:40+00:00",
             "Lovely. Would you like ideas for neighbourhoods to stay in?"),
            ("user", "2024-04-10T19:05:00+00:00",
             "We want somewhere walkable with good tram access. Ana loves old bookshops, so Chiado "
             "sounds right.\n\nAlso I should practise my Portuguese before we go, I only know how to "
             "order coffee."),
        ]),
        ("maya-s3", [
            ("user", "2024-05-06T07:45:00+00:00",
             "Biscuit, my beagle, has a vet appointment on Tuesday so I'll work from home that day."),
            ("assistant", "2024-05-06T07:45:30+00:00",
             "I'll block Tuesday morning for Biscuit's vet visit."),
            ("user", "2024-05-06T07:47:00+00:00",
             "Thanks. Every Tuesday evening I have a pottery class at seven, so don't book anything then."),
        ]),
    ],
    "tom": [
        ("tom-s1", [
            ("user", "2024-02-11T18:30:00+01:00",
             "I signed up for the Rotterdam marathon in April. My goal is to finish under four hours."),
            ("assistant", "2024-02-11T18:31:00+01:00",
             "Great goal. Do you want a weekly plan that builds up your long runs?"),
            ("user", "2024-02-11T18:33:00+01:00",
             "Yes, but my left knee gets sore after 25 kilometres, so keep the long runs careful."),
        ]),
        ("tom-s2", [
            ("user", "2024-04-22T12:10:00+01:00",
             "Work is sending me to a logistics conference in Lisbon from the 9th to the 12th of "
             "September. My colleague Rui is coming with me."),
            ("assistant", "2024-04-22T12:10:50+01:00",
             "Noted. Shall I look for a hotel near the conference centre?"),
            ("user", "2024-04-22T12:13:00+01:00",
             "Near the river would be nice. And for dinners there: I love spicy food, the hotter the "
             "better, but I can't eat shellfish."),
        ]),
        ("tom-s3", [
            ("user", "2024-05-14T21:05:00+01:00",
             "My daughter Ella has her first piano recital on Tuesday at six. I promised I'd be there."),
            ("assistant", "2024-05-14T21:05:30+01:00",
             "I'll keep Tuesday evening free for Ella's recital."),
            ("user", "2024-05-14T21:07:00+01:00",
             "I finished the marathon in 3 hours 52 minutes, by the way! The knee held up."),
        ]),
    ],
    "priya": [
        ("priya-s1", [
            ("user", "2024-03-16T10:00:00+05:30",
             "Back from my cousin Meera's wedding in Jaipur. Three days of celebrations, I'm exhausted."),
            ("assistant", "2024-03-16T10:00:40+05:30",
             "That sounds wonderful. Rest up! Anything you want to remember from it?"),
            ("user", "2024-03-16T10:02:00+05:30",
             "I want to send Meera and her husband a framed photo from the sangeet as a gift."),
        ]),
        ("priya-s2", [
            ("user", "2024-05-26T16:20:00+05:30",
             "Went to my college friend Sam's wedding in Pune yesterday. Second wedding this year!"),
            ("assistant", "2024-05-26T16:20:30+05:30",
             "Two weddings already. How was it?"),
            ("user", "2024-05-26T16:22:00+05:30",
             "Beautiful. I also finally repotted the tomato seedlings on the balcony this morning; "
             "six plants made it."),
        ]),
        ("priya-s3", [
            ("user", "2024-06-18T20:40:00+05:30",
             "My book club meets on Tuesday and we're reading a novel set in Lisbon this month, so I "
             "need to finish it by then."),
            ("assistant", "2024-06-18T20:41:00+05:30",
             "Want me to set a reading reminder for the weekend?"),
            ("user", "2024-06-18T20:42:00+05:30",
             "Yes. And please remember Miso, my cat, needs her flea treatment on the first of each month."),
        ]),
    ],
}

# (user, message index in order of all their messages, head, TYPE, tail, fact sentence, confidence).
# head/tail: "user" for the user themself, else an entity text.
_FACTS: list[tuple[str, int, str, str, str, str, float]] = [
    ("maya", 0, "user", "WORKS_AT", "Fieldnote", "I start at Fieldnote, a design studio, on 18 March.", 0.95),
    ("maya", 2, "user", "HAS_DIET", "vegetarian", "Maya is vegetarian.", 0.9),
    ("maya", 2, "user", "ALLERGIC_TO", "peanuts", "Maya has a real peanut allergy.", 0.97),
    ("maya", 4, "user", "TRAVELS_TO", "Lisbon", "Maya flies to Lisbon on 14 June, back on 21 June.", 0.93),
    ("maya", 4, "user", "TRAVELS_WITH", "Ana", "Maya travels to Lisbon with her sister Ana.", 0.9),
    ("maya", 4, "Ana", "SISTER_OF", "user", "Ana is Maya's sister.", 0.92),
    ("maya", 7, "Biscuit", "PET_OF", "user", "Biscuit is Maya's beagle.", 0.94),
    ("maya", 9, "user", "ATTENDS", "pottery class", "Maya has a pottery class every Tuesday at seven.", 0.85),
    ("tom", 0, "user", "REGISTERED_FOR", "Rotterdam marathon", "Tom signed up for the Rotterdam marathon.",
     0.92),
    ("tom", 2, "user", "HAS_CONDITION", "sore left knee", "Tom's left knee gets sore after 25 km.", 0.8),
    ("tom", 3, "user", "TRAVELS_TO", "Lisbon", "Tom goes to a conference in Lisbon, 9-12 September.", 0.93),
    ("tom", 3, "user", "TRAVELS_WITH", "Rui", "Tom's colleague Rui goes to Lisbon with him.", 0.88),
    ("tom", 5, "user", "LIKES", "spicy food", "Tom loves spicy food.", 0.9),
    ("tom", 5, "user", "ALLERGIC_TO", "shellfish", "Tom can't eat shellfish.", 0.86),
    ("tom", 6, "Ella", "CHILD_OF", "user", "Ella is Tom's daughter; her piano recital is on Tuesday.", 0.9),
    ("tom", 8, "user", "FINISHED", "Rotterdam marathon", "Tom finished the marathon in 3:52.", 0.95),
    ("priya", 0, "user", "ATTENDED_WEDDING", "Meera", "Priya attended her cousin Meera's wedding in Jaipur.",
     0.94),
    ("priya", 3, "user", "ATTENDED_WEDDING", "Sam", "Priya attended her friend Sam's wedding in Pune.", 0.94),
    ("priya", 5, "user", "GROWS", "tomatoes", "Priya grows six tomato plants on her balcony.", 0.85),
    ("priya", 6, "user", "MEMBER_OF", "book club", "Priya's book club meets on Tuesday.", 0.8),
    ("priya", 8, "Miso", "PET_OF", "user", "Miso is Priya's cat.", 0.93),
]

# Entities mentioned in a message but carrying no fact of their own there.
_MENTIONS: list[tuple[str, int, str]] = [
    ("maya", 6, "Chiado"),
    ("maya", 6, "Ana"),
    ("priya", 6, "Lisbon"),
]

_MEMORIES: dict[str, list[tuple[str, str, str]]] = {
    "maya": [("notes/food.md", "2024-03-02T09:20:00+00:00",
              "Food: vegetarian. Severe peanut allergy: always check dishes for peanuts and satay sauce.")],
    "tom": [("notes/running.md", "2024-05-14T21:10:00+01:00",
             "Running: finished Rotterdam 2024 in 3:52. Left knee: keep long runs under 25 km.")],
}

_AGENT_NOTE = ("Agent self-check: shared across all sessions; this note belongs to no user and must never "
               "appear in anyone's recall.")


def build(chatter_sessions: int = CHATTER_SESSIONS) -> MemoryGraph:
    """Build the sample memory graph (no vectors); `elements()` gives the export to load.
    `chatter_sessions=0` leaves out the generated chatter (the integration fixture's fixed vectors)."""
    graph = MemoryGraph()
    entities: dict[str, Ref] = {}
    agent: Ref | None = None
    for user_id in _SESSIONS:
        agent = _add_user(graph, user_id, entities, chatter_sessions)
    if agent is not None:
        graph.message(agent, "agent-note-1", _AGENT_NOTE, "2024-01-01T00:00:00+00:00",
                      action_type="assistant_message", speaker="Assistant")
    return graph


def _add_user(graph: MemoryGraph, user_id: str, entities: dict[str, Ref],
              chatter_sessions: int) -> Ref | None:
    """One user's sessions, messages, facts, mentions and notes; returns the shared Agent."""
    user = graph.user(user_id)
    agent: Ref | None = None
    actions: list[tuple[Ref, str]] = []
    for session_id, messages in _SESSIONS[user_id]:
        session = graph.session(user, session_id)
        agent = graph.agent(session, AGENT)
        for index, (role, timestamp, text) in enumerate(messages):
            ref = graph.message(session, f"{session_id}-m{index + 1}", text, timestamp,
                                action_type=f"{role}_message",
                                speaker=user_id.capitalize() if role == "user" else "Assistant")
            actions.append((ref, text))
    chunks: dict[int, Ref] = {}

    def mention(name: str, index: int) -> Ref:
        if name not in entities:
            entities[name] = graph.entity(name)
        if index not in chunks:
            chunks[index] = graph.chunk(*actions[index])
        graph.mention(entities[name], chunks[index], actions[index][0].key)
        return entities[name]

    for who, index, head, rel_type, tail, sentence, confidence in _FACTS:
        if who == user_id:
            ends = [user if name == "user" else mention(name, index) for name in (head, tail)]
            graph.fact(ends[0], rel_type, ends[1], source_id=actions[index][0].key, text=sentence,
                       valid_at=messages_date(_SESSIONS[user_id], index), role="user", confidence=confidence)
    for who, index, name in _MENTIONS:
        if who == user_id:
            mention(name, index)
    for session_id, messages in chatter.sessions(user_id, CHATTER_SEED, chatter_sessions, *CHATTER_SPAN):
        session = graph.session(user, session_id)
        graph.agent(session, AGENT)
        for index, (role, timestamp, text) in enumerate(messages):
            graph.message(session, f"{session_id}-m{index + 1}", text, timestamp,
                          action_type=f"{role}_message",
                          speaker=user_id.capitalize() if role == "user" else "Assistant")
    for number, (path, updated_at, content) in enumerate(_MEMORIES.get(user_id, ()), start=1):
        graph.memory(user, f"{user_id}-mem{number}", path, content, updated_at)
    return agent


def messages_date(sessions: list[tuple[str, list[tuple[str, str, str]]]], index: int) -> date:
    """The date of a user's `index`-th message across their sessions (a fact's `valid_at`)."""
    timestamps = [timestamp for _, messages in sessions for _, timestamp, _ in messages]
    return date.fromisoformat(timestamps[index][:10])


def elements(chatter_sessions: int = CHATTER_SESSIONS) -> list[dict]:
    """The sample as `export_util.json` elements, ready for `RecallClient.embedded(graph=...)`."""
    return build(chatter_sessions).elements()
