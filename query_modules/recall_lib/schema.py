"""The graph contract: every label, relationship type and property name recall reads or writes.

The shape is the one the context-graph libraries (PyPI `sessions-graph`, `actions-graph`) write:

    (:User {user_id})-[:HAD_SESSION]->(:Session {session_id, embedding_status, embedding_model,
                                                  embedding_scheme, embedding_error})
    (:Session)-[:HAS_ACTION]->(:Action)           a message or other action of the session
    (:Session)-[:HAS_AGENT]->(:Agent)-[:HAS_ACTION]->(:Action)   actions an SDK agent recorded
    (:Action {action_id, action_type, text, speaker, timestamp, session_id,
              passage_embeddings, embedding_model,
              prose_embedding, prose_embedding_model, prose_digest})   a message holding code
    (:Action)-[:HAS_CHUNK]->(:Chunk)<-[:MENTIONED_IN {sources: [action_id, ...]}]-(entity {text,
              embedding, embedding_model})              an entity: any vertex without a label below
    (entity or User)-[:ANY_TYPE {source_id, text, valid_at, role, confidence, embedding,
              embedding_model}]->(entity or User)     a fact, read from the Action `source_id`
    (:User)-[:HAS_MEMORY]->(:Memory {memory_id, path, content, updated_at, passage_embeddings,
              embedding_model})                     a note the user saved on purpose
    (:User)-[:ADOPTED]->(:OntologyVersion {pool})      `pool.relation_types`: [{label, description}]
    (:RecallMeta {token})                              one per database: names it (`databases`)

Who owns which of these is `ownership`'s business; what a property's value may look like, the readers'
(`reading`). recall writes only vectors (`passage_embeddings`/`embedding` with `embedding_model`) and
the Session embedding markers, in `recall.embed`; the prose vector of a message that holds fenced code
(`prose`) is recall's own, written by `recall.embed` only.
"""

# Labels
USER = "User"
SESSION = "Session"
ACTION = "Action"
AGENT = "Agent"
CHUNK = "Chunk"
MEMORY = "Memory"
ONTOLOGY = "OntologyVersion"
#: One per database, made by `memgraph-recall setup`: its `token` (a random UUID) names the database,
#: which a procedure cannot learn otherwise (module state is shared by every database of an instance).
META = "RecallMeta"
#: Labels of the graph's structure: a vertex carrying one is never an entity.
STRUCTURAL_LABELS = frozenset({USER, SESSION, ACTION, AGENT, CHUNK, MEMORY, ONTOLOGY, META})

# Relationship types
HAD_SESSION = "HAD_SESSION"
HAS_ACTION = "HAS_ACTION"
HAS_AGENT = "HAS_AGENT"
HAS_CHUNK = "HAS_CHUNK"
MENTIONED_IN = "MENTIONED_IN"
HAS_MEMORY = "HAS_MEMORY"
ADOPTED = "ADOPTED"
#: Relationship types of the structure: an edge of one is never a fact.
STRUCTURAL_TYPES = frozenset(
    {HAD_SESSION, HAS_ACTION, HAS_AGENT, HAS_CHUNK, MENTIONED_IN, HAS_MEMORY, ADOPTED}
)

# Properties
USER_ID = "user_id"
SESSION_ID = "session_id"
ACTION_ID = "action_id"
ACTION_TYPE = "action_type"
TEXT = "text"
SPEAKER = "speaker"
TIMESTAMP = "timestamp"
SOURCES = "sources"
SOURCE_ID = "source_id"
VALID_AT = "valid_at"
ROLE = "role"
CONFIDENCE = "confidence"
MEMORY_ID = "memory_id"
PATH = "path"
CONTENT = "content"
UPDATED_AT = "updated_at"
POOL = "pool"
TOKEN = "token"  # a RecallMeta's database token
#: On a RecallMeta: `true` once `memgraph-recall setup` saw Memgraph enforce unique action_ids there.
ACTION_IDS_UNIQUE = "action_ids_unique"
#: On a RecallMeta: `true` once setup saw Memgraph enforce `IS TYPED STRING` on :Action(action_id) there.
ACTION_IDS_TEXT = "action_ids_text"
HASH = "hash"  # a Chunk's content address
CHUNK_HASH = "chunk"  # on a fact edge: the hash of the Chunk it was read from (upstream's)
PASSAGE_EMBEDDINGS = "passage_embeddings"
EMBEDDING = "embedding"
EMBEDDING_MODEL = "embedding_model"
#: On an Action holding fenced code: the vector of its text without the code (`prose`), its model, and
#: the digest of the prose it was made from (a text edited since makes it stale).
PROSE_EMBEDDING = "prose_embedding"
PROSE_EMBEDDING_MODEL = "prose_embedding_model"
PROSE_DIGEST = "prose_digest"
EMBEDDING_STATUS = "embedding_status"
EMBEDDING_SCHEME = "embedding_scheme"
EMBEDDING_ERROR = "embedding_error"

#: `action_type`s of messages (a message without text is malformed; another action is not).
MESSAGE_TYPES = ("user_message", "assistant_message")
