"""`recall.status`, the doctor: what the module is, which models load, and what is embedded.

Rows share one shape, `(section, name, model, count, detail)`, so new sections (the cache's) slot in
without changing the procedure's signature.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from .cache import RecallCache
from .config import RecallConfig
from .embedding import Units, encodable, units_of
from .kinds import KINDS, PUBLIC_NAMES
from .limits import VARIABLES, Ceilings
from .models import ModelRegistry, ModelState
from .ownership import collect_owned
from .vectors import CURRENT, MALFORMED, OTHER_MODEL

#: What each ownership skip means, for the rows' detail.
SKIP_MEANINGS = {
    "session_with_another_parent": "a Session linked from another user (or from nothing but a second link)",
    "session_link_to_a_non_session": "a HAD_SESSION link to a vertex that is not a Session",
    "agent_shared_with_another_user": "an Agent linked from a session that is not this user's",
    "agent_link_to_a_non_agent": "a HAS_AGENT link to a vertex that is not an Agent",
    "action_under_another_users_session": "a message also under a session or agent that is not this user's",
    "action_link_to_a_non_action": "a HAS_ACTION link to a vertex that is not an Action",
    "action_without_id": "an Action without an action_id",
    "note_shared_with_another_user": "a Memory linked from another user",
    "note_link_to_a_non_memory": "a HAS_MEMORY link to a vertex that is not a Memory",
    "mention_with_unreadable_sources": "a MENTIONED_IN edge whose sources is not a list (or too long)",
    "entity_with_structural_label": "a mentioned vertex that carries a structural label",
    "fact_with_a_foreign_end": "a fact whose end is neither this User nor an entity",
}


def status_rows(
    version: str, models: ModelRegistry, limits: Ceilings, cache: RecallCache, live: Any, cfg: RecallConfig
) -> list[dict[str, Any]]:
    """Every row of `recall.status` (one user's units and skips with `cfg.user`, else the whole graph's)."""
    names = [models.check_name(cfg.embedding_model)] if cfg.embedding_model else list(models.names)
    states = [models.state(name) for name in names]
    rows = [
        status_row("module", "version", detail=version),
        status_row("module", "default_model", models.default_model),
    ]
    rows += [
        status_row("module", "configuration", detail=p)
        for p in (models.settings.problem, limits.problem)
        if p
    ]
    rows += limit_rows(limits)
    place = cache.place(live, by_user_id=True)
    if cfg.user is not None:
        known = cache.find_user(place, live, cfg.user) is not None
        rows.append(status_row("module", "user", detail=cfg.user if known else f"{cfg.user} (not found)"))
    rows += model_rows(states, models.default_model)
    rows += cache.status_rows(place)
    units = units_of(live, cache, cfg.user)
    if cfg.user is None:  # every user's skips (the unscoped doctor reads the whole graph)
        for user_id in place.directory.user_ids():
            for vertex in cache.live_users(place, live, user_id):
                owned = collect_owned(vertex, place.attribute, live.vertex, live.abort)
                units.skipped.update(owned.skipped)
    rows += unit_rows(units, states)
    rows += [
        status_row("ownership", reason, count=n, detail=SKIP_MEANINGS.get(reason))
        for reason, n in sorted(units.skipped.items())
    ]
    return rows


def status_row(
    section: str, name: str, model: str | None = None, count: int | None = None, detail: str | None = None
) -> dict[str, Any]:
    return {"section": section, "name": name, "model": model, "count": count, "detail": detail}


def limit_rows(ceilings: Ceilings) -> list[dict[str, Any]]:
    """The server's ceilings: each one's value and the variable that sets it."""
    return [
        status_row("limit", name, count=getattr(ceilings, name), detail=var)
        for name, var in VARIABLES.items()
    ]


def model_rows(states: Sequence[ModelState], default_model: str) -> list[dict[str, Any]]:
    rows = []
    for state in states:
        role = "default, " if state.name == default_model else ""
        detail = f"{role}loaded" if state.loaded else f"{role}failed: {state.failure}"
        rows.append(status_row("model", state.name, state.name, state.dimension, detail))
    return rows


def unit_rows(units: Units, states: Sequence[ModelState]) -> list[dict[str, Any]]:
    """Per kind: units, with/without a current vector per configured model (those a text of which cannot
    be embedded counted apart, as `unembeddable`), other models' vectors, malformed."""
    rows = []
    malformed = Counter(units.malformed)
    configured = {s.name for s in states}
    for unit_kind in KINDS:
        kind = PUBLIC_NAMES[unit_kind]
        of_kind = [u for u in units.units if u.kind == unit_kind]
        rows.append(status_row("units", kind, count=len(of_kind)))
        for state in states:
            statuses = Counter(u.status(state.name, state.dimension) for u in of_kind)
            unembeddable = sum(
                1
                for u in of_kind
                if not all(map(encodable, u.texts)) and u.status(state.name, state.dimension) != CURRENT
            )
            rows.append(status_row("with_vectors", kind, state.name, statuses[CURRENT]))
            rows.append(
                status_row(
                    "without_vectors",
                    kind,
                    state.name,
                    len(of_kind) - statuses[CURRENT] - unembeddable,
                    None if state.loaded else "model not loaded: dimension unchecked",
                )
            )
            if unembeddable:
                detail = "a text holds invalid Unicode (a lone surrogate): skipped by recall.embed"
                rows.append(status_row("unembeddable", kind, state.name, unembeddable, detail))
            for status, count in statuses.items():
                if status.startswith(MALFORMED):
                    malformed[f"{kind}: {status.removeprefix(MALFORMED)}"] += count
        others = Counter(
            u.stored()[0] for u in of_kind if u.stored()[1] is not None and u.stored()[0] not in configured
        )
        for model, count in sorted(others.items(), key=lambda item: str(item[0])):
            rows.append(status_row(OTHER_MODEL, kind, model if isinstance(model, str) else None, count))
    for reason, count in sorted(malformed.items()):
        rows.append(status_row("malformed", reason, count=count))
    return rows
