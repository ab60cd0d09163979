"""The config table: defaults, and a clear error naming the key for anything outside it."""

import dataclasses
import math
import re
from datetime import date, datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib.config import CHAR_BUDGET_ROWS, LANES, RecallConfig, parse_config
from recall_lib.limits import CAPPED_KEYS, Ceilings

UTC = timezone.utc
COUNT_KEYS = {
    "memories_k": 5,
    "turns_k": 8,
    "text_k": 8,
    "entities_k": 15,
    "edges_per_entity": 6,
    "facts_k": 15,
    "fact_turns_k": 8,
    "user_fact_types": 2,
    "user_facts_k": 30,
    "turn_chars": 1500,
}


def test_defaults_are_the_tables():
    config = parse_config({}, "render")
    assert config == dataclasses.replace(RecallConfig(), turns_budget=CHAR_BUDGET_ROWS)
    assert parse_config({}, "lanes") == RecallConfig()
    assert config.lanes == ("memories", "turns", "text", "entities", "facts", "user_facts")
    assert {key: getattr(config, key) for key in COUNT_KEYS} == COUNT_KEYS
    assert (config.limit, config.batch_size) == (2000, 32)
    assert config.explain is False
    assert config.exclude_sessions == frozenset()
    for key in ("embedding_model", "query_instruction", "query_vector", "min_score"):
        assert getattr(config, key) is None
    assert (config.since, config.until, config.user) == (None, None, None)


def test_the_default_budget_is_characters_and_rows_cap_it():
    """A render fits 8,000 characters, up to CHAR_BUDGET_ROWS TURN rows; `max_chars: 0` switches the
    character budget off, and then (as when lane widths are given) the rows are the widths' sum."""
    assert (parse_config({}, "render").max_chars, parse_config({}, "render").turns_budget) == (8000, 100)
    off = parse_config({"max_chars": 0}, "render")
    assert (off.max_chars, off.turns_budget) == (None, 24)
    assert parse_config({"turns_k": 1, "lanes": ["turns"]}, "render").turns_budget == 1
    assert parse_config({"turns_budget": 10}, "render").turns_budget == 10
    assert parse_config({}, "render", Ceilings(chars=5000)).max_chars == 5000  # a lowered ceiling
    with pytest.raises(ValueError, match=r"config\['max_chars'\] is 300000, above this server's ceiling"):
        parse_config({"max_chars": 300_000}, "render")


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        parse_config({}, "render").turns_k = 3


def test_unknown_key_is_named_with_every_valid_key():
    with pytest.raises(ValueError) as error:
        parse_config({"turn_k": 3}, "render")
    message = str(error.value)
    assert message.startswith("unknown config key 'turn_k' (did you mean 'turns_k'?); valid keys: ")
    valid = message.split("valid keys: ")[1].split(", ")
    assert valid == [field.name for field in dataclasses.fields(RecallConfig)]


def test_non_string_key_is_rejected():
    with pytest.raises(ValueError, match="config keys must be strings, got 1"):
        parse_config({1: 2}, "lanes")


@pytest.mark.parametrize("key", list(COUNT_KEYS))
def test_counts_must_be_non_negative_integers(key):
    assert getattr(parse_config({key: 0}, "lanes"), key) == 0
    assert getattr(parse_config({key: 11}, "render"), key) == 11
    for bad in (-1, True, 2.0, "3"):
        with pytest.raises(ValueError) as error:
            parse_config({key: bad}, "render")
        assert str(error.value) == f"config[{key!r}] must be an integer >= 0, got {bad!r}"


def test_the_issues_example_message():
    with pytest.raises(ValueError, match=re.escape("config['turns_k'] must be an integer >= 0, got -1")):
        parse_config({"turns_k": -1}, "render")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_any_integer_is_accepted_exactly_when_non_negative_and_within_the_ceiling(value):
    ceiling = Ceilings().rows
    if 0 <= value <= ceiling:
        assert parse_config({"facts_k": value}, "lanes").facts_k == value
    elif value < 0:
        with pytest.raises(ValueError, match="facts_k"):
            parse_config({"facts_k": value}, "lanes")
    else:
        with pytest.raises(ValueError, match=rf"config\['facts_k'\] is {value}, above this server's ceiling"):
            parse_config({"facts_k": value}, "lanes")


def test_ceilings_bound_every_width_and_budget_and_lower_defaults_above_them():
    low = Ceilings.from_env({"RECALL_MAX_ROWS": "10", "RECALL_MAX_FUSION_DEPTH": "50"})
    for key in CAPPED_KEYS["rows"]:
        message = re.escape(f"config['{key}'] is 11, above this server's ceiling of 10 (RECALL_MAX_ROWS)")
        with pytest.raises(ValueError, match=message):
            parse_config({key: 11}, "render", low)
        assert getattr(parse_config({key: 10}, "render", low), key) == 10
    with pytest.raises(ValueError, match=re.escape("(RECALL_MAX_FUSION_DEPTH)")):
        parse_config({"fusion_depth": 51}, "lanes", low)
    defaults = parse_config({}, "render", low)
    assert (defaults.user_facts_k, defaults.turns_budget, defaults.fusion_depth) == (10, 10, 50)
    assert defaults.turns_k == 8  # below the ceiling: unchanged
    bad = Ceilings.from_env({"RECALL_MAX_ROWS": "lots"})
    assert bad.rows == Ceilings().rows and "RECALL_MAX_ROWS must be an integer >= 1" in bad.problem


def test_query_vectors_beyond_float32_and_oversized_lists_are_refused_by_name():
    with pytest.raises(ValueError, match=r"config\['query_vector'\] must be .*float32 range, got 1e\+39"):
        parse_config({"query_vector": [1e39] * 384}, "render")
    with pytest.raises(ValueError, match=r"config\['query_vector'\] must have at most 65536 numbers"):
        parse_config({"query_vector": [0.5] * 70_000}, "render")
    with pytest.raises(ValueError, match=r"config\['exclude_sessions'\] must list at most"):
        parse_config({"exclude_sessions": ["s"] * 10_001}, "render")
    with pytest.raises(ValueError, match=r"config\['query_instruction'\] must be at most 1000"):
        parse_config({"query_instruction": "x" * 1001}, "render")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1e39, 10**400, True, "0.5", None])
def test_a_query_vector_names_the_first_number_it_cannot_take_and_where(bad):
    vector = [0.25] * 384
    vector[7] = bad
    with pytest.raises(ValueError, match=r"config\['query_vector'\] must be .* at position 7"):
        parse_config({"query_vector": vector}, "render")


def test_a_query_vector_of_ints_and_floats_is_taken_as_floats():
    assert parse_config({"query_vector": [1, 0.5, -2]}, "render").query_vector == (1.0, 0.5, -2.0)


def test_lanes_accept_lists_and_tuples_and_name_unknown_lanes():
    assert parse_config({"lanes": ["turns"]}, "render").lanes == ("turns",)
    assert parse_config({"lanes": ("text", "facts", "text")}, "lanes").lanes == ("text", "facts")
    with pytest.raises(ValueError) as error:
        parse_config({"lanes": ("turns", "vibes", "edges")}, "render")
    assert str(error.value) == (
        f"config['lanes'] must be a non-empty list of lane names ({', '.join(LANES)}); "
        "unknown: 'vibes', 'edges'"
    )
    for bad in ([], "turns", 3):
        with pytest.raises(ValueError, match=r"config\['lanes'\] must be a non-empty list of lane names"):
            parse_config({"lanes": bad}, "render")


def test_query_vector_is_finite_numbers():
    assert parse_config({"query_vector": (1, 0.5, -2)}, "lanes").query_vector == (1.0, 0.5, -2.0)
    for bad, shown in (
        ([0.1, math.nan], "nan at position 1"),
        ((math.inf,), "inf at position 0"),
        ([1.0, True], "True at position 1"),
        (["0.1"], "'0.1' at position 0"),
    ):
        with pytest.raises(ValueError) as error:
            parse_config({"query_vector": bad}, "render")
        assert (
            str(error.value)
            == "config['query_vector'] must be a non-empty list of finite numbers within float32 range, "
            f"got {shown}"
        )
    for bad in ([], "0.1", 0.1):
        with pytest.raises(ValueError, match=r"config\['query_vector'\] must be a non-empty list"):
            parse_config({"query_vector": bad}, "render")


def test_strings_flags_and_numbers():
    config = parse_config(
        {"embedding_model": "m", "query_instruction": "", "explain": True, "min_score": 0, "max_chars": 900},
        "render",
    )
    assert (config.embedding_model, config.query_instruction, config.explain) == ("m", "", True)
    assert config.min_score == 0.0 and isinstance(config.min_score, float)
    assert config.max_chars == 900
    cases = [
        ("embedding_model", "", "a non-empty string"),
        ("embedding_model", 3, "a non-empty string"),
        ("query_instruction", 1, "a string"),
        ("explain", 1, "a boolean"),
        ("min_score", math.nan, "a finite number"),
        ("min_score", "0.5", "a finite number"),
        ("max_chars", -1, "an integer >= 0"),
    ]
    for key, bad, expected in cases:
        with pytest.raises(ValueError) as error:
            parse_config({key: bad}, "render")
        assert str(error.value) == f"config[{key!r}] must be {expected}, got {bad!r}"


def test_time_window():
    config = parse_config({"since": "2024-05-01", "until": date(2024, 5, 3)}, "lanes")
    assert config.since == datetime(2024, 5, 1, tzinfo=UTC)
    assert config.until == datetime(2024, 5, 3, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_config({"since": datetime(2024, 5, 1, 12)}, "render").since == datetime(
        2024, 5, 1, 12, tzinfo=UTC
    )
    with pytest.raises(
        ValueError, match=r"^config\['since'\] must be a date, a datetime or an ISO date string"
    ):
        parse_config({"since": "last week"}, "render")
    with pytest.raises(ValueError, match=r"config\['since'\] must not be after config\['until'\]"):
        parse_config({"since": "2024-05-02", "until": "2024-05-01"}, "render")


def test_exclude_sessions():
    assert parse_config({"exclude_sessions": ("s1", "s2", "s1")}, "render").exclude_sessions == {"s1", "s2"}
    for bad in ("s1", ["s1", 2]):
        with pytest.raises(
            ValueError, match=r"config\['exclude_sessions'\] must be a list of session id strings"
        ):
            parse_config({"exclude_sessions": bad}, "lanes")


def test_embed_keys():
    config = parse_config({"user": "u1", "limit": 1, "batch_size": 64, "embedding_model": "m"}, "embed")
    assert (config.user, config.limit, config.batch_size, config.embedding_model) == ("u1", 1, 64, "m")
    for key, bad, expected in (
        ("batch_size", 65, "an integer from 1 to 64"),
        ("batch_size", 0, "an integer from 1 to 64"),
        ("limit", 0, "an integer >= 1"),
        ("user", "", "a non-empty string"),
    ):
        with pytest.raises(ValueError) as error:
            parse_config({key: bad}, "embed")
        assert str(error.value) == f"config[{key!r}] must be {expected}, got {bad!r}"
    assert parse_config({"user": "u2"}, "status").user == "u2"


def test_keys_a_procedure_does_not_use_are_ignored():
    assert parse_config({"limit": -5, "explain": "yes"}, "lanes") == RecallConfig()
    assert parse_config({"turns_k": "x", "lanes": ["nope"]}, "embed") == RecallConfig()
    assert parse_config({"batch_size": 100}, "status") == RecallConfig()
    # A key every procedure uses is checked everywhere.
    for procedure in ("render", "lanes", "embed", "status"):
        with pytest.raises(ValueError, match="embedding_model"):
            parse_config({"embedding_model": 7}, procedure)


def test_null_keeps_the_default():
    assert parse_config({"turns_k": None, "lanes": None, "since": None}, "lanes") == RecallConfig()
    assert parse_config({"turns_k": None, "max_chars": None}, "render") == parse_config({}, "render")


def test_bad_procedure_and_non_map():
    with pytest.raises(
        ValueError, match="procedure must be one of render, lanes, embed, status, got 'recall.x'"
    ):
        parse_config({}, "recall.x")
    with pytest.raises(ValueError, match=r"config must be a map, got \['turns_k'\]"):
        parse_config(["turns_k"], "render")
