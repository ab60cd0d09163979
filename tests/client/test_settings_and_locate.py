"""Config files, --set values, Bolt URLs, and where the package finds its modules and model."""

import json
from datetime import date

import pytest
from memgraph_recall.client import BoltAddress
from memgraph_recall.locate import PACKAGED_MODEL, query_modules_dir, use_packaged_model_by_default
from memgraph_recall.settings import default_config_path, load_config, parse_assignment


def test_config_file_tables_are_read_and_anything_else_is_refused(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('[recall]\nturns_k = 3\nlanes = ["turns", "facts"]\nsince = 2024-01-01\n'
                    '[client]\nbolt = "bolt://db:7688"\n')
    loaded = load_config(good)
    assert loaded.recall == {"turns_k": 3, "lanes": ["turns", "facts"], "since": date(2024, 1, 1)}
    assert loaded.bolt == "bolt://db:7688"
    for text, message in [("[recal]\nturns_k = 3\n", "expected only the tables"),
                          ("[client]\nhost = 'db'\n",
                           r"\[client\] has \['host'\]; expected only \['bolt', 'timeout', "
                           r"'connect_timeout'\]"),
                          ("[client]\nbolt = 7687\n", "must be a URL string"),
                          ("[recall\n", "not valid TOML")]:
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_config(bad)
    with pytest.raises(ValueError, match="no such file"):
        load_config(tmp_path / "missing.toml")


def test_no_developer_config_is_found_under_the_test_environment():
    assert default_config_path() is None


@pytest.mark.parametrize(("text", "expected"), [
    ("turns_k=4", ("turns_k", 4)),
    ("lanes=['turns']", ("lanes", ["turns"])),
    ("explain=true", ("explain", True)),
    ("embedding_model=BAAI/bge-small-en-v1.5", ("embedding_model", "BAAI/bge-small-en-v1.5")),
    ("until=2024-05-01", ("until", date(2024, 5, 1))),
])
def test_set_values_are_toml_values_or_strings(text, expected):
    assert parse_assignment(text) == expected


def test_set_without_equals_names_the_flag():
    with pytest.raises(ValueError, match="--set: expected KEY=VALUE"):
        parse_assignment("turns_k")


def test_bolt_urls():
    assert BoltAddress.parse("bolt://ann:s%40cret@db.example:7688") == BoltAddress(
        "db.example", 7688, "ann", "s@cret", False)
    assert BoltAddress.parse("localhost") == BoltAddress()
    assert BoltAddress.parse("bolt+s://db").encrypted
    with pytest.raises(ValueError, match="--bolt: expected a URL"):
        BoltAddress.parse("http://db:7687")
    with pytest.raises(ValueError, match="port"):
        BoltAddress.parse("bolt://db:port")


def test_query_modules_are_found_in_the_checkout():
    assert (query_modules_dir() / "recall.py").is_file()


def test_packaged_model_is_configured_only_where_nothing_is_set(tmp_path):
    env: dict[str, str] = {}
    use_packaged_model_by_default(env)
    assert PACKAGED_MODEL in json.loads(env["RECALL_MODELS"])
    assert env["RECALL_DEFAULT_MODEL"] == PACKAGED_MODEL

    operator = {"RECALL_MODELS": json.dumps({"BAAI/bge-small-en-v1.5": str(tmp_path)})}
    use_packaged_model_by_default(operator)
    assert operator == {"RECALL_MODELS": json.dumps({"BAAI/bge-small-en-v1.5": str(tmp_path)})}

    chosen = {"RECALL_DEFAULT_MODEL": "BAAI/bge-small-en-v1.5"}
    use_packaged_model_by_default(chosen)
    assert chosen["RECALL_DEFAULT_MODEL"] == "BAAI/bge-small-en-v1.5"
