"""`memgraph-recall`: the demo, asking recall a question, embedding, the doctor, and graph files.

argparse rather than typer/click: it is in the standard library, so the Bolt-only base install stays
small, and `main(argv)` is trivially callable from tests. Every failure is one line on stderr and
an exit status that says which kind it was (`EXIT_CODES`); `--debug` adds the traceback.
"""

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import NoReturn

from memgraph_recall import __version__
from memgraph_recall.cli_backend import (
    DEFAULT_BOLT,
    SAMPLE,
    check_first,
    config_file,
    database_path,
    graph_file,
    graph_path,
    note,
    open_client,
    recall_config,
    require_server,
    timeouts,
    uses_sample,
)
from memgraph_recall.client import DEFAULT_DATABASE, PROGRESS_LIMIT, RecallClient, did_you_mean
from memgraph_recall.errors import (
    RecallConnectionError,
    RecallError,
    RecallTimeoutError,
)
from memgraph_recall.locate import install_hint
from memgraph_recall.table import table
from memgraph_recall.timeouts import seconds

EXIT_SERVER, EXIT_USAGE, EXIT_CONNECTION, EXIT_TIMEOUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 1, 2, 3, 4, 70, 130
EXIT_CODES = {
    0: "success",
    EXIT_SERVER: "the server or the recall module answered with an error (e.g. module not loaded, a model "
                 "that cannot load, a write conflict that outlasted the retries)",
    EXIT_USAGE: "bad usage: flags, the config file, a graph file, or a value the module rejects",
    EXIT_CONNECTION: "cannot reach the server: refused, unresolvable host, no Bolt answer within "
                     "connect_timeout, credentials refused, connection lost",
    EXIT_TIMEOUT: "a call got no answer within its timeout",
    EXIT_INTERNAL: "a bug in memgraph-recall (run with --debug for the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C; SIGTERM too while embedding)",
}
LANES = ("memories", "turns", "text", "entities", "facts", "user_facts")

DESCRIPTION = """\
Per-user recall over agent memory in Memgraph: "what does this user's own past say about this
question?" Recall runs inside the database as the recall.* procedures; this tool calls them on a
server (--bolt) or, with no server at all, in the embedded runtime over a graph file (--graph).

Start with `memgraph-recall demo`: it needs no server and no network."""

EPILOG = """\
examples:
  memgraph-recall demo
  memgraph-recall ask --user maya "When is my trip to Lisbon?" --bolt bolt://localhost:7687
  memgraph-recall embed --bolt bolt://localhost:7687            # catch up on new messages
  memgraph-recall import chats.jsonl --graph memory.json          # your own history, no server
  memgraph-recall export memory.json --bolt bolt://localhost:7687
  memgraph-recall ask --user maya "Where am I going?" --graph memory.json --json
config file: TOML with a [recall] table of config keys (turns_k = 4, lanes = ["turns", "facts"],
embedding_model = "...") and a [client] table (bolt = "bolt://host:7687", timeout = 60,
connect_timeout = 10), from --config, $MEMGRAPH_RECALL_CONFIG or ~/.config/memgraph-recall/config.toml;
flags override it.
exit status:
""" + "\n".join(f"  {code:<4} {meaning.split(' (')[0]}" for code, meaning in EXIT_CODES.items())


# -- argument parsing ----------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, like every other failure (argparse prints two)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected an ISO date YYYY-MM-DD, got {text!r}") from exc


def lane_list(text: str) -> list[str]:
    lanes = [lane.strip() for lane in text.split(",") if lane.strip()]
    unknown = [lane for lane in lanes if lane not in LANES]
    if unknown or not lanes:
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(LANES)}, "
                                         f"got {text!r}")
    return lanes


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def seconds_flag(text: str) -> float:
    try:
        return seconds("value", float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected seconds greater than 0 (at most a day), got {text!r}") \
            from exc


def graph_flag(text: str) -> str:
    """Kept as typed: a `Path` would turn `./sample` into `sample`, the bundled sample's name."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a graph file or `{SAMPLE}`, got {text!r}")
    return text


_DATABASE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def database_flag(text: str) -> tuple[str, str]:
    """`NAME=FILE`: another database for the embedded runtime (NAME as Memgraph allows: a letter, then
    letters, digits, `_` or `-`)."""
    name, sep, path = text.partition("=")
    if not sep or not _DATABASE_NAME.match(name) or not path.strip() or name == DEFAULT_DATABASE:
        raise argparse.ArgumentTypeError(
            f"expected NAME=FILE with NAME a letter then letters, digits, _ or - (not {DEFAULT_DATABASE}, "
            f"which is --graph's), got {text!r}")
    return name, path


def build_parser() -> argparse.ArgumentParser:
    base = argparse.ArgumentParser(add_help=False)
    base.add_argument("--config", type=Path, metavar="FILE",
                      help="TOML file: [recall] config keys, [client] bolt URL and timeouts "
                      "(flags override it)")
    base.add_argument("--debug", action="store_true", help="on failure, print the Python traceback too")
    common = argparse.ArgumentParser(add_help=False, parents=[base])
    common.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                        help="set one recall config key, e.g. --set turns_k=4 (repeatable)")

    target = argparse.ArgumentParser(add_help=False)
    where = target.add_mutually_exclusive_group()
    where.add_argument("--bolt", metavar="URL",
                       help="Memgraph with the recall module, bolt://[user:pass@]host:port "
                       f"(default {DEFAULT_BOLT})")
    where.add_argument("--graph", type=graph_flag, metavar="FILE",
                       help="no server: run recall in the embedded runtime over an export_util.json file; "
                       f"exactly `{SAMPLE}` is the bundled sample memory (a file of that name is "
                       f"./{SAMPLE})")
    target.add_argument("--graph-database", dest="databases", action="append", default=[],
                        type=database_flag, metavar="NAME=FILE",
                        help="with --graph: also load FILE as the database NAME (repeatable); one module "
                        "state serves them all, as one Memgraph instance serves its databases")
    target.add_argument("--database", metavar="NAME",
                        help=f"with --graph: the database the command runs in (default {DEFAULT_DATABASE})")
    target.add_argument("--timeout", type=seconds_flag, metavar="SECONDS",
                        help="give up on a call after this long (default 60; [client] timeout)")
    target.add_argument("--connect-timeout", type=seconds_flag, metavar="SECONDS",
                        help="give up connecting to the server after this long (default 10; "
                        "[client] connect_timeout)")

    parser = Parser(prog="memgraph-recall", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser("demo", parents=[common], help="offline demo on the bundled sample memory",
                               description="Load a memory graph into the embedded runtime, embed it with the "
                               "packaged all-MiniLM-L6-v2 and print real recall.render output for a few "
                               "questions, asking some as two different users to show per-user scoping.")
    demo.add_argument("--locomo", type=Path, metavar="PATH",
                      help="use LoCoMo instead of the bundled sample: a conversation file (conv-26.json) or "
                      "the benchmark's data/locomo10.json")
    demo.add_argument("--conversation", metavar="NAME",
                      help="with --locomo: which conversation of a file that holds several (default: "
                      "the first)")
    demo.add_argument("--questions", type=positive_int, metavar="N",
                      help="how many questions to ask (default: the sample's own, or 4 from LoCoMo)")

    ask = commands.add_parser("ask", parents=[common, target], help="recall for one user and question",
                              description="Print what recall.render gives an LLM for USER and QUESTION.")
    ask.add_argument("question", help="the question, in the user's words")
    ask.add_argument("--user", required=True, help="the user_id whose memory to search (only theirs)")
    ask.add_argument("--today", type=iso_date, metavar="YYYY-MM-DD", help="today's date, for relative dates")
    ask.add_argument("--lanes", type=lane_list, metavar="LANE,...",
                     help=f"lanes to run, from {','.join(LANES)}")
    ask.add_argument("--explain", action="store_true", help="show which lanes found each row, rank and score")
    ask.add_argument("--max-chars", type=positive_int, metavar="N", help="total character budget")
    ask.add_argument("--hits", action="store_true",
                     help="print recall.lanes hits instead of the rendered text")
    ask.add_argument("--json", action="store_true", help="print JSON: text plus the recalled rows")

    embed = commands.add_parser("embed", parents=[common, target], help="embed messages that have no vector",
                                description="Call recall.embed until nothing remains (with a progress bar). "
                                "Each call commits: with --graph the file (or --output) is written as the "
                                "run goes, so an interrupted run (Ctrl-C, SIGTERM) keeps every finished call "
                                "and the next run embeds only the rest.")
    embed.add_argument("--user", help="only this user's data")
    embed.add_argument("--limit", type=positive_int, metavar="N",
                       help=f"units per call (default {PROGRESS_LIMIT})")
    embed.add_argument("--output", type=Path, metavar="FILE", help="with --graph: write the result here")

    status = commands.add_parser("status", parents=[common, target],
                                 help="the doctor: module, models, vectors",
                                 description="List the recall.* procedures present and recall.status: module "
                                 "version, configured models and whether they load, vector counts per model.")
    status.add_argument("--user", help="counts for this user only")

    setup = commands.add_parser(
        "setup", parents=[base, target], help="make the database ready for the fast call shape (server only)",
        description="Create the :User(user_id) and :RecallMeta indexes the fast call shape reads through, "
        "and the database's (:RecallMeta {token}): its random token tells this database apart from the "
        "others of the instance, which share recall's module state. Idempotent.")
    setup.add_argument("--new-token", action="store_true",
                       help="give the RecallMeta a new token: for a database copied from another (a restored "
                       "snapshot holds the original's token)")

    invalidate = commands.add_parser("invalidate", parents=[base, target],
                                     help="drop recall's cached data",
                                     description="Call recall.invalidate: drop cached data for one user "
                                     "or for all, so facts and entities added since are read again.")
    invalidate.add_argument("--user", help="only this user (default: all)")

    export = commands.add_parser("export", parents=[base, target],
                                 help="save a server's graph to a JSON file",
                                 description="Stream the server's graph with export_util.json into a local "
                                 "file that --graph (the embedded runtime) can read.")
    export.add_argument("output", type=Path, help="file to write")

    load = commands.add_parser("load", parents=[base, target],
                               help="add a graph file's contents to a server",
                               description="Create the nodes and relationships of an export_util.json file "
                               "on the server, from this machine (appends; it does not merge with what is "
                               "there). Batches are retried after a conflict or a lost answer (they are "
                               "idempotent); a load that still fails says how much it wrote.")
    load.add_argument("input", type=Path, help="export_util.json file to read")

    load_chats = commands.add_parser(
        "import", parents=[base, target], help="add a chat history (JSON Lines) to a graph file or a server",
        description="Read a JSON Lines chat history (one message or fact per line: see docs/import.md), "
        "check every line, and add it to the graph file of --graph (created if absent) or to the server. "
        "Messages already there are skipped, so importing the same file again adds nothing; a bad line or "
        "an id another user holds is refused by line number before anything is written. Then run "
        "`memgraph-recall embed` on the same target.")
    load_chats.add_argument("input", type=Path, help="the .jsonl chat history to read")

    mcp = commands.add_parser("mcp", parents=[common, target], help="serve recall to agents over MCP",
                              description="Serve the recall and recall_status tools over MCP: stdio (what "
                              "Claude Desktop/Code and the agent SDKs launch) or, with --http, streamable "
                              "HTTP with bearer tokens. --graph sample serves the bundled sample memory. "
                              "Bolt credentials come from the config file or $MEMGRAPH_RECALL_USERNAME/"
                              "$MEMGRAPH_RECALL_PASSWORD, never from the command line. Needs the [mcp] "
                              "extra.")
    mcp.add_argument("--user", help="stdio: the user_id whose memory is served ([mcp] user)")
    mcp.add_argument("--http", metavar="HOST:PORT",
                     help="serve streamable HTTP at /mcp instead of stdio (host default 127.0.0.1)")
    mcp.add_argument("--tokens", type=Path, metavar="FILE",
                     help="HTTP: token file, lines of '<sha256 of a token> <user_id>' ([mcp] tokens)")
    mcp.add_argument("--allowed-host", dest="allowed_hosts", action="append", default=[],
                     metavar="HOST[:PORT]",
                     help="HTTP off loopback: a Host value clients use (repeatable; [mcp] allowed_hosts)")
    mcp.add_argument("--allowed-origin", dest="allowed_origins", action="append", default=[],
                     metavar="ORIGIN",
                     help="HTTP: a browser Origin allowed to call (repeatable; [mcp] allowed_origins)")
    mcp.add_argument("--today", type=iso_date, metavar="YYYY-MM-DD",
                     help="fix today's date (default: the server's date at each call)")
    mcp.add_argument("--print-config", action="store_true",
                     help="print the JSON an MCP client (Claude Desktop, Claude Code) needs to launch this "
                     "server with these flags, by this venv's absolute python path, and exit")

    return parser


# -- helpers -------------------------------------------------------------------------------------
def out(text: str = "") -> None:
    print(text, flush=True)


# -- commands ------------------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> None:
    from memgraph_recall.demo import run_demo

    if args.conversation and args.locomo is None:
        raise ValueError("--conversation: only with --locomo FILE, whose conversations it picks from")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the model loader's bar says nothing here
    run_demo(recall_config(args), locomo=args.locomo, questions=args.questions,
             conversation=args.conversation, write=out)


def cmd_ask(args: argparse.Namespace) -> None:
    config = recall_config(args)
    check_first(args, "lanes" if args.hits else "render", config, args.question)
    with open_client(args) as client:
        if graph_path(args) is not None:
            note("recalling; the first question loads the embedding model, which takes several seconds")
        if args.hits:
            hits = client.lanes(args.user, args.question, config)
            if args.json:
                out(json.dumps([{k: v for k, v in vars(h).items() if k not in ("node", "relationship")}
                                for h in hits], indent=2))
            else:
                for h in hits:
                    out(f"{h.lane:<10} #{h.rank:<3} {h.score:8.4f}  {h.key}: {h.text}")
                if not hits:
                    out("(no hits)")
            return
        recalled = client.render(args.user, args.question, args.today, config)
        if recalled.user_found is False:
            where = client.backend.description
            raise ValueError(did_you_mean(args.user, client.users_like(args.user), where))
        if args.json:
            out(json.dumps({"text": recalled.text, "recalled": recalled.to_json()}, indent=2,
                           ensure_ascii=False))
        else:
            out(recalled.text)


def cmd_embed(args: argparse.Namespace) -> None:
    config = recall_config(args)
    if args.output is not None and getattr(args, "graph", None) is None:
        raise ValueError("--output: only with --graph; a server keeps its vectors (`memgraph-recall export "
                         "FILE` writes its graph to a file)")
    check_first(args, "embed", config)
    target = args.output or database_path(args)
    with open_client(args, embed_sample=False) as client:
        if getattr(args, "graph", None) is not None:
            note("embedding; the embedding model loads first, which takes several seconds")
        before = file_state(target)
        try:
            with sigterm_interrupts():
                done = client.embed(args.user, config, progress=True, save_to=target)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(kept_after_interrupt(args, target, before, client)) from None
        out(f"embedded {done.messages} messages, {done.entities} entities, {done.edges} facts, "
            f"{done.memories} memories, {done.prose} prose vectors with {done.model}; "
            f"{done.remaining} remaining")
        if target is not None and (done.embedded or args.output):
            if not done.embedded:  # nothing new, but --output asks for the file
                client.save_graph(target)
            out(f"saved {target}")
        elif target is not None:
            out(f"nothing to embed: {target} is unchanged")
        elif uses_sample(args):
            out(f"not saved: the bundled sample is no file (--output FILE writes it, and --graph {SAMPLE} "
                "embeds it on every load anyway)")


def file_state(path: Path | None) -> tuple[int, int] | None:
    """What tells a rewritten file from the one that was there: (inode, mtime); None if absent."""
    try:
        found = path.stat() if path is not None else None
    except FileNotFoundError:
        return None
    return (found.st_ino, found.st_mtime_ns) if found is not None else None


def kept_after_interrupt(args: argparse.Namespace, target: Path | None, before: tuple[int, int] | None,
                         client: RecallClient) -> str:
    """What an interrupted `embed` kept, and how to go on from it."""
    if target is None and uses_sample(args):
        return "nothing was saved (the bundled sample is no file; --output FILE writes one as it goes)"
    if target is None:
        return (f"every finished call is committed on {client.backend.description}; the same command again "
                "embeds the rest")
    if file_state(target) == before:
        return f"nothing was saved: {target} is unchanged" if before else f"nothing was saved in {target}"
    rest = f"--graph {target} embeds the rest" if args.output else "the same command again embeds the rest"
    return f"the vectors of every finished call are saved in {target}; {rest}"


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (`kill`, `docker stop`, systemd) stops the block as Ctrl-C does, so it can keep its work.
    Only the main thread can set a handler; elsewhere SIGTERM keeps its default."""
    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous, installed = signal.signal(signal.SIGTERM, interrupt), True
    except ValueError:  # not the main thread
        previous, installed = None, False
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous)


def cmd_status(args: argparse.Namespace) -> None:
    config = recall_config(args)
    check_first(args, "status", config)
    with open_client(args) as client:
        out(f"backend: {client.backend.description}")
        procedures = client.procedures()
        out("procedures: " + (", ".join(procedures) or "none: the recall module is not loaded"))
        out(table(client.status(args.user, config)))


def cmd_setup(args: argparse.Namespace) -> None:
    require_server(args, "setup")
    with open_client(args) as client:
        out(client.setup(new_token=args.new_token))


def cmd_invalidate(args: argparse.Namespace) -> None:
    with open_client(args, embed_sample=False) as client:  # a fresh sample has no cache to drop
        out(f"dropped {client.invalidate(args.user)} cache entries")


def cmd_export(args: argparse.Namespace) -> None:
    from memgraph_recall.bolt_io import export_graph

    require_server(args, "export")
    with open_client(args) as client:
        count = export_graph(client, args.output)
    out(f"wrote {count} elements to {args.output}")


def cmd_load(args: argparse.Namespace) -> None:
    from memgraph_recall.bolt_io import load_graph, read_graph_file

    require_server(args, "load")
    with graph_file("load", args.input):
        elements = read_graph_file(args.input)
    with open_client(args) as client:
        nodes, relationships = load_graph(client, elements)
    out(f"created {nodes} nodes and {relationships} relationships")


def cmd_import(args: argparse.Namespace) -> None:
    from memgraph_recall.datasets.chats import read_chat_file
    from memgraph_recall.importing import import_into_file, import_over_bolt

    if args.databases or args.database:
        raise ValueError("import: writes one graph file (--graph FILE) or one server; --graph-database and "
                         "--database are not used")
    if uses_sample(args):
        raise ValueError(f"--graph: the bundled sample is not a file to import into; name a file, e.g. "
                         f"--graph memory.json (`--graph ./{SAMPLE}` for a file named {SAMPLE})")
    history = read_chat_file(args.input)
    target = graph_path(args)
    if target is not None:
        if target.is_dir():
            raise ValueError(f"--graph: {target} is a directory, expected a graph file to create or add to")
        with graph_file("--graph", target) if target.exists() else contextlib.nullcontext():
            report = import_into_file(history, target, str(args.input))
        out(f"{report.line()} into {target}" if report.added else f"{report.line()}; {target} is unchanged")
    else:
        with open_client(args) as client:
            report = import_over_bolt(history, client.backend, str(args.input))
        out(f"{report.line()} on {client.backend.description}")
    where = f" --graph {target}" if target is not None else (
        f" --bolt {args.bolt}" if args.bolt and "@" not in args.bolt else "")
    out(f"next: memgraph-recall embed{where}, then memgraph-recall ask{where} --user USER QUESTION")


def cmd_mcp(args: argparse.Namespace) -> None:
    try:
        from memgraph_recall.integrations import mcp_server
    except ImportError as exc:
        raise ValueError(f"mcp: needs the [mcp] extra ({exc.name} is not installed): "
                         f"{install_hint('mcp')}") from exc

    config = config_file(args)
    settings = config.mcp
    today = args.today or settings.get("today")
    listen = args.http or settings.get("http")
    user = args.user or settings.get("user")
    if listen is None and not user:
        raise ValueError("mcp: --user (or [mcp] user) is required on stdio: the user is fixed by the "
                         "server, never chosen by the model")
    if listen is not None and args.user:
        raise ValueError("--user: not used with --http; there each request's bearer token names its user")
    tokens = args.tokens or settings.get("tokens")
    if listen is not None and not tokens:
        raise ValueError("--http: needs --tokens FILE (or [mcp] tokens), the token file that maps each "
                         "bearer token to its user")
    recall = recall_config(args)
    check_first(args, "render", recall)
    if args.print_config:
        out(mcp_server.client_config(absolute_paths([a for a in args.argv if a != "--print-config"])))
        return
    # A graph file is read now and a server's address checked now (it is reached by the first call);
    # the bundled sample is embedded on first use, so the server answers the handshake at once.
    client = None if uses_sample(args) else open_client(args)

    def opener() -> RecallClient:
        return client if client is not None else open_client(args)

    bolt = getattr(args, "graph", None) is None
    service = mcp_server.RecallService(opener, timeouts(args, config), recall, today, bolt=bolt)
    if listen is None:
        check_mcp_user(args, user, client)
        mcp_server.serve_stdio(service, user)
        return
    host, port = mcp_server.parse_listen(listen)
    options = mcp_server.HttpOptions(
        host, port, Path(tokens), tuple(args.allowed_hosts or settings.get("allowed_hosts", ())),
        tuple(args.allowed_origins or settings.get("allowed_origins", ())))
    app = mcp_server.http_app(service, options)  # refuses a bad token file or unchecked Host values
    if bolt:
        service.check_server()  # a long-running server that cannot reach Memgraph should not start
    print(f"memgraph-recall mcp: serving MCP at {options.url} (streamable HTTP, bearer tokens from "
          f"{options.tokens}); Ctrl-C stops it", file=sys.stderr, flush=True)
    mcp_server.serve_http(service, app, options)


def absolute_paths(argv: list[str]) -> list[str]:
    """`argv` with the files its flags name made absolute: an MCP client starts the server elsewhere."""
    files = {"--graph", "--tokens", "--config"}
    made = list(argv)
    for index in range(1, len(made)):
        flag, value = made[index - 1], made[index]
        if flag in files and not (flag == "--graph" and value == SAMPLE):
            made[index] = str(Path(value).resolve())
        elif flag == "--graph-database" and "=" in value:
            name, _, path = value.partition("=")
            made[index] = f"{name}={Path(path).resolve()}"
    return made


def check_mcp_user(args: argparse.Namespace, user: str, client: RecallClient | None) -> None:
    """Refuse to serve a `--user` the memory does not have: every call would answer "not found" as a
    success. A server that cannot be reached yet is only warned about (an MCP client may start first)."""
    if uses_sample(args):
        from memgraph_recall.datasets import sample

        found, where = [u for u in sample.USERS if u.lower() == user.lower()], "the bundled sample"
    else:
        where = client.backend.description
        try:
            found = client.users_like(user)
        except (RecallConnectionError, RecallTimeoutError) as exc:
            print(f"memgraph-recall mcp: warning: cannot check --user {user!r} now ({one_line(exc)}); "
                  "serving anyway, each call reaches the server", file=sys.stderr, flush=True)
            return
    if user not in found:
        raise ValueError(f"{did_you_mean(user, found, where)} (not serving a memory that holds nothing)")


COMMANDS = {"demo": cmd_demo, "ask": cmd_ask, "embed": cmd_embed, "status": cmd_status, "setup": cmd_setup,
            "invalidate": cmd_invalidate, "export": cmd_export, "load": cmd_load, "import": cmd_import,
            "mcp": cmd_mcp}


def exit_code(exc: BaseException) -> int:
    """The exit status for a failure; see `EXIT_CODES`."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, RecallTimeoutError):
        return EXIT_TIMEOUT
    if isinstance(exc, RecallConnectionError):
        return EXIT_CONNECTION
    if isinstance(exc, ValueError):  # bad input, RecallArgumentError (the module's refusal) included
        return EXIT_USAGE
    if isinstance(exc, RecallError):
        return EXIT_SERVER
    return EXIT_INTERNAL


def one_line(exc: BaseException) -> str:
    """What failed, on one line: the message's lines joined, its kind named where it helps."""
    message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
    code = exit_code(exc)
    if code == EXIT_USAGE:
        return f"error: {message}"
    if code == EXIT_INTERNAL:
        return f"internal error: {type(exc).__name__}: {message} (run with --debug for the traceback)"
    if code == EXIT_INTERRUPTED:
        return f"interrupted; {exc}" if str(exc) else "interrupted"
    return f"{type(exc).__name__}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `memgraph-recall`; returns the exit status (`EXIT_CODES`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        COMMANDS[args.command](args)
    except (Exception, KeyboardInterrupt) as exc:
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        print(f"memgraph-recall {args.command}: {one_line(exc)}", file=sys.stderr)
        return exit_code(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
