"""The CLI over several graph files, one per database of one embedded runtime (one module state)."""

import json

import pytest
from memgraph_recall.cli import EXIT_USAGE, main
from memgraph_recall.datasets.memory_graph import MemoryGraph

QUESTION = "Where did I go hiking?"


def graph_file(path, words: str) -> str:
    """One user `ana` with one message holding `words` (no vectors: the text lane finds it)."""
    g = MemoryGraph()
    session = g.session(g.user("ana"), "ana-s1")
    g.message(session, "a1", f"ana went hiking near {words}", "2024-01-01T10:00:00Z")
    return str(g.save(path))


@pytest.fixture
def two_files(tmp_path):
    return graph_file(tmp_path / "a.json", "the alpha lake"), graph_file(tmp_path / "b.json", "a beta ridge")


def ask(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["ask", "--user", "ana", QUESTION, "--set", "lanes=[\"text\"]", *argv])
    except SystemExit as exit_info:  # argparse's own refusals
        code = exit_info.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_each_command_runs_in_the_database_it_names(capsys, two_files):
    first, second = two_files
    code, out, _ = ask(capsys, "--graph", first, "--graph-database", f"b={second}", "--database", "b")
    assert code == 0 and "beta ridge" in out and "alpha lake" not in out
    code, out, _ = ask(capsys, "--graph", first, "--graph-database", f"b={second}")
    assert code == 0 and "alpha lake" in out and "beta ridge" not in out


def test_embed_writes_the_database_it_ran_in(capsys, tmp_path, two_files):
    first, second = two_files
    output = tmp_path / "b-embedded.json"
    code = main(["embed", "--graph", first, "--graph-database", f"b={second}", "--database", "b",
                 "--output", str(output)])
    assert code == 0, capsys.readouterr().err
    texts = [e["properties"].get("text") for e in json.loads(output.read_text()) if e["type"] == "node"]
    assert "ana went hiking near a beta ridge" in texts and not any("alpha" in str(t) for t in texts)


@pytest.mark.parametrize(("extra", "words"), [
    (["--graph-database", "b=missing.json"], ["--graph-database", "missing.json", "database b"]),
    (["--graph-database", "memgraph=x.json"], ["--graph-database", "NAME=FILE"]),
    (["--graph-database", "9b=x.json"], ["--graph-database", "NAME=FILE"]),
    (["--graph-database", "nofile"], ["--graph-database", "NAME=FILE"]),
    (["--database", "c"], ["--database", "'c'", "loaded: memgraph"]),
])
def test_a_bad_database_flag_is_one_line_before_anything_loads(capsys, two_files, extra, words):
    code, _, err = ask(capsys, "--graph", two_files[0], *extra)
    assert code == EXIT_USAGE
    assert len(err.strip().splitlines()) == 1 and all(word in err for word in words), err


def test_database_flags_need_the_embedded_runtime(capsys, two_files):
    code, _, err = ask(capsys, "--bolt", "bolt://localhost:1", "--graph-database", f"b={two_files[1]}")
    assert code == EXIT_USAGE and "--graph-database: only with --graph" in err
