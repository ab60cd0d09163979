"""Server-side ceilings: the largest question and config values this database accepts.

Why on the server: whoever calls a procedure controls its `config`, so a bound a caller can raise is
no bound. The operator sets these in the Memgraph process's environment; a per-call config may only
stay at or below them, and a value above one is an error naming the key, the value and the ceiling.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from .environment import env_number

#: The config keys that set how many of something a lane takes.
WIDTH_KEYS = (
    "memories_k",
    "turns_k",
    "text_k",
    "entities_k",
    "edges_per_entity",
    "facts_k",
    "fact_turns_k",
    "user_fact_types",
    "user_facts_k",
)
#: Config keys bounded by each ceiling (field name of `Ceilings`).
CAPPED_KEYS: Mapping[str, tuple[str, ...]] = {
    "rows": (*WIDTH_KEYS, "turns_budget"),
    "fusion_depth": ("fusion_depth",),
    "turn_chars": ("turn_chars",),
    "chars": ("max_chars",),
    "embed_limit": ("limit",),
}


@dataclass(frozen=True)
class Ceilings:
    """Each ceiling with its environment variable (the field's metadata) and default."""

    question_chars: int = 4000
    rows: int = 200
    fusion_depth: int = 1000
    turn_chars: int = 20_000
    chars: int = 200_000  # the character budget of one render (`max_chars`)
    embed_limit: int = 10_000
    holders: int = 100_000  # entries of the fast call shape's signature lists
    problem: str | None = None  # a malformed variable: its default is used and status reports it

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Ceilings":
        env = os.environ if env is None else env
        problems: list[str] = []
        defaults = cls()
        values = {
            name: env_number(env, var, int, getattr(defaults, name), 1, problems)
            for name, var in VARIABLES.items()
        }
        return cls(**values, problem="; ".join(problems) or None)

    def of_key(self, key: str) -> tuple[int, str] | None:
        """(ceiling, its variable) for a config key it bounds, else None."""
        for name, keys in CAPPED_KEYS.items():
            if key in keys:
                return getattr(self, name), VARIABLES[name]
        return None


#: The environment variable of each ceiling.
VARIABLES: Mapping[str, str] = {
    field.name: f"RECALL_MAX_{field.name.upper()}" for field in fields(Ceilings) if field.name != "problem"
}

#: The ceilings when the environment sets none.
DEFAULT_CEILINGS = Ceilings()
