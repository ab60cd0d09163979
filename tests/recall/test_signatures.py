"""The procedures' public signatures are a contract with every client: pinned here, as `mg.procedures()`
lists them, so a refactor that renames an argument or a record field fails."""

from recall_kit import runtime

SIGNATURES = {
    "recall.render": (
        "recall.render(user :: ANY, question :: STRING, today = null :: ANY?, config = {} :: MAP) "
        ":: (text :: STRING, recalled :: MAP)",
        False,
    ),
    "recall.lanes": (
        "recall.lanes(user :: ANY, question :: STRING, config = {} :: MAP) :: (lane :: STRING, "
        "rank :: INTEGER, score :: FLOAT, node :: NODE?, relationship :: RELATIONSHIP?, key :: STRING, "
        "turn :: STRING?, passage :: INTEGER?, text :: STRING)",
        False,
    ),
    "recall.embed": (
        "recall.embed(config = {} :: MAP) :: (messages :: INTEGER, entities :: INTEGER, edges :: INTEGER, "
        "memories :: INTEGER, prose :: INTEGER, remaining :: INTEGER, model :: STRING)",
        True,
    ),
    "recall.status": (
        "recall.status(config = {} :: MAP) :: (section :: STRING, name :: STRING, model :: STRING?, "
        "count :: INTEGER?, detail :: STRING?)",
        False,
    ),
    "recall.invalidate": ("recall.invalidate(user = null :: ANY?) :: (dropped :: INTEGER)", False),
}


def test_every_procedure_signature_is_pinned():
    listed = {p["name"]: (p["signature"], p["is_write"]) for p in runtime().procedures()}
    assert listed == SIGNATURES


def test_recalled_keeps_its_public_keys():
    rt = runtime()
    [row] = rt.call("recall.render", "nobody", "anything", None, {})
    assert set(row["recalled"]) == {
        "question",
        "turns",
        "facts",
        "memories",
        "vector_lanes_off",
        "vector_lanes_off_reason",
        "facts_off_reason",
        "messages_without_vectors",
        "rows_left_out",
    }
