"""Which backend the CLI's flags name, and opening it only after what can be checked is checked.

`--bolt URL` (or the config file's `[client] bolt`) is a server; `--graph FILE` the embedded runtime over
a graph file, and exactly `--graph sample` the bundled sample, embedded as it loads. Opening the
embedded runtime takes seconds (the sample's embedding, the model for the first question), so bad
input is refused first (`check_first`), and on a terminal each slow step says what it does (`note`).
"""

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from memgraph_recall.client import DEFAULT_DATABASE, BoltAddress, BoltBackend, RecallClient
from memgraph_recall.files import READ_ERRORS, unreadable
from memgraph_recall.settings import (
    ConfigFile,
    ConfigPath,
    default_config_path,
    load_config,
    parse_assignment,
)
from memgraph_recall.timeouts import Timeouts

DEFAULT_BOLT = "bolt://localhost:7687"
USERNAME_ENV, PASSWORD_ENV = "MEMGRAPH_RECALL_USERNAME", "MEMGRAPH_RECALL_PASSWORD"
SAMPLE = "sample"


def config_file(args: argparse.Namespace) -> ConfigFile:
    return load_config(ConfigPath(args.config) if args.config is not None else default_config_path())


def recall_config(args: argparse.Namespace) -> dict[str, Any]:
    """The config file's [recall] table, then --set, then dedicated flags: later wins."""
    config = dict(config_file(args).recall)
    for assignment in getattr(args, "assignments", []):
        key, value = parse_assignment(assignment)
        config[key] = value
    if getattr(args, "lanes", None):
        config["lanes"] = args.lanes
    if getattr(args, "explain", False):
        config["explain"] = True
    if getattr(args, "max_chars", None):
        config["max_chars"] = args.max_chars
    if getattr(args, "limit", None):
        config["limit"] = args.limit
    return config


def timeouts(args: argparse.Namespace, config: ConfigFile) -> Timeouts:
    """Flags first, then the config file's [client] table, then the defaults."""
    call = getattr(args, "timeout", None)
    connect = getattr(args, "connect_timeout", None)
    return Timeouts.of(call if call is not None else config.timeout,
                       connect if connect is not None else config.connect_timeout)


def bolt_address(args: argparse.Namespace, config: ConfigFile) -> BoltAddress:
    """The server: --bolt, else [client] bolt, else the default; credentials may come from the environment."""
    flag = getattr(args, "bolt", None)
    address = BoltAddress.parse(flag or config.bolt or DEFAULT_BOLT)
    if args.command == "mcp" and flag and (address.username or address.password):
        raise ValueError(f"--bolt: put credentials in the config file ([client] bolt) or ${USERNAME_ENV}/"
                         f"${PASSWORD_ENV}, not on the command line: an MCP client's config puts arguments "
                         "in the process list")
    if not address.username and os.environ.get(USERNAME_ENV):
        address = replace(address, username=os.environ[USERNAME_ENV],
                          password=os.environ.get(PASSWORD_ENV, ""))
    return address


def uses_sample(args: argparse.Namespace) -> bool:
    """`--graph sample`, exactly as typed, is the bundled sample (a file of that name is `./sample`)."""
    return getattr(args, "graph", None) == SAMPLE


def graph_path(args: argparse.Namespace) -> Path | None:
    """The graph file of `--graph`, or None for a server or the bundled sample."""
    graph = getattr(args, "graph", None)
    return None if graph is None or graph == SAMPLE else Path(graph)


def database_name(args: argparse.Namespace) -> str:
    return getattr(args, "database", None) or DEFAULT_DATABASE


def database_path(args: argparse.Namespace) -> Path | None:
    """The graph file of the database the command runs in (`--graph`'s, or a `--graph-database`'s)."""
    name = database_name(args)
    if name == DEFAULT_DATABASE:
        return graph_path(args)
    return Path(dict(getattr(args, "databases", []))[name])


def check_databases(args: argparse.Namespace) -> None:
    """`--graph-database` and `--database` make sense only with `--graph`, and name what it loads."""
    extra = dict(getattr(args, "databases", []) or [])
    chosen = getattr(args, "database", None)
    if getattr(args, "graph", None) is None:
        if extra or chosen:
            flag = "--graph-database" if extra else "--database"
            raise ValueError(f"{flag}: only with --graph (the embedded runtime); a server's databases are "
                             "the server's (connect to the one you mean)")
        return
    if len(extra) != len(args.databases):
        raise ValueError("--graph-database: each NAME once")
    if chosen is not None and chosen != DEFAULT_DATABASE and chosen not in extra:
        names = ", ".join([DEFAULT_DATABASE, *extra])
        raise ValueError(f"--database: no database {chosen!r} is loaded (loaded: {names})")
    for name, path in extra.items():
        if not Path(path).exists():
            raise ValueError(f"--graph-database: no such file {path} (database {name})")


def check_first(args: argparse.Namespace, procedure: str, config: dict[str, Any],
                question: str | None = None) -> None:
    """With `--graph`, refuse a bad question, config or graph path before anything loads.

    The recall module would refuse them too, but only after the runtime has loaded the graph (and the
    bundled sample has been embedded, which takes seconds). A server applies its own ceilings instead.
    """
    check_databases(args)
    if getattr(args, "graph", None) is None:
        return
    path = graph_path(args)
    if path is not None and not path.exists():
        raise ValueError(f"--graph: no such file {args.graph}")  # as typed: ./sample, not sample
    try:
        from memgraph_recall import precheck

        if question is not None:
            precheck.check_question(question)
        precheck.check_config(config, procedure)
    except ImportError:
        pass  # no [embedded] extra: opening the runtime says what to install


def open_client(args: argparse.Namespace, embed_sample: bool = True) -> RecallClient:
    """The backend the flags name; the bundled sample comes embedded unless `embed_sample` is False."""
    config = config_file(args)
    limits = timeouts(args, config)
    path = graph_path(args)
    if getattr(args, "graph", None) is not None:
        # The model's "Loading weights" bar says less than `note` does, and breaks the one-line stderr
        # of a failure; HF_HUB_DISABLE_PROGRESS_BARS=0 brings it back.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if uses_sample(args):
        from memgraph_recall.datasets import sample

        if Path(SAMPLE).exists():
            print(f"memgraph-recall: note: --graph {SAMPLE} is the bundled sample, not the file {SAMPLE} "
                  f"here (that is --graph ./{SAMPLE})", file=sys.stderr, flush=True)
        note("loading the bundled sample memory into the embedded runtime")
        client = embedded(args, sample.elements(), limits)
        if database_name(args) == DEFAULT_DATABASE:
            client.backend.description = "embedded runtime over the bundled sample"
        if embed_sample:  # the sample ships without vectors
            note("embedding it; the embedding model loads first, which takes several seconds")
            client.use(DEFAULT_DATABASE).embed()
        return client
    if path is not None:
        note(f"loading {path} into the embedded runtime")
        with graph_file("--graph", path):
            return embedded(args, args.graph, limits)  # named as typed
    return RecallClient(BoltBackend(bolt_address(args, config), timeouts=limits))


def embedded(args: argparse.Namespace, default: Any, limits: Timeouts) -> RecallClient:
    """The embedded runtime over `--graph`'s graph and every `--graph-database`, in `--database`."""
    from memgraph_recall.embedded.errors import GraphFileError

    extra = dict(getattr(args, "databases", []) or [])
    for name, path in extra.items():
        note(f"loading {path} as the database {name}")
    try:
        return RecallClient.embedded({DEFAULT_DATABASE: default, **extra}, timeout=limits.call,
                                     database=database_name(args))
    except GraphFileError as exc:
        for name, path in extra.items():
            if str(exc).startswith(f"{path}: "):
                reason = str(exc).removeprefix(f"{path}: ")
                raise ValueError(f"--graph-database: {path} (database {name}) is not a usable "
                                 f"export_util.json file: {reason}") from exc
        raise  # --graph's own file: graph_file says it
    except READ_ERRORS as exc:
        for name, path in extra.items():
            if getattr(exc, "filename", None) == path:
                raise ValueError(f"--graph-database: {path} (database {name}) "
                                 f"{unreadable(exc, 'an export_util.json file')}") from exc
        raise


def note(text: str) -> None:
    """What a slow step is doing, on stderr when a person watches it (never in piped output or logs)."""
    if sys.stderr.isatty():
        print(f"memgraph-recall: {text}...", file=sys.stderr, flush=True)


@contextmanager
def graph_file(flag: str, path: Path) -> Iterator[None]:
    """Turn every way an export_util.json file can be unreadable into one line naming the flag and file."""
    from memgraph_recall.embedded.errors import GraphFileError

    if not path.exists():
        raise ValueError(f"{flag}: no such file {path}")
    try:
        if path.is_dir():
            raise IsADirectoryError(path)
        yield
    except GraphFileError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise ValueError(f"{flag}: {path} is not a usable export_util.json file: {reason}") from exc
    except READ_ERRORS as exc:
        raise ValueError(f"{flag}: {path} {unreadable(exc, 'an export_util.json file')}") from exc


def require_server(args: argparse.Namespace, command: str) -> None:
    if getattr(args, "graph", None) is not None:
        raise ValueError(f"{command}: needs a server (--bolt URL), not --graph")
