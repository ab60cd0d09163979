"""Shared by the dataset evaluations (LoCoMo, LongMemEval): users' turns with their vectors, the BM25-only
and dense-only baselines recall is measured against, and reading TURN rows back out of a rendered text."""

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from bench_common import model_folder, use_recall_lib

#: The four budgets every evaluation reports, by name: TURN rows with the character budget off (as every
#: figure before the character default, so they compare with them), and characters of rendered text
#: (header, FACT and TURN rows) under the module's own row cap. "8000c" is the default render.
BUDGETS = {
    "24": {"turns_budget": 24, "max_chars": 0},
    "10": {"turns_budget": 10, "max_chars": 0},
    "8000c": {"max_chars": 8000},
    "4000c": {"max_chars": 4000},
}
#: The row budgets' TURN rows: the 10 rows are the first 10 of the 24 (one ranking).
ROW_BUDGETS = {"24": 24, "10": 10}
#: The budget a default `recall.render` call renders at.
DEFAULT_BUDGET = "8000c"


def budget_label(name: str) -> str:
    """"24 rows", "8,000 chars": a budget's name in a report."""
    if name in ROW_BUDGETS:
        return f"{ROW_BUDGETS[name]} rows"
    return f"{BUDGETS[name]['max_chars']:,} chars"


def shown_turns(recalled: Mapping) -> list[str]:
    """The action ids a render's `recalled` map shows, best first when it carries `explain`'s fused ranks
    (else in display order): each TURN row's own, then the identical messages it stands for (`repeats`:
    their text and times are on that row, so they are shown)."""
    turns = recalled["turns"]
    if turns and "fused" in turns[0]:
        turns = sorted(turns, key=lambda t: t["fused"]["rank"])
    return [action for t in turns for action in (t["action_id"], *t.get("repeats", ()))]


def row_heads(recalled: Mapping) -> list[str]:
    """The action id of each TURN row (not its repeats), best first as `shown_turns`."""
    turns = recalled["turns"]
    if turns and "fused" in turns[0]:
        turns = sorted(turns, key=lambda t: t["fused"]["rank"])
    return [t["action_id"] for t in turns]


#: Each ranking signal switched off on its own (the ablations' configs).
SIGNALS = {
    "speaker": {"speaker_boost": 0},
    "session": {"session_boost": 0},
    "neighbours": {"neighbour_boost": 0},
    "dates": {"date_boost": 0},
    "role": {"role_boost": 0},
    "other side": {"other_side_spill": 1.0},
    "spread": {"session_spread": 0},
    "opener": {"opener_boost": 0},
    "rule lift": {"rule_boost": 0},
    "feedback": {"feedback_turns": 0},
    "instructions": {"instruction_turns": 0},
    "rules": {"rule_turns": 0},
    "facets": {"facet_turns": 0},
    "inflections": {"text_inflections": False},
    "prose vectors": {"prose_vectors": False},  # a code-bearing turn scored by its passages, like any turn
    "gather fusion": {"gather_fusion_k": 5},  # as fusion_k: the fusion as for any question
    "gather pieces": {"gather_piece_chars": 0},  # rendering, not ranking: changes character budgets only
    "deep pieces": {"deep_piece_chars": 0},  # rendering: every row's long message at the full piece length
    # a question that sweeps a topic ranked and shown as one that gathers (a summary never spreads)
    "sweep": {"sweep_fusion_k": 20, "sweep_spread": 0.5, "sweep_piece_chars": 0},
    "exchange": {"exchange_share": 0},  # a summary ranks a request and its reply apart
    "score share": {"score_share": 0},  # the lanes vote by rank only
    "all signals": {"speaker_boost": 0, "session_boost": 0, "neighbour_boost": 0, "date_boost": 0,
                    "role_boost": 0, "session_spread": 0, "opener_boost": 0, "rule_boost": 0,
                    "gather_fusion_k": 5, "sweep_fusion_k": 5, "sweep_spread": 0, "exchange_share": 0,
                    "score_share": 0},
}
#: A rendered TURN row's session and minute, which name its turn (`TURN [session s1, 2023-05-20T02:21, x]`),
#: or its minute below a row of the same session and day (`TURN [same session, 02:25, x]`).
TURN_ROW = re.compile(r"^TURN \[session (?P<session>[^,\]]+), (?P<minute>\d{4}-\d\d-\d\dT\d\d:\d\d)[,\]]")
CONTINUED_ROW = re.compile(r"^TURN \[same session, (?P<time>\d\d:\d\d)[,\]]")


def turn_rows(text: str) -> list[tuple[str, str]]:
    """(session, minute) of each TURN row of a rendered text, in display order."""
    rows: list[tuple[str, str]] = []
    for line in text.splitlines():
        if full := TURN_ROW.match(line):
            rows.append((full["session"], full["minute"]))
        elif (continued := CONTINUED_ROW.match(line)) and rows:
            session, minute = rows[-1]
            rows.append((session, f"{minute[:11]}{continued['time']}"))
    return rows


#: What an answer is matched through: case, and anything but word characters (a decimal point kept) read
#: as a space, so punctuation and line breaks may differ between an answer and a message.
_NOT_ANSWER = re.compile(r"[^\w.]+|(?<!\d)\.|\.(?!\d)")
#: Shorter answers ("5", "no") are found inside other words and numbers by accident.
MIN_ANSWER_CHARS = 3


def _answer_form(text: str) -> str:
    return f" {' '.join(_NOT_ANSWER.sub(' ', text.lower()).split())} "


def literal_answer(answer: str | None, question: str, evidence_texts: Sequence[str]) -> str | None:
    """The answer as matched (`_answer_form`) when an evidence message holds it word for word and the
    question does not (the rendered header repeats the question), else None.

    Why: an evidence row counts as shown whatever piece of it the render shows, so a character budget
    can show more rows by cutting each shorter and lose the answer in the cut. For the questions whose
    answer is written in a message, whether the answer itself reached the text says what a row count
    cannot."""
    if answer is None or len(_answer_form(answer).strip()) < MIN_ANSWER_CHARS:
        return None
    form = _answer_form(answer)
    if form in _answer_form(question) or not any(form in _answer_form(text) for text in evidence_texts):
        return None
    return form


def action_texts(elements: Sequence[Mapping]) -> dict[str, str]:
    """Each message's text by its action id, from a graph's elements (`export_util.json` items)."""
    return {item["properties"]["action_id"]: item["properties"].get("text", "") for item in elements
            if "action_id" in item.get("properties", {})}


def answer_shown(literal: str, rendered: str) -> bool:
    """Whether a rendered text holds `literal` (a `literal_answer`)."""
    return literal in _answer_form(rendered)


def answer_line(at: Mapping, half: Mapping, questions: str, holder: str) -> str:
    """A report's line on the answers in the text: `at` / `half` the 8,000 / 4,000 characters' summaries
    (`answers`, `answer_in_text`), `questions` what was asked ("questions"), `holder` what says the
    answer ("message", "turn")."""
    if not at["answers"]:
        return f"- None of the {questions}' answers is written word for word in an evidence {holder}."
    return (f"- The answer itself in the rendered text, for the {at['answers']} {questions} whose answer an "
            f"evidence {holder} holds word for word (and the question does not; an evidence row counts as "
            f"shown whatever piece of it is shown): {at['answer_in_text']:.3f} at 8,000 characters, "
            f"{half['answer_in_text']:.3f} at 4,000.")


@dataclass
class UserTurns:
    """One user's turns as the baselines see them: texts, and passage vectors grouped per turn."""

    action_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    matrix: np.ndarray | None = None
    starts: np.ndarray | None = None  # first passage row of each turn in `matrix`

    def finish(self) -> None:
        counts = [len(v) for v in self.vectors]
        self.matrix = np.concatenate(self.vectors).astype(np.float32)
        self.matrix /= np.linalg.norm(self.matrix, axis=1, keepdims=True)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


class Baselines:
    """BM25-only and dense-only rankings of a user's turns, computed here with numpy and recall_lib.

    `queries` maps a question's key to (user_id, question text); the question vectors are encoded here
    with the same model folder the module uses, so dense alone is the `turns` lane without a cut.
    """

    def __init__(self, users: Mapping[str, UserTurns], queries: Mapping[Hashable, tuple[str, str]],
                 model: str) -> None:
        use_recall_lib()
        from recall_lib.textindex import BM25Index, query_terms, tokenize
        from sentence_transformers import SentenceTransformer

        self.users = users
        self.queries = queries
        self._query_terms, self._tokenize = query_terms, tokenize
        self.bm25 = {user: BM25Index.build(turns.texts) for user, turns in users.items()}
        encoder = SentenceTransformer(str(model_folder(model)), device="cpu")
        keys = list(queries)
        vectors = encoder.encode([queries[k][1] for k in keys], batch_size=64, normalize_embeddings=True,
                                 convert_to_numpy=True)
        self.vectors = {key: v.astype(np.float32) for key, v in zip(keys, vectors, strict=True)}

    def bm25_order(self, key: Hashable) -> list[str]:
        """Every turn the question's terms match, best first (the text lane's scoring, unlimited)."""
        user, question = self.queries[key]
        index = self.bm25[user]
        docs, _ = index.search(self._query_terms(self._tokenize(question), index), index.n_docs)
        return [self.users[user].action_ids[i] for i in docs]

    def dense_order(self, key: Hashable) -> list[str]:
        """All turns by their best passage cosine to the question, best first (ties by position)."""
        turns = self.users[self.queries[key][0]]
        scores = np.maximum.reduceat(turns.matrix @ self.vectors[key], turns.starts)
        return [turns.action_ids[i] for i in np.argsort(-scores, kind="stable")]
