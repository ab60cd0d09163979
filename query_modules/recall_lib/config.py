"""The ``config`` map every recall procedure takes: one table, validated once, into a frozen ``RecallConfig``.

A key outside the table is an error naming it (a typo must not silently
change nothing); a key of the table that the calling procedure does not use is
accepted and ignored (neither checked nor applied), so one map can be shared
between calls. A key given as ``null`` keeps its default. Lists arrive from
Memgraph as tuples; lists and tuples are both accepted.
"""

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from .limits import DEFAULT_CEILINGS, WIDTH_KEYS, Ceilings
from .ranking import RankingWeights
from .timeparse import parse_bound_arg

#: Every lane, in the order they are run and rendered.
LANES = ("memories", "turns", "text", "entities", "facts", "user_facts")

#: The procedures that take a config, by their name inside the ``recall`` module.
PROCEDURES = ("render", "lanes", "embed", "status")

#: Most texts ``recall.embed`` sends to the model at once.
MAX_BATCH_SIZE = 64


@dataclass(frozen=True)
class RecallConfig:
    """One call's settings; field defaults are the table's defaults.

    ``embedding_model`` and ``query_instruction`` stay ``None`` when not given:
    the model registry resolves the server's default model and that model's
    instruction. ``since``/``until`` are aware UTC datetimes, both inclusive
    (a date covers its whole day).
    """

    lanes: tuple[str, ...] = LANES
    memories_k: int = 5
    turns_k: int = 8
    text_k: int = 8
    entities_k: int = 15
    edges_per_entity: int = 6
    facts_k: int = 15
    fact_turns_k: int = 8
    user_fact_types: int = 2
    user_facts_k: int = 30
    turn_chars: int = 1500
    gather_piece_chars: int = 200  # under a budget, a gathering question's shortest piece (0: as any)
    sweep_piece_chars: int = 60  # under a budget, a sweeping question's shortest piece (0: as gathering)
    deep_piece_chars: int = 150  # under a budget, a long message's shortest piece in deeper rows (0: off)
    turns_budget: int = 24  # the cap on TURN rows; see `default_turns_budget`
    fusion_k: int = 5
    gather_fusion_k: int = 20  # the fusion's constant for a question that gathers (see `ranking`)
    sweep_fusion_k: int = 150  # the fusion's constant for a question that sweeps a topic (see `ranking`)
    fusion_depth: int = 300
    speaker_boost: float = 1.0
    session_boost: float = 0.2
    neighbour_boost: float = 0.5
    date_boost: float = 1.0
    role_boost: float = 2.0
    other_side_spill: float = 0.25
    session_spread: float = 0.2
    sweep_spread: float = 0.05
    exchange_share: float = 1.0  # a summary: the share of a turn's score the other half of its exchange gets
    opener_boost: float = 2.0
    rule_boost: float = 1.0
    score_share: float = 0.3  # the share of the text and turns lanes' votes that follows their scores
    feedback_turns: int = 5
    instruction_turns: int = 1
    rule_turns: int = 2
    facet_turns: int = 1
    text_inflections: bool = True  # BM25: a word the user never wrote is searched by its written relatives
    prose_vectors: bool = True  # a turn holding fenced code scored by its prose vector (`lanes.turn_cosines`)
    embedding_model: str | None = None
    query_instruction: str | None = None
    query_vector: tuple[float, ...] | None = None
    explain: bool = False
    max_chars: int | None = 8000  # the render's character budget (None: off, given as 0)
    min_score: float | None = None
    since: datetime | None = None
    until: datetime | None = None
    exclude_sessions: frozenset[str] = frozenset()
    user: str | None = None
    limit: int = 2000
    batch_size: int = 32

    @property
    def ranking(self) -> RankingWeights:
        """The fused turn ranking's weights (see `ranking`)."""
        return RankingWeights(
            self.fusion_k,
            self.speaker_boost,
            self.session_boost,
            self.neighbour_boost,
            self.date_boost,
            self.role_boost,
            self.other_side_spill,
            self.session_spread,
            self.opener_boost,
            self.gather_fusion_k,
            self.sweep_fusion_k,
            self.sweep_spread,
            self.exchange_share,
            self.rule_boost,
            self.score_share,
        )


def parse_config(config: Mapping, procedure: str, ceilings: Ceilings = DEFAULT_CEILINGS) -> RecallConfig:
    """``config`` validated for ``procedure`` (``render``, ``lanes``, ``embed`` or ``status``).

    A key the server bounds (see ``limits``) may not exceed its ceiling; a default above a ceiling
    the operator lowered is taken down to it.
    """
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure must be one of {', '.join(PROCEDURES)}, got {procedure!r}")
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a map, got {config!r}")
    values: dict[str, object] = {}
    for key, value in config.items():
        if key not in _KEYS:
            raise ValueError(_unknown_key_message(key))
        check, used_by = _KEYS[key]
        if procedure in used_by and value is not None:
            values[key] = _within_ceiling(key, check(key, value), ceilings)
    for key in _KEYS:
        cap = ceilings.of_key(key)
        if cap is not None and key not in values and getattr(RecallConfig, key) > cap[0]:
            values[key] = cap[0]
    if values.get("max_chars") == 0:
        values["max_chars"] = None  # 0: no character budget, the rows alone
    if procedure in _QUERYING and "turns_budget" not in values:
        budget = default_turns_budget(replace(RecallConfig(), **values), procedure, config)
        values["turns_budget"] = min(budget, ceilings.rows)
    parsed = replace(RecallConfig(), **values)
    if parsed.since is not None and parsed.until is not None and parsed.since > parsed.until:
        raise ValueError(
            "config['since'] must not be after config['until'], "
            f"got {config['since']!r} and {config['until']!r}"
        )
    return parsed


def _within_ceiling(key: str, value: object, ceilings: Ceilings) -> object:
    cap = ceilings.of_key(key)
    if cap is not None and isinstance(value, int) and value > cap[0]:
        raise ValueError(f"config[{key!r}] is {value}, above this server's ceiling of {cap[0]} ({cap[1]})")
    return value


#: The cap on TURN rows when a character budget decides how many are shown (`default_turns_budget`):
#: room for 8,000 characters of short messages (~60 a texting history) without ranking hundreds.
CHAR_BUDGET_ROWS = 100


def default_turns_budget(cfg: RecallConfig, procedure: str, given: Mapping) -> int:
    """The cap on TURN rows when `turns_budget` is not given. A render under a character budget shows
    what fits, up to `CHAR_BUDGET_ROWS`; otherwise (no budget, `recall.lanes`, or lane widths given)
    the widths of the turn lanes that run, so configs written for per-lane widths keep their meaning
    (`lanes: ["turns"], turns_k: 1` shows one turn) and the defaults (8 + 8 + 8) give 24.
    """
    widths_given = any(given.get(key) is not None for key in ("text_k", "turns_k", "fact_turns_k"))
    if procedure == "render" and cfg.max_chars is not None and not widths_given:
        return CHAR_BUDGET_ROWS
    return _budget_of_widths(cfg)


def _budget_of_widths(cfg: RecallConfig) -> int:
    """The widths of the turn lanes that run."""
    lanes = set(cfg.lanes)
    return (
        (cfg.text_k if "text" in lanes else 0)
        + (cfg.turns_k if "turns" in lanes else 0)
        + (cfg.fact_turns_k if lanes & {"entities", "facts", "user_facts"} else 0)
    )


def _unknown_key_message(key: object) -> str:
    """The error for a key outside the table: the key, a likely intended one, and every valid key."""
    if not isinstance(key, str):
        return f"config keys must be strings, got {key!r}; valid keys: {', '.join(_KEYS)}"
    close = difflib.get_close_matches(key, list(_KEYS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown config key {key!r}{hint}; valid keys: {', '.join(_KEYS)}"


def _fail(key: str, expected: str, value: object) -> ValueError:
    return ValueError(f"config[{key!r}] must be {expected}, got {value!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(key: str, value: object) -> int:
    if not _is_int(value) or value < 0:
        raise _fail(key, "an integer >= 0", value)
    return value


def _positive(key: str, value: object) -> int:
    if not _is_int(value) or value < 1:
        raise _fail(key, "an integer >= 1", value)
    return value


def _bounded_int(low: int, high: int) -> Callable[[str, object], int]:
    def check(key: str, value: object) -> int:
        if not _is_int(value) or not low <= value <= high:
            raise _fail(key, f"an integer from {low} to {high}", value)
        return value

    return check


def _bounded_number(low: float, high: float) -> Callable[[str, object], float]:
    def check(key: str, value: object) -> float:
        if not _is_number(value) or not math.isfinite(value) or not low <= value <= high:
            raise _fail(key, f"a number from {low:g} to {high:g}", value)
        return float(value)

    return check


def _name(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, "a non-empty string", value)
    return value


#: The longest query instruction accepted (models' own are under a hundred characters).
MAX_INSTRUCTION_CHARS = 1000


def _string(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise _fail(key, "a string", value)
    if len(value) > MAX_INSTRUCTION_CHARS:
        raise ValueError(
            f"config[{key!r}] must be at most {MAX_INSTRUCTION_CHARS} characters, got {len(value)}"
        )
    return value


def _boolean(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(key, "a boolean", value)
    return value


def _number(key: str, value: object) -> float:
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(key, "a finite number", value)
    return float(value)


def _lanes(key: str, value: object) -> tuple[str, ...]:
    expected = f"a non-empty list of lane names ({', '.join(LANES)})"
    if not isinstance(value, (list, tuple)) or not value:
        raise _fail(key, expected, value)
    unknown = [lane for lane in value if lane not in LANES]
    if unknown:
        raise ValueError(f"config[{key!r}] must be {expected}; unknown: {', '.join(map(repr, unknown))}")
    return tuple(dict.fromkeys(value))


#: The largest magnitude a float32 vector holds: beyond it a number becomes infinite when packed.
FLOAT32_MAX = 3.4028234663852886e38
#: More numbers than any embedding model has dimensions: refused before each is checked.
MAX_VECTOR_LENGTH = 65_536
#: A piece longer than a long message's passages is no piece (the `*_piece_chars` keys).
MAX_PIECE_CHARS = 20_000
#: More sessions than a caller excludes in earnest.
MAX_EXCLUDED_SESSIONS = 10_000


def _vector(key: str, value: object) -> tuple[float, ...]:
    expected = "a non-empty list of finite numbers within float32 range"
    if not isinstance(value, (list, tuple)) or not value:
        raise _fail(key, expected, value)
    if len(value) > MAX_VECTOR_LENGTH:
        raise ValueError(f"config[{key!r}] must have at most {MAX_VECTOR_LENGTH} numbers, got {len(value)}")
    if set(map(type, value)) <= {float, int}:  # the usual vector, checked at numpy's pace
        try:
            numbers = np.asarray(value, dtype=np.float64)
        except OverflowError:  # an int beyond any float: named below
            numbers = None
        if numbers is not None and bool(np.all(np.abs(numbers) <= FLOAT32_MAX)):  # NaN fails too
            return tuple(numbers.tolist())
    for position, item in enumerate(value):
        if not _is_number(item) or abs(item) > FLOAT32_MAX or not math.isfinite(item):
            raise ValueError(f"config[{key!r}] must be {expected}, got {item!r} at position {position}")
    return tuple(float(item) for item in value)


def _session_ids(key: str, value: object) -> frozenset[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise _fail(key, "a list of session id strings", value)
    if len(value) > MAX_EXCLUDED_SESSIONS:
        raise ValueError(
            f"config[{key!r}] must list at most {MAX_EXCLUDED_SESSIONS} sessions, got {len(value)}"
        )
    return frozenset(value)


def _since(key: str, value: object) -> datetime | None:
    return parse_bound_arg(value, f"config[{key!r}]", upper=False)


def _until(key: str, value: object) -> datetime | None:
    return parse_bound_arg(value, f"config[{key!r}]", upper=True)


_QUERYING = ("render", "lanes")
_ALL = PROCEDURES

#: The table: key -> (validator returning the parsed value, procedures that use the key), in table order.
_KEYS: dict[str, tuple[Callable[[str, object], object], tuple[str, ...]]] = {
    "lanes": (_lanes, _QUERYING),
    **{key: (_count, _QUERYING) for key in (*WIDTH_KEYS, "turn_chars")},
    "gather_piece_chars": (_bounded_int(0, MAX_PIECE_CHARS), ("render",)),
    "sweep_piece_chars": (_bounded_int(0, MAX_PIECE_CHARS), ("render",)),
    "deep_piece_chars": (_bounded_int(0, MAX_PIECE_CHARS), ("render",)),
    "turns_budget": (_count, _QUERYING),
    "fusion_k": (_bounded_int(1, 1000), _QUERYING),
    "gather_fusion_k": (_bounded_int(1, 1000), _QUERYING),
    "sweep_fusion_k": (_bounded_int(1, 1000), _QUERYING),
    "fusion_depth": (_positive, _QUERYING),
    "speaker_boost": (_bounded_number(0, 10), _QUERYING),
    "session_boost": (_bounded_number(0, 2), _QUERYING),
    "neighbour_boost": (_bounded_number(0, 1), _QUERYING),
    "date_boost": (_bounded_number(0, 10), _QUERYING),
    "role_boost": (_bounded_number(0, 10), _QUERYING),
    "other_side_spill": (_bounded_number(0, 1), _QUERYING),
    "session_spread": (_bounded_number(0, 10), _QUERYING),
    "sweep_spread": (_bounded_number(0, 10), _QUERYING),
    "exchange_share": (_bounded_number(0, 1), _QUERYING),
    "opener_boost": (_bounded_number(0, 10), _QUERYING),
    "rule_boost": (_bounded_number(0, 10), _QUERYING),
    "score_share": (_bounded_number(0, 1), _QUERYING),
    "feedback_turns": (_bounded_int(0, 50), _QUERYING),
    "instruction_turns": (_bounded_int(0, 20), _QUERYING),
    "rule_turns": (_bounded_int(0, 20), _QUERYING),
    "facet_turns": (_bounded_int(0, 20), _QUERYING),
    "text_inflections": (_boolean, _QUERYING),
    "prose_vectors": (_boolean, _QUERYING),
    "embedding_model": (_name, _ALL),
    "query_instruction": (_string, _QUERYING),
    "query_vector": (_vector, _QUERYING),
    "explain": (_boolean, ("render",)),
    "max_chars": (_count, ("render",)),
    "min_score": (_number, _QUERYING),
    "since": (_since, _QUERYING),
    "until": (_until, _QUERYING),
    "exclude_sessions": (_session_ids, _QUERYING),
    "user": (_name, ("embed", "status")),
    "limit": (_positive, ("embed",)),
    "batch_size": (_bounded_int(1, MAX_BATCH_SIZE), ("embed",)),
}
