"""Module loading and Memgraph's registration rules: a failing module is reported, others load."""

import sys
from pathlib import Path

import pytest
from memgraph_recall.embedded import ProcedureNotFoundError, Runtime

BAD = Path(__file__).parent / "modules_bad"
GOOD = Path(__file__).parent / "modules_good"


@pytest.fixture(scope="module")
def bad_runtime() -> Runtime:
    return Runtime(BAD)


@pytest.mark.parametrize(
    ("module", "last_line"),
    [
        ("bad_dict", "mgp.UnsupportedTypingError: Unsupported typing annotation '<class 'dict'>'"),
        ("bad_typing_dict",
         "mgp.UnsupportedTypingError: Unsupported typing annotation 'typing.Dict[str, int]'"),
        ("bad_pep604", "mgp.UnsupportedTypingError: Unsupported typing annotation 'str | None'"),
        ("bad_future", "mgp.UnsupportedTypingError: Unsupported typing annotation 'mgp.ProcCtx'"),
        ("bad_generator", "NotImplementedError: Generator functions are not supported"),
        ("bad_default_none",
         "ValueError: The default value None of argument 'k' doesn't satisfy the type INTEGER."),
        ("bad_default_int_for_float",
         "ValueError: The default value 1 of argument 'threshold' doesn't satisfy the type FLOAT."),
        ("bad_import", "ModuleNotFoundError: No module named 'not_an_installed_package_for_recall_tests'"),
        ("bad_return_annotation", "TypeError: Expected 'p' to return 'mgp.Record', got '<class 'type'>'"),
    ],
)
def test_rule_breaking_module_fails_to_load_with_its_traceback(bad_runtime, module, last_line):
    error = bad_runtime.load_errors[module]
    assert error.startswith("Traceback (most recent call last):")
    assert f"modules_bad/{module}.py" in error
    assert error.strip().splitlines()[-1] == last_line
    assert module not in bad_runtime.modules
    with pytest.raises(ProcedureNotFoundError, match=rf"^There is no procedure named '{module}.p'\.$"):
        bad_runtime.call(f"{module}.p")


def test_other_modules_still_load(bad_runtime):
    assert set(bad_runtime.modules) == {"fine"}
    assert bad_runtime.call("fine.ok") == [{"ok": True}]
    assert [p["name"] for p in bad_runtime.procedures()] == ["fine.ok"]


def test_load_failure_is_logged_like_memgraph(bad_runtime):
    errors = [msg for level, msg in bad_runtime.logs if level == "error"]
    assert any(msg.startswith('Unable to load module "') and "bad_dict.py" in msg for msg in errors)


def test_good_module_loads_helper_package_but_not_as_a_module(runtime):
    assert set(runtime.modules) == {"sample"}  # sample_lib/ is a package, not a module
    assert str(GOOD) in sys.path


def test_procedures_lists_signatures_like_mg_procedures(runtime):
    listed = {p["name"]: p for p in runtime.procedures()}
    assert listed["sample.echo"]["signature"] == (
        "sample.echo(value :: ANY?, number = 1 :: NUMBER, options = {} :: MAP, tags = [] :: LIST OF STRING)"
        " :: (value :: ANY?, value_type :: STRING, number :: NUMBER, options :: MAP, tags_type :: STRING)"
    )
    assert listed["sample.typed"]["signature"] == (
        "sample.typed(count :: INTEGER, ratio :: FLOAT, flag :: BOOLEAN, maybe = null :: STRING?)"
        " :: (count :: INTEGER, ratio :: FLOAT, flag :: BOOLEAN, maybe :: STRING?)"
    )
    assert listed["sample.describe"]["signature"].endswith(
        ":: (labels :: LIST OF STRING, keys :: LIST OF STRING, vector_type :: STRING?, shouted :: STRING?)")
    assert listed["sample.add_message"]["is_write"] is True
    assert listed["sample.echo"]["is_write"] is False
    assert listed["sample.say"]["signature"] == "sample.say(level :: STRING, message :: STRING) :: ()"
    assert listed["sample.echo"]["path"].endswith("modules_good/sample.py")
    assert [f["name"] for f in runtime.functions()] == ["sample.shout"]


def test_modules_dir_must_exist(tmp_path):
    with pytest.raises(ValueError, match="modules_dir must be an existing folder"):
        Runtime(tmp_path / "missing")
