"""The four kinds of item recall finds, caches and embeds: one vocabulary for lanes, rows, the cache,
`recall.embed` and `recall.status`."""

TURN = "turn"  # a message (an Action with text)
ENTITY = "entity"
FACT = "fact"
NOTE = "note"  # a Memory vertex: a note the user saved on purpose
PROSE = "prose"  # the prose of a message that holds fenced code (`prose`): a second vector of a turn
KINDS = (TURN, ENTITY, FACT, NOTE, PROSE)

#: How `recall.embed` records and `recall.status` rows name each kind (public, unchanged since 0.1).
PUBLIC_NAMES = {TURN: "messages", ENTITY: "entities", FACT: "edges", NOTE: "memories", PROSE: "prose"}
