"""The README and the pages under docs/ as a newcomer follows them: commands, install lines, paths, links
and runnable blocks.

What is checked:
- every `memgraph-recall ...` command in it (a fenced line, an inline code span, the "args" of an MCP
  client's config) parses with the CLI's own parser; the lines of the synopsis (those with `[` or `|`)
  name real commands, and every flag on them exists in one of the commands they name;
- every `pip install` of memgraph-recall itself installs this checkout (`.`, never the registry's
  `memgraph-recall`), with extras that `pyproject.toml` declares;
- every repository path it names exists (a path whose first part is a top-level entry of the
  repository, or that starts with `recall_lib/` or `memgraph_recall/`; `../` from a docs page);
- every link between pages reaches a file, and its `#anchor` a heading there; every docs page is
  linked from the README;
- the runnable blocks run. The marker is an HTML comment alone on the line before the fence, so it
  does not show on the rendered page:
  - `<!-- offline -->`: a shell block that runs offline in seconds without loading a model; it runs
    as one `bash -eu` script in a scratch folder and must exit 0;
  - `<!-- offline: model -->`: a Python block that needs the `[embedded]` extra (and what it
    imports) and loads the packaged model, but no server and no data; it runs in this process, in a
    scratch folder.
"""

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from memgraph_recall.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = {path.relative_to(ROOT).as_posix(): path.read_text() for path in
         [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
README = PAGES["README.md"]
OFFLINE, OFFLINE_MODEL = "<!-- offline -->", "<!-- offline: model -->"
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
#: `memgraph-recall` where a shell runs it: a line's first word (after VAR=value settings), or after
#: `&&`, `;`, `--` (`claude mcp add memory -- memgraph-recall ...`); not an image tag (`-t memgraph-recall`).
COMMAND = re.compile(r"(?:^|&&|;|\s--)\s*(?:\w+=\S+\s+)*memgraph-recall(?=\s+\S)")
#: Where a path the README names without its top folder lives.
PREFIXES = {"recall_lib/": "query_modules/recall_lib/", "memgraph_recall/": "client/memgraph_recall/"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    marker: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page, text in PAGES.items():
        lines, index = text.split("\n"), 0
        while index < len(lines):
            fence = re.match(r"^(\s*)```(\w*)\s*$", lines[index])  # in a list item too, indented
            if fence:
                end = next(i for i in range(index + 1, len(lines)) if lines[i].strip().startswith("```"))
                before = lines[index - 1].strip() if index else ""
                marker = before if before.startswith("<!--") else ""
                body = "\n".join(line.removeprefix(fence.group(1)) for line in lines[index + 1:end])
                found.append(Block(page, index + 1, fence.group(2), marker, body))
                index = end
            index += 1
    return found


def prose(page: str) -> str:
    """A page without its fenced blocks."""
    return re.sub(r"^\s*```.*?^\s*```", "", PAGES[page], flags=re.MULTILINE | re.DOTALL)


def inline_spans() -> list[str]:
    return [span for page in PAGES for span in re.findall(r"`([^`\n]+)`", prose(page))]


def shell_lines(text: str) -> list[str]:
    """Lines of a shell block, continuations joined."""
    return text.replace("\\\n", " ").split("\n")


def commands() -> list[tuple[str, list[str]]]:
    """(where, argv) of every `memgraph-recall` command the README shows, the synopsis left out."""
    found = []
    sources = [(b.where, line) for b in blocks() if b.language in ("bash", "")
               for line in shell_lines(b.text)]
    sources += [("inline", span) for span in inline_spans()]
    for where, line in sources:
        start = COMMAND.search(line)
        if start is None or is_synopsis(line):
            continue
        found.append((f"{where}: {line.strip()}", shlex.split(line[start.end():], comments=True)))
    for block in blocks():
        for args in re.findall(r'"command":\s*"[^"]*",\s*"args":\s*(\[[^\]]*\])', block.text):
            argv = json.loads(args)
            argv = argv[2:] if argv[:2] == ["-m", "memgraph_recall"] else argv
            found.append((f"{block.where}: {args}", argv))
    return found


def is_synopsis(line: str) -> bool:
    return " [" in line or " | " in line


def synopsis_lines() -> list[str]:
    return [line for b in blocks() if b.language == "" for line in b.text.split("\n")
            if line.startswith("memgraph-recall ") and is_synopsis(line)]


def parse(argv: list[str]) -> str | None:
    """None when the CLI's parser accepts `argv` (`--help` included), else its one-line error."""
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command").choices
    for each in (parser, *commands.values()):
        each.allow_abbrev = False  # `--max-char` would pass for `--max-chars`: the README must spell it out
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            parser.parse_args(argv)
    except SystemExit as exit_info:
        return None if exit_info.code == 0 else err.getvalue().strip()
    return None


def test_every_memgraph_recall_command_parses_with_the_clis_parser():
    shown = commands()
    assert len(shown) >= 25  # the README shows that many; fewer means this test stopped finding them
    assert {argv[0] for _, argv in shown} >= {"demo", "ask", "embed", "status", "setup", "export", "load",
                                              "mcp"}
    refused = [f"{where} -> {error}" for where, argv in shown if (error := parse(argv)) is not None]
    assert refused == []


def test_the_synopsis_names_real_commands_and_flags():
    parser = build_parser()
    subparsers = next(action for action in parser._actions if action.dest == "command").choices
    lines = synopsis_lines()
    assert len(lines) >= 6
    for line in lines:
        body = line.split("#")[0].removeprefix("memgraph-recall ")
        named = [body.split()[0]] + re.findall(r"\| ([a-z]+)\b", body)
        named = [name for name in named if not name.startswith("-")]
        assert named and all(name in subparsers for name in named), line
        flags = set(re.findall(r"(--[a-z-]+)", body))
        known = {flag for name in named for action in subparsers[name]._actions
                 for flag in action.option_strings}
        assert flags <= known, (line, flags - known)


def pip_installs() -> list[str]:
    lines = [line for b in blocks() for line in shell_lines(b.text)] + inline_spans()
    return [match for line in lines for match in re.findall(r"pip install ([^&;#`]*)", line)]


def test_every_pip_install_of_memgraph_recall_names_this_checkout_with_declared_extras():
    ours = []
    for arguments in pip_installs():
        for spec in (word for word in shlex.split(arguments) if not word.startswith("-")):
            assert "memgraph-recall" not in spec, f"pip install {arguments}: not on a registry, install '.'"
            if spec == "." or spec.startswith(".["):
                ours.append(spec)
                extras = set(filter(None, spec.removeprefix(".").strip("[]").split(",")))
                assert extras <= EXTRAS, f"pip install {arguments}: no extra {extras - EXTRAS}"
    assert {".[embedded]", ".[dev]", ".[mcp]", ".[mcp,embedded]", ".[langchain]", "."} <= set(ours)


def links() -> list[tuple[str, str]]:
    """(page, target) of every markdown link outside code blocks."""
    return [(page, target) for page in PAGES for target in re.findall(r"\]\(([^)\s]+)\)", prose(page))]


def named_paths() -> set[str]:
    top = {entry.name for entry in ROOT.iterdir() if entry.name not in (".git", ".venv")}
    text = " ".join(inline_spans() + [b.text for b in blocks()] + [target for _, target in links()])
    paths = set()
    for token in re.split(r"[\s`'\"(),;:=\[\]{}]+", text):
        token = token.partition("#")[0].rstrip(".").removeprefix("./").removeprefix("../")
        if not token or any(mark in token for mark in "*$<>"):
            continue
        for short, full in PREFIXES.items():
            if token.startswith(short):
                token = full + token.removeprefix(short)
        if token.split("/")[0] in top and ("/" in token or "." in token):
            paths.add(token)
    return paths


def test_every_repository_path_it_names_exists():
    paths = named_paths()
    assert {"query_modules/recall_lib/ranking.py", "scripts/eval_locomo.py", ".ci/run"} <= paths
    assert sorted(path for path in paths if not (ROOT / path).exists()) == []


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S),
                                      flags=re.M)}


def test_every_link_between_pages_reaches_a_file_and_its_anchor():
    checked, broken = 0, []
    for page, target in links():
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = (ROOT / page).parent / path if path else ROOT / page
        checked += 1
        if not resolved.exists():
            broken.append(f"{page}: {target} (no file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text()):
            broken.append(f"{page}: {target} (no heading #{anchor})")
    assert checked >= 15 and broken == []


def test_the_readme_links_every_docs_page_and_stays_short():
    linked = {target.partition("#")[0] for page, target in links() if page == "README.md"}
    assert {page for page in PAGES if page.startswith("docs/")} <= linked
    assert len(README.splitlines()) <= 250
    first_screen = "\n".join(README.splitlines()[:60])
    assert "memgraph-recall demo" in first_screen and "pytest" in first_screen  # both setup commands
    assert "RecallClient.embedded" in first_screen  # a use with no server

@pytest.fixture
def cli_on_path(tmp_path, monkeypatch):
    """`memgraph-recall` on PATH as this interpreter's CLI, whether or not the entry point is installed."""
    shims = tmp_path / "bin"
    shims.mkdir()
    shim = shims / "memgraph-recall"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memgraph_recall.cli "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_the_blocks_marked_offline_run(cli_on_path):
    marked = [b for b in blocks() if b.marker == OFFLINE]
    assert len(marked) >= 2 and all(b.language == "bash" for b in marked)
    for block in marked:
        done = subprocess.run(["bash", "-eu", "-c", block.text], cwd=cli_on_path, capture_output=True,
                              text=True, timeout=60, env={**os.environ, "REPO": str(ROOT)})
        assert done.returncode == 0, (block.where, done.stderr)


def test_the_blocks_marked_offline_with_the_model_run(tmp_path, monkeypatch, capsys):
    marked = [b for b in blocks() if b.marker == OFFLINE_MODEL]
    assert len(marked) >= 2 and all(b.language == "python" for b in marked)
    monkeypatch.chdir(tmp_path)
    for block in marked:
        exec(compile(block.text, block.where, "exec"), {"__name__": "readme"})  # noqa: S102
        assert capsys.readouterr().out.strip(), block.where  # each prints what it recalled
    assert (tmp_path / "sample-embedded.json").is_file()


def test_the_markers_are_the_ones_this_test_knows():
    markers = {marker for text in PAGES.values() for marker in re.findall(r"<!--[^>]*-->", text)}
    assert markers <= {OFFLINE, OFFLINE_MODEL}, markers
