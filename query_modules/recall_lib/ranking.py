"""One fused ranking of a user's turns: every lane that points at turns votes, conversation signals lift.

Why one ranking: the lanes often find the same turn (by its words, its vector, through a fact), and a
turn several lanes rank fairly high is more often the one asked about than one lane's k-th best. So
the TURN rows are the best `budget` turns of one score, not fixed widths per lane:

    base(t)  = sum over lanes of vote(t, lane)                           (reciprocal-rank fusion;
               the lanes: text, turns, fact_turns, and for a question that gathers occasions the
               turns lane's feedback pass, for a request on the user's side its instructions pass,
               for any question its rules pass, `lanes.turn_candidates`, for a question listing
               things the text lane's facets pass, `lanes.facet_candidates`)
               x (1 + speaker_boost)  when t's speaker is the one participant the question names
               x (1 + date_boost)     when t was said within a day of a date the question names
               x (1 + role_boost)     when t is on the side of the conversation the question asks
                                      about (`question.Question.side`: the user's turns for "I", "my")
    score(t) = base(t)
               + session_boost   x (sum of the SESSION_TOP best bases in t's session)   if a lane found t
               + neighbour_boost x (the best base among turns up to NEIGHBOUR_REACH places
                                    before or after t in its session, without the speaker
                                    and role lifts)
                                 x other_side_spill  when the question asks one side and t is
                                                     on the other (`other_side_shares`)
               + opener_boost x (the best base among the other candidates of t's session: in a
                                 session of at most ONE_TOPIC_TURNS turns, all of them; in a
                                 longer one, for a question that sweeps a topic, those up to
                                 OPENER_REACH turns after t)
                                 when t opens its session on the side the question asks
               + rule_boost x (the best base among the candidates up to RULE_REACH turns after t
                               in its session, with their speaker, role and date lifts)
                                 when t is one of the user's rules (`lanes.rule_turns`) and
                                 the question does not gather
    final(t) = score(t) / (1 + spread x (turns of t's session scored above t))
                                      when the question gathers several occasions ("how many",
                                      "in total", "the order of": `question.Question.gathers`),
                                      else score(t); spread is `session_spread`, and `sweep_spread`
                                      for a question that sweeps a topic (`question.Question.sweeps`)
    shown(t) = max(final(t), exchange_share x final(p))   for a question that asks for a summary
                                      (`question.Question.summarises`), p the other half of t's
                                      exchange (`exchange_partners`)

    vote(t, lane) = (1 - share) / (k + rank of t in the lane)
                    + share x (t's score / the lane's best score) / (k + 1)
               share is `score_share` for the lanes that score the question's words or vector (text,
               turns: `lanes.SCORED_LANES`) when the question does not gather, else 0 (the passes and
               fact_turns vote by rank)

k is `fusion_k`, `gather_fusion_k` for a question that gathers and `sweep_fusion_k` for one that sweeps:
a small k makes the fusion top-heavy (a lane's first turns far ahead of its tenth), right for a question
one turn answers; a question that gathers is answered by many turns, each a moderate match, and a
flatter fusion lets turns several lanes rank moderately high outrank one lane's single best. A sweep
("summarize my project", "in what order did I bring up ...") is flatter still: its evidence is dozens
of messages about one topic, none a better match than the rest. Its spread is far weaker: a topic's
messages sit in the few sessions that discussed it, not one per session as a count's do, but the order
they came up in runs across the history, so the tenth best turn of one session yields a little to the
best of another. A summary is answered by exchanges, not messages: the user's request says what was
worked on, the reply what came of it, so each half of an exchange ranks (nearly) as high as the other;
it does not spread at all, as the exchanges sit where the topic was worked on.

Why a vote follows the score in part: a rank says nothing of the gap behind it. A lane whose first
turns score nearly alike (a message the question's words or vector match about as well as the best
one) gives them nearly the best one's vote; a lane whose best turn towers over the rest gives the rest
less. Without it a small `k` makes a near-tie of scores a large gap of votes. Not for a question that
gathers: its evidence is many moderate matches, none near the best, and its flat fusion is meant to
let them outrank the best; votes that follow the scores would make it top-heavy again.

Each signal is a function below with the reason it exists. A turn lifted only by a neighbour passes
the same filters as any candidate (`allowed`); the caller verifies every shown row against the graph.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .day_windows import DayWindow, in_windows
from .distinct import distinct, distinct_max, distinct_with_inverse, positions
from .question import USER_TURNS

#: How many of a session's best-scored turns its coherence bonus sums.
SESSION_TOP = 3
#: How far (turns before or after, in the same session) a strong hit lends part of its score.
NEIGHBOUR_REACH = 2
#: A session this short (ten exchanges) is taken to keep to its opening's topic: any hit lifts the opening...
ONE_TOPIC_TURNS = 20
#: ...in a longer one, for a question that sweeps a topic, a hit this far into it (turns after the first).
OPENER_REACH = 6
#: How many turns before a request (in its session) a rule it applies may stand: the rule, the
#: assistant's acknowledgement, the request.
RULE_REACH = 2
#: Signals that lift one side of the conversation (a named speaker, the asked role): not inherited by
#: neighbours, which are mostly the other side's turns.
SIDE_SIGNALS = frozenset({"speaker", "role"})


@dataclass(frozen=True)
class RankingWeights:
    """The ranking's tunable weights (config keys of the same names); 0 switches a boost off."""

    fusion_k: int
    speaker_boost: float
    session_boost: float
    neighbour_boost: float
    date_boost: float
    role_boost: float = 0.0
    other_side_spill: float = 1.0
    session_spread: float = 0.0
    opener_boost: float = 0.0
    gather_fusion_k: int | None = None  # a gathering question's fusion constant (None: `fusion_k`)
    sweep_fusion_k: int | None = None  # a sweeping question's fusion constant (None: as it gathers)
    sweep_spread: float | None = None  # a sweeping question's session spread (None: `session_spread`)
    exchange_share: float = 0.0  # a summary: the share of a turn's score its exchange partner gets
    rule_boost: float = 0.0  # the share of a request's score a rule it applies gains (see `rule_lift`)
    score_share: float = 0.0  # the share of a scored lane's vote that follows its score (see `fuse`)

    def fusion_for(self, gathers: bool, sweeps: bool = False) -> int:
        """The fusion's constant: flatter for a question that gathers or sweeps (see the module docstring)."""
        if sweeps and self.sweep_fusion_k is not None:
            return self.sweep_fusion_k
        return self.gather_fusion_k if gathers and self.gather_fusion_k is not None else self.fusion_k

    def share_for(self, gathers: bool) -> float:
        """The share of a scored lane's vote that follows its score: none for a question that gathers,
        whose fusion is flat on purpose (see the module docstring)."""
        return 0.0 if gathers else self.score_share

    def spread_for(self, sweeps: bool, summarises: bool = False) -> float:
        """The session spread of a gathering question: `sweep_spread` when it sweeps a topic, none when
        it asks for a summary (see the module docstring)."""
        if summarises:
            return 0.0
        return self.sweep_spread if sweeps and self.sweep_spread is not None else self.session_spread


@dataclass(frozen=True)
class TurnFacts:
    """What the signals read per turn of the user's snapshot (numpy arrays of the same length)."""

    sessions: np.ndarray  # int64 session code, -1 when unknown
    epoch: np.ndarray  # float64 UTC seconds, NaN when unknown
    previous: np.ndarray  # int64 index of the turn before in the same session, -1 when none
    following: np.ndarray  # int64 index of the turn after in the same session, -1 when none
    speakers: Sequence[str]
    roles: Sequence[str] = ()  # action_type per turn (user_message, assistant_message, ...)
    openers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # see session_openers
    near_opening: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # see session_openers
    one_topic: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # see session_openers


class Lift(NamedTuple):
    """One signal's part in a turn's score: `amount` added, or `factor` multiplied into its base.
    (NamedTuples, this and `RankedTurn`: made per ranked turn, where a frozen dataclass costs ~5x.)"""

    signal: str
    amount: float = 0.0
    factor: float = 1.0

    def __str__(self) -> str:
        if self.factor != 1.0:
            return f"{self.signal} x{self.factor:g}"
        return f"{self.signal} +{self.amount:.3f}"


class RankedTurn(NamedTuple):
    """A turn of the fused ranking: its place, score, the lanes that found it, the signals that lifted it."""

    turn: int  # index into the snapshot's turns
    rank: int  # 1-based
    score: float
    lanes: tuple[tuple[str, int], ...]  # (lane, the turn's rank in it), for lanes that found it
    lifts: tuple[Lift, ...]


def session_order(sessions: np.ndarray) -> np.ndarray:
    """The turns by session, then time (the turns' own order): what `neighbour_links` and
    `session_openers` both group by, sorted once when a snapshot is built."""
    return np.argsort(sessions, kind="stable")


def neighbour_links(sessions: np.ndarray, order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For turns in time order: the index of the previous and next turn of the same session (-1: none).

    Sessions may interleave in time (two chats at once), so neighbours are found per session, not as
    the adjacent positions of the whole list. Turns of an unknown session (-1) have none. `order`:
    `session_order(sessions)`, when the caller has it.
    """
    n = len(sessions)
    previous = np.full(n, -1, dtype=np.int64)
    following = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return previous, following
    order = session_order(sessions) if order is None else order
    same = (sessions[order][1:] == sessions[order][:-1]) & (sessions[order][1:] >= 0)
    previous[order[1:][same]] = order[:-1][same]
    following[order[:-1][same]] = order[1:][same]
    return previous, following


def session_openers(
    sessions: np.ndarray, order: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For turns in time order: the index of the first turn of the same session (-1 for a turn of an
    unknown session), whether the turn is at most `OPENER_REACH` turns after it, and whether its session
    has at most `ONE_TOPIC_TURNS` (what `opener_lift` reads). `order`: `session_order(sessions)`, when
    the caller has it."""
    n = len(sessions)
    openers = np.full(n, -1, dtype=np.int64)
    near, one_topic = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if not n:
        return openers, near, one_topic
    order = session_order(sessions) if order is None else order
    grouped = sessions[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    lengths = np.diff(np.r_[starts, n])
    known = grouped >= 0
    openers[order] = np.where(known, np.repeat(order[starts], lengths), -1)
    places = np.arange(n) - np.repeat(starts, lengths)
    near[order] = known & (places <= OPENER_REACH)
    one_topic[order] = known & (np.repeat(lengths, lengths) <= ONE_TOPIC_TURNS)
    return openers, near, one_topic


def opener_lift(
    candidates: np.ndarray, base: np.ndarray, facts: TurnFacts, role: str, sweeps: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The first turns of the candidates' sessions that are on the asked `role`'s side (ascending), each
    with the best base among the other candidates of its session that lift it (`session_openers`: all
    of a short session; of a longer one, for a question that `sweeps` a topic, its first `OPENER_REACH`
    turns after it).

    Why: in a conversation with an assistant the user's opening message says what the conversation is
    about ("I just replaced the kitchen faucet, ..."): it states the fact, and the turns that follow
    discuss it at length and match the question better. A hit in the exchanges after it is evidence
    that its opening says what was asked; the neighbour lift reaches only two turns, not the opening of
    a conversation. A hit in a long session is not, for a question that asks for one thing: a session
    of a hundred turns (a day's coding chat) moves on from its opening, a request among many that
    would take a row from the asked thing's own turns for every topic the day touched; a session of a
    few exchanges keeps to it. A question that sweeps a topic ("in what order did I bring up ...", a
    summary) asks where its topics came up, and a long session's opening is where the topic its first
    exchanges work on was brought up.
    """
    firsts = facts.openers[candidates]
    lifting = facts.one_topic[candidates] | (sweeps & facts.near_opening[candidates])
    keep = (firsts >= 0) & (firsts != candidates) & lifting
    firsts, best = distinct_max(firsts[keep], base[keep])
    asked = _equal(facts.roles, firsts, role)
    return firsts[asked], best[asked]


def rule_lift(
    candidates: np.ndarray, base: np.ndarray, facts: TurnFacts, rules: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The `rules` (a mask over the user's turns) up to `RULE_REACH` turns before a candidate in its
    session (ascending), each with the best base among the candidates that reach back to it.

    Why: a user states a rule ("always include code snippets in Python when I ask about implementation
    details") for the request that follows it, which names the task; a later question about such a task
    matches that request, not the rule's clause, yet the rule is what it needs. The request's side lifts
    carry over: both are the user's own turns. A question that gathers occasions is not lifted by the
    caller: it recounts what was said, and a rule for answering would take an occasion's row.
    """
    turns, bases = _walk(candidates, base, facts.previous, RULE_REACH)
    ruled = rules[turns]
    return distinct_max(turns[ruled], bases[ruled])


def named_participant(
    tokens: Sequence[str], participants: Mapping[str, tuple[str, ...]]
) -> tuple[str | None, set[str]]:
    """The one speaker the question's `tokens` name (None when they name none or several), and the words
    of all named.

    Why: a question about what one person said or did ("When did Caroline go to the support group?")
    is answered by that person's own turns, which rarely contain their own name, while the other
    side's turns address them by it. So the speaker's turns weigh more (softly: an adversarial question
    may name the wrong person) and participants' names are not searched as words. `participants` maps
    each of this user's speaker names to its tokens, so only this user's own speakers can match.
    """
    words = tuple(tokens)
    named = [
        name
        for name, name_tokens in participants.items()
        if name_tokens and any(words[i : i + len(name_tokens)] == name_tokens for i in range(len(words)))
    ]
    name_words = {word for name in named for word in participants[name]}
    return (named[0] if len(named) == 1 else None), name_words


def fuse(
    lanes: Mapping[str, Sequence[int]],
    fusion_k: int,
    scores: Mapping[str, Sequence[float]] | None = None,
    score_share: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal-rank fusion: the turns any lane ranked (ascending) and their summed votes, each
    1/(k + rank), or for a lane `scores` gives (its turns' scores, best first, all > 0) that vote's
    `score_share` taken by the turn's score relative to the lane's best (see the module docstring)."""
    ranked = [np.asarray(turns, dtype=np.int64) for turns in lanes.values()]
    if not sum(map(len, ranked)):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    votes = []
    for lane, turns in zip(lanes, ranked, strict=True):
        vote = 1.0 / (fusion_k + np.arange(1, len(turns) + 1))
        scored = scores.get(lane) if scores is not None and score_share else None
        if scored is not None and len(turns):
            scored = np.asarray(scored, dtype=np.float64)
            vote = (1.0 - score_share) * vote + score_share * (scored / scored[0]) / (fusion_k + 1)
        votes.append(vote)
    weights = np.concatenate(votes)
    candidates, where = distinct_with_inverse(np.concatenate(ranked))
    return candidates, np.bincount(where, weights=weights, minlength=len(candidates))


def session_bonus(candidates: np.ndarray, base: np.ndarray, sessions: np.ndarray) -> np.ndarray:
    """Per candidate: the sum of the `SESSION_TOP` best bases in its session (0 when its session is unknown).

    Why: evidence often sits beside the best hits of one session (the question's topic was talked
    through there), so a turn of a session with several strong hits is likelier to matter than an
    equally scored turn alone in its session. A boost, not a cut: "sessions first" lost turns.
    """
    codes = sessions[candidates]
    known = codes >= 0
    if not known.any():
        return np.zeros(len(candidates))
    order = np.lexsort((-base, codes))
    sorted_codes = codes[order]
    starts = np.r_[0, np.flatnonzero(sorted_codes[1:] != sorted_codes[:-1]) + 1]
    place = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    top = order[(place < SESSION_TOP) & (sorted_codes >= 0)]
    strong, member = distinct_with_inverse(codes[top])
    strength = np.bincount(member, weights=base[top], minlength=len(strong))  # summed best first
    at = positions(strong, codes, ascending=True)
    return np.where(at >= 0, strength[np.maximum(at, 0)], 0.0)


def neighbour_spill(
    candidates: np.ndarray, base: np.ndarray, previous: np.ndarray, following: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The turns up to `NEIGHBOUR_REACH` places from a candidate in its session (ascending), each with
    the best base among the candidates that reach it.

    Why: an answer is often spread over consecutive turns (a question and its reply, a story told in
    two messages), and the turn next to a strong hit often shares no word with the question. The
    caller passes the bases without the side signals (`SIDE_SIGNALS`): they say whose turns answer, so
    the other side's reply next to such a turn must not inherit that lift. Only the candidates'
    neighbours are touched, never an array over all the user's turns.
    """
    before, after = (_walk(candidates, base, links, NEIGHBOUR_REACH) for links in (previous, following))
    turns, best = distinct_max(np.concatenate((before[0], after[0])), np.concatenate((before[1], after[1])))
    return turns, np.maximum(best, 0.0)


def _walk(
    candidates: np.ndarray, base: np.ndarray, links: np.ndarray, reach: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every turn up to `reach` steps along `links` (`previous` or `following`) from a candidate, each
    with that candidate's base: one pair per step taken, not merged."""
    turns, bases = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    step = candidates
    for _ in range(reach):
        step = np.where(step >= 0, links[np.maximum(step, 0)], -1)
        reached = step >= 0
        turns.append(step[reached])
        bases.append(base[reached])
    return np.concatenate(turns), np.concatenate(bases)


def other_side_shares(turns: np.ndarray, roles: Sequence[str], role: str, share: float) -> np.ndarray:
    """Per turn of `turns`: `share` when it is not on the asked `role`'s side, else 1.

    Why: a question that asks one side ("what did I say", "my") is answered by that side's turns; the
    other side's reply beside a hit is context that restates the topic. Given a full neighbour share it
    fills the budget with replies next to the best hit, crowding out the asked side's turns in other
    sessions, which are the second and third pieces of evidence a counting question needs.
    """
    return np.where(_equal(roles, turns, role), 1.0, share)


def session_spread(turns: np.ndarray, score: np.ndarray, sessions: np.ndarray, weight: float) -> np.ndarray:
    """Per turn: 1 / (1 + weight x the number of turns of its session that score above it).

    Why: for a question that gathers several occasions a session mostly holds one piece, so a session's
    second, third, ... turn is worth less than another session's best; ranked plainly, the session of
    the best hit fills the rows. Mostly, not always: one conversation may tell two of the pieces, so the
    default weight is mild (`config.RecallConfig.session_spread`). Turns of an unknown session (-1) are
    not discounted.
    """
    order = np.lexsort((turns, -score))  # the plain ranking, ties to the earlier turn
    ranked_sessions = sessions[turns[order]]
    by_session = np.argsort(ranked_sessions, kind="stable")
    grouped = ranked_sessions[by_session]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    above = np.arange(len(grouped)) - np.repeat(starts, np.diff(np.r_[starts, len(grouped)]))
    places = np.empty(len(order), dtype=np.int64)
    places[by_session] = np.where(grouped >= 0, above, 0)
    factors = np.empty(len(turns))
    factors[order] = 1.0 / (1.0 + weight * places)
    return factors


def exchange_partners(
    turns: np.ndarray, score: np.ndarray, facts: TurnFacts
) -> tuple[np.ndarray, np.ndarray]:
    """The other halves of `turns`' exchanges (ascending), each with the best `score` of the turns that
    lend to it: a user's turn lends to the next turn of its session when another side says it (the
    reply), any other turn to the previous one of its session when the user said it (the request).

    Why: a summary asks for what was discussed, and an exchange holds it in two halves that rarely match
    the question equally: the request names the topic ("I'm adding a tracker to my detector"), the
    reply, long and on the other side, holds what was learned. The neighbour lift is weaker, shared by
    two turns either way and cut for the other side when the question is in the first person.
    """
    if not len(turns) or not len(facts.roles):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    asked = _equal(facts.roles, turns, USER_TURNS)
    partner = np.where(asked, facts.following[turns], facts.previous[turns])
    linked = partner >= 0
    turns, score, asked, partner = turns[linked], score[linked], asked[linked], partner[linked]
    mate_asked = _equal(facts.roles, partner, USER_TURNS)
    paired = asked != mate_asked  # a user's turn with a reply, or a reply with the user's request
    return distinct_max(partner[paired], score[paired])


def rank_turns(
    lanes: Mapping[str, Sequence[int]],
    facts: TurnFacts,
    allowed: np.ndarray,
    weights: RankingWeights,
    budget: int,
    speaker: str | None = None,
    windows: Sequence[DayWindow] = (),
    role: str | None = None,
    gathers: bool = False,
    sweeps: bool = False,
    summarises: bool = False,
    rules: np.ndarray | None = None,
    scores: Mapping[str, Sequence[float]] | None = None,
) -> list[RankedTurn]:
    """The `budget` best turns by the fused score; `lanes` maps each turn lane to its turns, best first,
    and `scores` the scored lanes (`lanes.SCORED_LANES`) to those turns' scores (see `fuse`);
    `gathers`: the question gathers several occasions (`question.Question.gathers`); `sweeps`: it sweeps
    a topic across the history (`question.Question.sweeps`, which gathers too); `summarises`: it asks
    for a summary (`question.Question.summarises`); `rules`: a mask of the user's rules over the
    snapshot's turns (`lanes.rule_turns`), None when not read."""
    if budget <= 0:
        return []
    candidates, base = fuse(lanes, weights.fusion_for(gathers, sweeps), scores, weights.share_for(gathers))
    if not len(candidates):
        return []
    factors: list[tuple[str, np.ndarray, float]] = []
    if speaker is not None and weights.speaker_boost:
        spoken = _equal(facts.speakers, candidates, speaker)
        factors.append(("speaker", spoken, 1.0 + weights.speaker_boost))
    if role is not None and weights.role_boost and len(facts.roles):
        said = _equal(facts.roles, candidates, role)
        factors.append(("role", said, 1.0 + weights.role_boost))
    if windows and weights.date_boost:
        factors.append(("date", in_windows(facts.epoch[candidates], windows), 1.0 + weights.date_boost))
    spill_base = base  # what neighbours inherit: no side's lift (see `neighbour_spill`)
    for name, mask, factor in factors:
        base = np.where(mask, base * factor, base)
        if name not in SIDE_SIGNALS:
            spill_base = np.where(mask, spill_base * factor, spill_base)
    session = (
        weights.session_boost * session_bonus(candidates, base, facts.sessions)
        if weights.session_boost
        else np.zeros(len(candidates))
    )
    spill_turns, spill = np.zeros(0, dtype=np.int64), np.zeros(0)
    if weights.neighbour_boost:
        spill_turns, spill = neighbour_spill(candidates, spill_base, facts.previous, facts.following)
        spill = weights.neighbour_boost * spill
        if role is not None and weights.role_boost and len(facts.roles) and weights.other_side_spill != 1:
            spill = spill * other_side_shares(spill_turns, facts.roles, role, weights.other_side_spill)
        lifted = (spill > 0) & allowed[spill_turns]
        spill_turns, spill = spill_turns[lifted], spill[lifted]
    open_turns, opened = np.zeros(0, dtype=np.int64), np.zeros(0)
    if role is not None and weights.role_boost and weights.opener_boost and len(facts.openers):
        open_turns, opened = opener_lift(candidates, spill_base, facts, role, sweeps)
        opened = weights.opener_boost * opened
        lifted = (opened > 0) & allowed[open_turns]
        open_turns, opened = open_turns[lifted], opened[lifted]
    ruled_turns, ruled = np.zeros(0, dtype=np.int64), np.zeros(0)
    if rules is not None and weights.rule_boost and not gathers:
        ruled_turns, ruled = rule_lift(candidates, base, facts, rules)
        ruled = weights.rule_boost * ruled
        lifted = (ruled > 0) & allowed[ruled_turns]
        ruled_turns, ruled = ruled_turns[lifted], ruled[lifted]
    # ascending: ties go to the earlier turn
    turns = distinct(np.concatenate((candidates, spill_turns, open_turns, ruled_turns)))
    score = np.zeros(len(turns))
    score[np.searchsorted(turns, candidates)] = base + session
    score[np.searchsorted(turns, spill_turns)] += spill
    score[np.searchsorted(turns, open_turns)] += opened
    score[np.searchsorted(turns, ruled_turns)] += ruled
    spread = np.ones(len(turns))
    spread_weight = weights.spread_for(sweeps, summarises)
    if gathers and spread_weight:
        spread = session_spread(turns, score, facts.sessions, spread_weight)
        score = score * spread
    exchange_turns, exchanged = np.zeros(0, dtype=np.int64), np.zeros(0)
    if summarises and weights.exchange_share:
        turns, score, exchange_turns, exchanged = _with_exchanges(
            turns, score, facts, allowed, weights.exchange_share
        )
        spread = np.ones(len(turns))  # a summary does not spread (`RankingWeights.spread_for`)
    best = np.lexsort((turns, -score))[:budget]
    chosen = turns[best]
    # The loop below reads Python lists: indexing numpy arrays one element at a time costs ~10x.
    candidate_at = positions(candidates, chosen, ascending=True).tolist()
    spill_at = positions(spill_turns, chosen, ascending=True).tolist()
    open_at = positions(open_turns, chosen, ascending=True).tolist()
    rule_at = positions(ruled_turns, chosen, ascending=True).tolist()
    exchange_at = positions(exchange_turns, chosen, ascending=True).tolist()
    masks = [(name, mask.tolist(), factor) for name, mask, factor in factors]
    sessions, spills, opens, exchanges = session.tolist(), spill.tolist(), opened.tolist(), exchanged.tolist()
    rule_gains = ruled.tolist()
    spreads = spread[best].tolist()
    lane_ranks = [(lane, _last_ranks(lane_turns, chosen).tolist()) for lane, lane_turns in lanes.items()]
    ranked = []
    for place, (turn, turn_score) in enumerate(zip(chosen.tolist(), score[best].tolist(), strict=True)):
        lifts = []
        at = candidate_at[place]
        if at >= 0:
            lifts += [Lift(name, factor=factor) for name, mask, factor in masks if mask[at]]
            if sessions[at] > 0:
                lifts.append(Lift("session", amount=sessions[at]))
        if spill_at[place] >= 0:
            lifts.append(Lift("neighbour", amount=spills[spill_at[place]]))
        if open_at[place] >= 0:
            lifts.append(Lift("opener", amount=opens[open_at[place]]))
        if rule_at[place] >= 0:
            lifts.append(Lift("rule", amount=rule_gains[rule_at[place]]))
        if spreads[place] != 1.0:
            lifts.append(Lift("spread", factor=spreads[place]))
        if exchange_at[place] >= 0:
            lifts.append(Lift("exchange", amount=exchanges[exchange_at[place]]))
        found = tuple((lane, ranks[place]) for lane, ranks in lane_ranks if ranks[place])
        ranked.append(RankedTurn(turn, place + 1, turn_score, found, tuple(lifts)))
    return ranked


def _with_exchanges(
    turns: np.ndarray, score: np.ndarray, facts: TurnFacts, allowed: np.ndarray, share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`turns` and `score` with each turn's exchange partner raised to `share` of its score
    (`exchange_partners`; a partner `allowed` refuses is left out), and the raised turns (ascending)
    with what the raise added."""
    partners, lent = exchange_partners(turns, score, facts)
    lent = share * lent
    keep = allowed[partners] & (lent > 0)
    partners, lent = partners[keep], lent[keep]
    merged = distinct(np.concatenate((turns, partners)))
    at_turns, at_partners = np.searchsorted(merged, turns), np.searchsorted(merged, partners)
    merged_score = np.zeros(len(merged))
    merged_score[at_turns] = score
    gain = lent - merged_score[at_partners]
    raised = gain > 0
    merged_score[at_partners[raised]] = lent[raised]
    return merged, merged_score, partners[raised], gain[raised]


def _equal(values: Sequence[str], turns: np.ndarray, wanted: str) -> np.ndarray:
    """Per turn of `turns`: whether `values[turn] == wanted`. A snapshot's columns read the lot in one
    call (`turn_table.Column.values_at`): the signals read hundreds of turns' roles a call."""
    indices = turns.tolist()
    values_at = getattr(values, "values_at", None)
    read = values_at(indices) if values_at is not None else [values[t] for t in indices]
    return np.array([value == wanted for value in read], dtype=bool)


def _last_ranks(lane_turns: Sequence[int], turns: np.ndarray) -> np.ndarray:
    """Each of `turns`' 1-based rank among a lane's turns (its last place there), 0 when absent."""
    ranked = np.asarray(lane_turns, dtype=np.int64)
    if not len(ranked):
        return np.zeros(len(turns), dtype=np.int64)
    match = ranked[None, :] == turns[:, None]
    last = len(ranked) - np.argmax(match[:, ::-1], axis=1)
    return np.where(match.any(axis=1), last, 0)
