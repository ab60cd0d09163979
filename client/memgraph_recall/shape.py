"""The fast call shape: the Cypher the client sends, and the setup that makes it fast.

Python procedures cannot use Memgraph's indexes and have no degree call, so the caller's Cypher does
what only Cypher can do cheaply, in the call's own transaction, and hands it to the procedure as the
`user` map (`query_modules/recall_lib/callshape.py` reads it):
- `users`: the :User nodes with the user_id, through the `:User(user_id)` index (no row at all for an
  unknown user: the procedure is not even called);
- `metas`: the database's :RecallMeta nodes, through the `:RecallMeta` label index (which database
  this is: module state is shared by every database of an instance);
- for each holder (the User, its Sessions, their Agents): its vertex id, its degree and the sum of its
  edge ids, so the procedure reads only the holders that changed since it last looked.

`memgraph_recall.embedded.prelude` computes the same map over an embedded store; the image's
integration tests check both forms return the same rows on real Memgraph.
"""

#: Finds the user and the database, and each holder's signature; `{call}` is the procedure call.
_PRELUDE = """\
OPTIONAL MATCH (meta:RecallMeta)
WITH collect(meta) AS metas
MATCH (u:User {user_id: $user})
WITH metas, collect(u) AS users
WITH metas, users, users[0] AS u
OPTIONAL MATCH (u)-[:HAD_SESSION]->(s)
WITH metas, users, u, collect(DISTINCT s) AS sessions
OPTIONAL MATCH (u)-[:HAD_SESSION]->()-[:HAS_AGENT]->(a)
WITH metas, users, u, sessions, collect(DISTINCT a) AS agents
UNWIND [u] + sessions + agents AS h
OPTIONAL MATCH (h)-[o]->()
WITH metas, users, h, count(o) AS outs, sum(id(o)) AS out_sum
OPTIONAL MATCH (h)<-[i]-()
WITH metas, users, h, outs + count(i) AS edges, out_sum + sum(id(i)) AS edge_ids
WITH metas, users, collect(id(h)) AS holders, collect(toInteger(edges)) AS degrees,
     collect(toInteger(edge_ids)) AS id_sums
WITH {users: users, metas: metas, holders: holders, degrees: degrees, id_sums: id_sums} AS shape
"""

FAST_QUERIES = {
    "recall.render": _PRELUDE + "CALL recall.render(shape, $q, $today, $config) YIELD text, recalled "
    "RETURN text, recalled",
    "recall.lanes": _PRELUDE + "CALL recall.lanes(shape, $q, $config) "
    "YIELD lane, rank, score, node, relationship, key, turn, passage, text "
    "RETURN lane, rank, score, node, relationship, key, turn, passage, text",
}

#: What `memgraph-recall setup` runs: the indexes the fast shape reads through, and the database's
#: RecallMeta (created once; its random token names the database for as long as it exists).
SETUP = (
    "CREATE INDEX ON :User(user_id)",
    "CREATE INDEX ON :RecallMeta",
    "MERGE (m:RecallMeta) ON CREATE SET m.token = randomUUID(), m.created_at = localDateTime()",
)
#: What makes facts and entities attributable (`query_modules/recall_lib/ownership.py`): Memgraph then
#: refuses a second Action with an action_id, so an action_id names one Action; and with every
#: action_id typed a string, no integer id can be cited as another user's text id. `setup` creates
#: both, reads back what Memgraph holds (`SHOW CONSTRAINT INFO`) and records it on the RecallMeta,
#: which the module reads on every call (a procedure cannot see constraints).
UNIQUE_ACTION_IDS = "CREATE CONSTRAINT ON (a:Action) ASSERT a.action_id IS UNIQUE"
TEXT_ACTION_IDS = "CREATE CONSTRAINT ON (a:Action) ASSERT a.action_id IS TYPED STRING"
#: Actions whose action_id is not a string: Memgraph refuses the type constraint over any of them.
NOT_TEXT_ACTION_IDS = (
    "MATCH (a:Action) WHERE a.action_id IS NOT NULL AND valueType(a.action_id) <> 'STRING' "
    "RETURN count(a) AS actions"
)
#: How an operator makes every action_id a string (the uniqueness constraint refuses a conversion
#: that would make two equal ids: those must be renamed first).
TEXT_FIX = (
    "MATCH (a:Action) WHERE valueType(a.action_id) IN ['INTEGER', 'FLOAT'] "
    "SET a.action_id = toString(a.action_id)"
)
SHOW_CONSTRAINTS = "SHOW CONSTRAINT INFO"
RECORD_RULE = (
    "MATCH (m:RecallMeta) SET m.action_ids_unique = $unique, m.action_ids_text = $text "
    "RETURN count(m) AS metas"
)


def _on_action_ids(row: dict) -> bool:
    properties = row.get("properties")
    properties = [properties] if isinstance(properties, str) else list(properties or ())
    return row.get("label") == "Action" and properties == ["action_id"]


def action_ids_enforced(constraints: list[dict]) -> bool:
    """Whether `SHOW CONSTRAINT INFO` rows hold the uniqueness constraint on :Action(action_id)."""
    return any(str(r.get("constraint type", "")).lower() == "unique" and _on_action_ids(r)
               for r in constraints)


def action_ids_typed_text(constraints: list[dict]) -> bool:
    """Whether `SHOW CONSTRAINT INFO` rows hold `IS TYPED STRING` on :Action(action_id) (Memgraph lists
    it as constraint type "data_type", data_type "STRING")."""
    return any(
        str(r.get("constraint type", "")).lower() == "data_type"
        and str(r.get("data_type", "")).upper() == "STRING"
        and _on_action_ids(r)
        for r in constraints
    )


#: `setup --new-token`: a database copied from another (a restored snapshot) gets a token of its own.
NEW_TOKEN = "MATCH (m:RecallMeta) SET m.token = randomUUID() RETURN count(m) AS metas"
#: The RecallMeta tokens of this database, for `status`.
TOKENS = "MATCH (m:RecallMeta) RETURN m.token AS token"
