"""`recall.status`, the doctor: what the module is, which models load, and what is embedded.

Rows share one shape, `(section, name, model, count, detail)`, so new sections (the cache's) slot in
without changing the procedure's signature.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from .embedding import KINDS, Units, encodable
from .limits import VARIABLES, Ceilings
from .models import ModelState
from .vectors import CURRENT, MALFORMED, OTHER_MODEL


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
    for kind in KINDS:
        of_kind = [u for u in units.units if u.kind == kind]
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
