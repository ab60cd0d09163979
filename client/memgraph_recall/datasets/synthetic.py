"""Synthetic agent-memory users for the scale benchmark, deterministic from a seed.

One target user with `messages` messages lives among other users holding at least as many again.
Messages read like chat (one to several sentences on a topic, a few long multi-paragraph answers),
in sessions of 20-50 turns; entities, facts and notes grow in proportion. Vectors have the real
dimension but are not model outputs: each topic has a random unit centroid and everything about that
topic (passages, entities, facts) is the centroid plus noise, normalised. So nearest-neighbour search
has structure to find and costs what it would with real embeddings, while building 100k messages
costs no model time. They are stored with `embedding_model` = the configured model, as
`recall.embed` would have written them.
"""

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np

from memgraph_recall.datasets.memory_graph import MemoryGraph, Ref
from memgraph_recall.locate import PACKAGED_MODEL, query_modules_dir

DIMENSION = 384
_NOISE = 0.9  # noise scale against a unit centroid: cosine to the centroid of about 0.5 at dim 384

# Topic vocabularies (written for this generator): nouns a message on the topic talks about.
TOPICS: dict[str, tuple[str, ...]] = {
    "hiking": ("trail", "summit", "backpack", "boots", "ridge", "campsite", "waterfall", "map"),
    "cooking": ("recipe", "oven", "pasta", "curry", "spices", "dough", "soup", "knife"),
    "work": ("deadline", "manager", "meeting", "report", "client", "promotion", "office", "budget"),
    "music": ("guitar", "concert", "album", "drums", "band", "lyrics", "piano", "playlist"),
    "travel": ("flight", "hotel", "passport", "museum", "beach", "train", "itinerary", "luggage"),
    "health": ("doctor", "sleep", "vitamins", "workout", "knee", "therapy", "diet", "checkup"),
    "family": ("sister", "parents", "cousin", "wedding", "birthday", "grandmother", "nephew", "reunion"),
    "pets": ("puppy", "vet", "leash", "kitten", "aquarium", "treats", "groomer", "parrot"),
    "garden": ("tomatoes", "compost", "roses", "seeds", "greenhouse", "soil", "hedge", "herbs"),
    "finance": ("savings", "mortgage", "taxes", "invoice", "stocks", "pension", "loan", "receipt"),
    "reading": ("novel", "library", "author", "chapter", "poetry", "bookclub", "memoir", "series"),
    "sports": ("match", "coach", "league", "marathon", "racket", "stadium", "training", "referee"),
    "home": ("kitchen", "plumber", "sofa", "paint", "landlord", "furniture", "roof", "garage"),
    "tech": ("laptop", "server", "phone", "backup", "password", "keyboard", "update", "router"),
    "school": ("exam", "professor", "thesis", "homework", "semester", "lecture", "scholarship", "campus"),
    "friends": ("party", "dinner", "roommate", "neighbour", "gossip", "brunch", "gift", "picnic"),
    "art": ("canvas", "sketch", "gallery", "pottery", "sculpture", "watercolor", "easel", "exhibit"),
    "cars": ("engine", "tires", "mechanic", "roadtrip", "insurance", "parking", "battery", "mileage"),
    "volunteering": ("shelter", "fundraiser", "charity", "donation", "food bank", "mentor", "cleanup",
                     "clinic"),
    "movies": ("trailer", "cinema", "director", "sequel", "documentary", "popcorn", "actor", "festival"),
}
_PEOPLE = ("Alex", "Sam", "Priya", "Marco", "Lena", "Tomas", "Aiko", "Nadia", "Owen", "Rosa", "Jonas",
           "Mei", "Ilya", "Grace", "Ravi", "Chloe", "Dario", "Hana", "Felix", "Zoe")
_ADJECTIVES = ("great", "exhausting", "fun", "stressful", "relaxing", "surprising", "long", "quiet",
               "busy", "strange", "lovely", "frustrating")
_TIMES = ("yesterday", "last week", "this morning", "on Saturday", "a few days ago", "last month",
          "tonight", "over the weekend")
_USER_TEMPLATES = (
    "I {verb} the {a} {when} with {person}.",
    "The {a} was {adj}, honestly more {adj2} than I expected.",
    "Do you remember what I told you about the {a}?",
    "{person} thinks I should look at the {a} again before the {b}.",
    "I'm worried about the {a} and the {b}.",
    "Can you remind me to check the {a} {when}?",
    "We finally sorted out the {a}, so the {b} is next.",
    "It's been {adj} since the {a}.",
)
_AGENT_TEMPLATES = (
    "That sounds {adj}; how did the {a} go in the end?",
    "You mentioned the {a} before, and {person} helped with the {b} then.",
    "A good next step could be to plan the {a} around the {b}.",
    "I noted that the {a} matters to you.",
    "Last time you said the {b} was {adj}.",
    "Would it help to write down what you need for the {a}?",
)
_VERBS = ("fixed", "booked", "visited", "tried", "finished", "cancelled", "started", "talked about",
          "bought", "cleaned", "planned", "postponed")
_QUESTION_TEMPLATES = (
    "What did I say about the {a}?",
    "When did I last mention the {a} and the {b}?",
    "Who helped me with the {a}?",
    "How did the {a} go?",
    "What was I worried about regarding the {b}?",
    "Did I ever finish the {a}?",
)
_FACT_TYPES = ("LIKES", "DISLIKES", "VISITED", "OWNS", "WORKS_ON", "PLANS", "KNOWS", "BOUGHT")


@dataclass(frozen=True)
class SyntheticSpec:
    """What to generate; every count is derived from `messages`, everything random from `seed`."""

    messages: int
    seed: int = 0
    other_users: int = 3
    others_factor: float = 1.0
    model: str = PACKAGED_MODEL
    dim: int = DIMENSION
    entities_per_message: float = 0.05
    facts_per_message: float = 0.1
    memories_per_message: float = 0.001
    start: datetime = datetime(2021, 1, 1, 9, 0, tzinfo=timezone.utc)
    recall_meta: bool = True  # the database's RecallMeta, as after `memgraph-recall setup` (first vertex)

    def __post_init__(self) -> None:
        if not isinstance(self.messages, int) or self.messages < 1:
            raise ValueError(f"messages must be an integer >= 1, got {self.messages!r}")
        if self.others_factor < 1.0 and self.other_users > 0:
            raise ValueError(f"others_factor must be >= 1.0 (other users hold at least as much), "
                             f"got {self.others_factor!r}")
        if self.other_users < 0:
            raise ValueError(f"other_users must be >= 0, got {self.other_users!r}")


@dataclass
class UserCounts:
    messages: int = 0
    passages: int = 0
    sessions: int = 0
    entities: int = 0
    facts: int = 0
    memories: int = 0


@dataclass
class SyntheticData:
    """The graph plus what the benchmark needs to compute the exact-search floor for the target user."""

    spec: SyntheticSpec
    elements: list[dict]
    user_id: str
    other_user_ids: list[str]
    counts: dict[str, UserCounts]
    questions: list[str]
    user_texts: list[str] = field(repr=False)
    user_passages: np.ndarray = field(repr=False)
    user_item_vectors: np.ndarray = field(repr=False)  # the target user's entity, fact and note vectors
    centroids: np.ndarray = field(repr=False)
    last_time: datetime = field(repr=False, default=datetime(2021, 1, 1, tzinfo=timezone.utc))


@dataclass(frozen=True)
class SyntheticMessage:
    """One message of a generated session, for writing into a live graph (refresh benchmarks)."""

    action_id: str
    action_type: str
    text: str
    timestamp: str
    passage_embeddings: list[list[float]]


def _split_passages() -> Callable[[str], list[str]]:
    """The module's own passage split, so stored vectors line up with passages exactly as upstream's."""
    folder = str(query_modules_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from recall_lib.passages import split_passages

    return split_passages


class _Writer:
    """Draws text and vectors for one user from a shared random generator."""

    def __init__(self, rng: np.random.Generator, centroids: np.ndarray, split: Callable[[str], list[str]]):
        self.rng = rng
        self.centroids = centroids
        self.split = split
        self.topics = list(TOPICS)

    def vectors(self, topics: np.ndarray) -> np.ndarray:
        """Unit vectors near the given topics' centroids (float32, one row per entry)."""
        noise = self.rng.standard_normal((len(topics), self.centroids.shape[1]), dtype=np.float32)
        rows = self.centroids[topics] + noise * (_NOISE / np.sqrt(self.centroids.shape[1]))
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def sentence(self, templates: tuple[str, ...], topic: int) -> str:
        words = TOPICS[self.topics[topic]]
        rng = self.rng
        a, b = (words[i] for i in rng.choice(len(words), 2, replace=False))
        template = templates[rng.integers(len(templates))]
        adj, adj2 = (_ADJECTIVES[i] for i in rng.choice(len(_ADJECTIVES), 2, replace=False))
        return template.format(a=a, b=b, adj=adj, adj2=adj2, verb=_VERBS[rng.integers(len(_VERBS))],
                               when=_TIMES[rng.integers(len(_TIMES))],
                               person=_PEOPLE[rng.integers(len(_PEOPLE))])

    def message_text(self, topic: int, agent: bool) -> str:
        """1-5 sentences from the user, 1-8 from the agent; 2% of agent answers run to several paragraphs."""
        templates = _AGENT_TEMPLATES if agent else _USER_TEMPLATES
        if agent and self.rng.random() < 0.02:
            sizes = self.rng.integers(4, 9, size=int(self.rng.integers(3, 7)))
            return "\n\n".join(self.sentences(templates, topic, int(n)) for n in sizes)
        count = min(int(self.rng.geometric(0.3 if agent else 0.45)), 8 if agent else 5)
        return self.sentences(templates, topic, count)

    def sentences(self, templates: tuple[str, ...], topic: int, count: int) -> str:
        return " ".join(self.sentence(templates, topic) for _ in range(count))


def _session_lengths(rng: np.random.Generator, messages: int) -> list[int]:
    """Session sizes of 20-50 turns summing exactly to `messages` (the last one may be shorter)."""
    sizes: list[int] = []
    left = messages
    while left > 0:
        size = min(int(rng.integers(20, 51)), left)
        sizes.append(size)
        left -= size
    return sizes


@dataclass
class _BuiltUser:
    counts: UserCounts
    last_time: datetime
    texts: list[str] = field(default_factory=list)  # kept for the target user only
    vectors: list[np.ndarray] = field(default_factory=list)  # passage rows, kept likewise
    item_vectors: list[np.ndarray] = field(default_factory=list)  # entity, fact and note rows, likewise


def _add_user(graph: MemoryGraph, spec: SyntheticSpec, writer: _Writer, user_id: str, messages: int,
              keep: bool) -> _BuiltUser:
    """One user's sessions, messages, entities, facts and notes. `keep` returns texts and vectors."""
    rng = writer.rng
    counts = UserCounts()
    user = graph.user(user_id)
    when = spec.start
    actions: list[tuple[Ref, str, datetime]] = []
    texts: list[str] = []
    kept_vectors: list[np.ndarray] = []
    for number, size in enumerate(_session_lengths(rng, messages)):
        session = graph.session(user, f"{user_id}:s{number}")
        counts.sessions += 1
        when += timedelta(hours=int(rng.integers(6, 60)))
        topics = rng.integers(len(writer.topics), size=3)[rng.integers(3, size=size)]  # 3 topics a session
        bodies = [writer.message_text(int(topics[turn]), agent=bool(turn % 2)) for turn in range(size)]
        splits = [writer.split(body) for body in bodies]
        vectors = writer.vectors(np.repeat(topics, [len(s) for s in splits]))
        row = 0
        for turn, (body, passages) in enumerate(zip(bodies, splits, strict=True)):
            stamp = when + timedelta(minutes=turn)
            action_id = f"{user_id}:s{number}:t{turn}"
            ref = graph.message(session, action_id, body, stamp.isoformat(),
                                action_type="assistant_message" if turn % 2 else "user_message",
                                passage_embeddings=vectors[row:row + len(passages)],
                                embedding_model=spec.model)
            actions.append((ref, body, stamp))
            row += len(passages)
            counts.messages += 1
            counts.passages += len(passages)
            if keep:
                texts.append(body)
        if keep:
            kept_vectors.append(vectors)
        when += timedelta(minutes=size)
    items = [*_add_entities_and_facts(graph, spec, writer, user, actions, counts),
             *_add_memories(graph, spec, writer, user, user_id, counts, when)]
    return _BuiltUser(counts, when, texts, kept_vectors, items if keep else [])


def _add_entities_and_facts(graph: MemoryGraph, spec: SyntheticSpec, writer: _Writer, user: Ref,
                            actions: list[tuple[Ref, str, datetime]], counts: UserCounts) -> list[np.ndarray]:
    """Entities mentioned in the user's messages, and facts between them (or them and the User).
    Returns their vectors."""
    rng = writer.rng
    n_entities = max(1, round(len(actions) * spec.entities_per_message))
    n_facts = max(1, round(len(actions) * spec.facts_per_message))
    entity_topics = rng.integers(len(writer.topics), size=n_entities)
    entity_vectors = writer.vectors(entity_topics)
    entities: list[Ref] = []
    names: list[str] = []
    for i, topic in enumerate(entity_topics):
        words = TOPICS[writer.topics[int(topic)]]
        name = f"{_PEOPLE[i % len(_PEOPLE)]}'s {words[(i // len(_PEOPLE)) % len(words)]} #{i}"
        entities.append(graph.entity(name, embedding=entity_vectors[i], embedding_model=spec.model))
        names.append(name)
        counts.entities += 1
    heads = rng.integers(n_entities, size=n_facts)
    tails = rng.integers(-1, n_entities, size=n_facts)  # -1: a fact about the user
    sources = rng.integers(len(actions), size=n_facts)
    fact_vectors = writer.vectors(entity_topics[heads])
    for i in range(n_facts):
        head, tail, (action, body, stamp) = int(heads[i]), int(tails[i]), actions[int(sources[i])]
        rel_type = _FACT_TYPES[int(rng.integers(len(_FACT_TYPES)))]
        tail_ref, tail_text = (user, "the user") if tail < 0 else (entities[tail], names[tail])
        chunk = graph.chunk(action, body)
        graph.mention(entities[head], chunk, action.key)
        if tail >= 0:
            graph.mention(entities[tail], chunk, action.key)
        graph.fact(entities[head], rel_type, tail_ref, source_id=action.key,
                   text=f"{names[head]} {rel_type.lower().replace('_', ' ')} {tail_text}.",
                   valid_at=stamp.date(), role="user", confidence=round(float(rng.uniform(0.5, 1.0)), 3),
                   embedding=fact_vectors[i], embedding_model=spec.model)
        counts.facts += 1
    return [entity_vectors, fact_vectors]


def _add_memories(graph: MemoryGraph, spec: SyntheticSpec, writer: _Writer, user: Ref, user_id: str,
                  counts: UserCounts, when: datetime) -> list[np.ndarray]:
    """Notes the user saved; returns their passage vectors."""
    rng = writer.rng
    out = []
    for i in range(max(1, round(counts.messages * spec.memories_per_message))):
        topic = int(rng.integers(len(writer.topics)))
        content = writer.sentences(_USER_TEMPLATES, topic, int(rng.integers(2, 8)))
        vectors = writer.vectors(np.full(len(writer.split(content)), topic))
        graph.memory(user, f"{user_id}:m{i}", f"/notes/{writer.topics[topic]}/{i}.md", content,
                     updated_at=(when - timedelta(days=int(rng.integers(0, 365)))).isoformat(),
                     passage_embeddings=vectors, embedding_model=spec.model)
        counts.memories += 1
        out.append(vectors)
    return out


def questions(seed: int, count: int = 40) -> list[str]:
    """`count` distinct questions about the topics, deterministic from `seed`."""
    rng = np.random.default_rng([seed, 1])
    names = list(TOPICS)
    out: list[str] = []
    while len(out) < count:
        words = TOPICS[names[int(rng.integers(len(names)))]]
        a, b = (words[i] for i in rng.choice(len(words), 2, replace=False))
        text = _QUESTION_TEMPLATES[int(rng.integers(len(_QUESTION_TEMPLATES)))].format(a=a, b=b)
        if text not in out:
            out.append(text)
    return out


def build(spec: SyntheticSpec) -> SyntheticData:
    """The target user `synth-0` with `spec.messages` messages, then the other users."""
    rng = np.random.default_rng(spec.seed)
    centroids = rng.standard_normal((len(TOPICS), spec.dim), dtype=np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    writer = _Writer(rng, centroids, _split_passages())
    graph = MemoryGraph()
    if spec.recall_meta:
        graph.recall_meta(f"synthetic-{spec.seed}-{spec.messages}")
    counts: dict[str, UserCounts] = {}
    user_id = "synth-0"
    target = _add_user(graph, spec, writer, user_id, spec.messages, keep=True)
    counts[user_id] = target.counts
    others = [f"synth-{i + 1}" for i in range(spec.other_users)]
    total_others = int(np.ceil(spec.messages * spec.others_factor))
    for i, other in enumerate(others):
        share = total_others // len(others) + (1 if i < total_others % len(others) else 0)
        counts[other] = _add_user(graph, spec, writer, other, share, keep=False).counts
    return SyntheticData(spec=spec, elements=graph.elements(), user_id=user_id, other_user_ids=others,
                         counts=counts, questions=questions(spec.seed), user_texts=target.texts,
                         user_passages=np.concatenate(target.vectors),
                         user_item_vectors=np.concatenate(target.item_vectors), centroids=centroids,
                         last_time=target.last_time)


def new_session(data: SyntheticData, number: int, size: int = 30) -> list[SyntheticMessage]:
    """Messages of one more session for the target user (ids `synth-0:new<number>:t<i>`), after its last."""
    rng = np.random.default_rng([data.spec.seed, 2, number])
    writer = _Writer(rng, data.centroids, _split_passages())
    topic = int(rng.integers(len(writer.topics)))
    start = data.last_time + timedelta(days=1 + number)
    out = []
    for turn in range(size):
        text = writer.message_text(topic, agent=bool(turn % 2))
        vectors = writer.vectors(np.full(len(writer.split(text)), topic))
        out.append(SyntheticMessage(
            action_id=f"{data.user_id}:new{number}:t{turn}",
            action_type="assistant_message" if turn % 2 else "user_message", text=text,
            timestamp=(start + timedelta(minutes=turn)).isoformat(), passage_embeddings=vectors.tolist()))
    return out
