"""`WalkLog`: what a walk of the user's graph read besides what the user owns, for the rolling check.

A build keeps only what the user owns; the rolling check (`recheck`) also needs to know what the walk
passed by: the edges an Action was reached through, the Actions, notes and mentions the rules turned
away, the edges of each entity that are not facts. `ownership` notes them here as it reads them, so
the log costs the build no procedure-API call beyond one id per chunk in-edge and per mention.
Plain ids and values only (no graph object outlives its call).
"""

from dataclasses import dataclass, field

# What a chunk's in-edge was, as the build read it (`WalkLog.mentions`).
OTHER_EDGE = 0  # not a mention (a HAS_CHUNK from an Action)
ATTRIBUTES = 1  # a mention that makes its entity the user's
NOT_CITING = 2  # a mention whose sources cite no action id of the user's (or cannot be read)
STRUCTURAL = 3  # a mention of a vertex with a structural label
EARLIER = 4  # a mention of an entity an earlier mention already made the user's

# What a non-structural edge of a fact holder (the User, an entity) was (`WalkLog.holder_edges`).
NOT_SOURCED = 0  # its source_id is no action id of the user's
FACT = 1  # a fact of the user's, read from this holder
FOREIGN_END = 2  # sourced from the user's, but an end is another structural vertex
ELSEWHERE = 3  # seen first from another holder


@dataclass
class WalkLog:
    #: each Action the user owns -> the ids of its in-edges, as its ownership check read them
    parents: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: owned Actions with an in-edge that is not HAS_ACTION (so not all their in-edges are holders')
    other_parents: set[int] = field(default_factory=set)
    #: owned Actions whose action_id is stored as an integer
    integer_ids: list[int] = field(default_factory=list)
    #: each owned Action with chunks -> its (HAS_CHUNK edge id, chunk id) pairs (attributing builds only)
    chunks: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    #: each HAS_ACTION edge out of an Agent -> its Action's own session_id as text (it names the
    #: session the Action stands for, `ownership.agent_action_session`)
    agent_edges: dict[int, str | None] = field(default_factory=dict)
    #: Actions found under the user's holders that the rules turned away
    turned_away: list[int] = field(default_factory=list)
    #: the Memory vertices under the User -> whether each is the user's
    notes: dict[int, bool] = field(default_factory=dict)
    #: Agents the rules turned away (the other watched holders were reached as Sessions)
    watched_agents: set[int] = field(default_factory=set)
    #: what the User ADOPTED (ontologies or not)
    adopted: list[int] = field(default_factory=list)
    #: each chunk read -> {in-edge id: what it was (OTHER_EDGE, ATTRIBUTES, ...)}
    mentions: dict[int, dict[int, int]] = field(default_factory=dict)
    #: each fact holder read (the User, the user's entities) -> {non-structural edge id: NOT_SOURCED, ...}
    holder_edges: dict[int, dict[int, int]] = field(default_factory=dict)
    #: each fact holder read -> how many edges it has (what reading them again costs)
    degrees: dict[int, int] = field(default_factory=dict)
