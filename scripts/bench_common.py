"""Shared by the evaluations and benchmarks: model setup, cache keys, the machine line, markdown, memory,
percentiles and the collector's share of a timed call."""

import gc
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The counts of a `recall.embed` record: what one call embedded, by kind.
EMBEDDED_KINDS = ("messages", "entities", "edges", "memories", "prose")


def configure_model(name: str | None = None) -> str:
    """Make the packaged MiniLM available to the module (offline) and return its name, or `name` when
    given: another model `RECALL_MODELS` maps to an offline folder (an evaluation's `--model`).

    Names already configured in `RECALL_MODELS` are kept; the packaged model is added beside them.
    """
    from memgraph_recall.locate import PACKAGED_MODEL, packaged_model_dir

    folder = packaged_model_dir()
    if folder is None:
        raise SystemExit("the packaged model is missing: pip install 'memgraph-recall[embedded]'")
    models = json.loads(os.environ.get("RECALL_MODELS") or "{}")
    models.setdefault(PACKAGED_MODEL, str(folder))
    os.environ["RECALL_MODELS"] = json.dumps(models)
    os.environ.setdefault("RECALL_DEFAULT_MODEL", PACKAGED_MODEL)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if name is None:
        return PACKAGED_MODEL
    if name not in models or not Path(models[name]).is_dir():
        raise SystemExit(f"--model: expected a name RECALL_MODELS maps to a model folder, got {name!r} "
                         f"(RECALL_MODELS names {sorted(models)})")
    return name


def allow_rows(rows: int) -> None:
    """Raise this process's own runtime's row ceiling (`RECALL_MAX_ROWS`) to at least `rows`, for an
    evaluation's deep ranking; a higher ceiling already set is kept. Before the runtime is made."""
    if not os.environ.get("RECALL_MAX_ROWS", "").isdigit() or int(os.environ["RECALL_MAX_ROWS"]) < rows:
        os.environ["RECALL_MAX_ROWS"] = str(rows)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def graph_cache_key(model: str, inputs: Sequence[Path], loader: Path) -> str:
    """Model + input files + the code that shapes an embedded graph and its vectors: the dataset's
    loader, the graph builder and recall_lib's passage split and embedding units. Ranking code is left
    out on purpose, so a ranking change reuses the cached vectors."""
    from memgraph_recall.datasets import memory_graph
    from memgraph_recall.locate import query_modules_dir

    lib = query_modules_dir() / "recall_lib"
    code = (Path(loader), Path(memory_graph.__file__), lib / "passages.py", lib / "embedding.py")
    parts = [model, *(file_sha256(p) for p in inputs), *(file_sha256(p) for p in code if p.is_file())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def ms(seconds: float) -> float:
    """Seconds as milliseconds, to two decimals (how every benchmark here reports times)."""
    return round(1000 * seconds, 2)


def timed(call: Callable[[], object]) -> float:
    """Seconds `call` took."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def model_folder(name: str) -> Path:
    return Path(json.loads(os.environ["RECALL_MODELS"])[name])


def use_recall_lib() -> None:
    """Put `query_modules/` on `sys.path` so `recall_lib` (the module's helper package) imports."""
    from memgraph_recall.locate import query_modules_dir

    folder = str(query_modules_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown CPU"
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or "unknown CPU"


def _memory_gib() -> float | None:
    try:
        match = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE)
    except OSError:
        return None
    return round(int(match.group(1)) / 2**20, 1) if match else None


def git_commit(folder: Path = ROOT) -> str:
    """The short commit of the checkout holding `folder` ("unknown" outside one), with "+uncommitted"
    when its code (`query_modules`, `client`, `scripts`) differs from that commit: a result must not
    name a commit whose code it did not run."""
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no",
                                  "--", ":/query_modules", ":/client", ":/scripts"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{out}+uncommitted" if changed else out


def modules_of(folder: Path) -> dict[str, str]:
    """Which query modules a timing ran: the folder as a result may record it, and its checkout's commit."""
    return {"modules": portable(str(Path(folder).resolve())), "modules_commit": git_commit(Path(folder))}


def portable(arg: str) -> str:
    """A command-line argument as a result may record it: a path inside the repository relative to it, one
    beside it (`../shared/...`) relative to the repository too, any other absolute path only by its last
    two parts (results never name a developer's folders)."""
    flag, eq, value = arg.partition("=") if arg.startswith("--") and "=" in arg else ("", "", arg)
    path = Path(value)
    if not path.is_absolute():
        return arg
    resolved = path.resolve()
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        if resolved.is_relative_to(base):
            return f"{flag}{eq}{prefix}{resolved.relative_to(base)}"
    return f"{flag}{eq}<...>/" + "/".join(resolved.parts[-2:])


def provenance(argv: Sequence[str]) -> dict[str, str]:
    """The command, date, machine and commit that produced a result."""
    memory = _memory_gib()
    return {
        "command": " ".join(["python", *map(portable, argv)]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{_cpu_model()}, {os.cpu_count()} cores"
                   + (f", {memory} GiB RAM" if memory else "")
                   + f", {platform.system()} {platform.release()}, Python {platform.python_version()}",
        "commit": git_commit(),
    }


def provenance_lines(info: dict[str, str]) -> list[str]:
    return [f"- Command: `{info['command']}`", f"- Date: {info['date']}", f"- Machine: {info['machine']}",
            f"- Commit: {info['commit']}"]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _status_kib(field: str) -> float:
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    except OSError:
        match = None
    if match:
        return int(match.group(1))
    import resource

    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # Linux: KiB


def rss_mb() -> float:
    """This process's resident memory now, in MiB."""
    return round(_status_kib("VmRSS") / 1024, 1)


def load_average() -> float:
    """The 1-minute load average now (what else the machine runs, for a report's provenance)."""
    return round(os.getloadavg()[0], 2)


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB."""
    return round(_status_kib("VmHWM") / 1024, 1)


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 20 values is the 19th smallest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


class CollectorClock:
    """Seconds Python's cyclic collector has run since this was made (through `gc.callbacks`), so a
    timed call can say how much of it was the collector's. Process-wide: read around one call at a time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def close(self) -> None:
        gc.callbacks.remove(self._callback)



def fast_call(runtime, procedure: str, user_id: str, *rest) -> list[dict]:
    """`procedure(user_id, *rest)` in the client's default call shape: the prelude finds the User through
    its index and passes the holders' signatures (memgraph_recall.shape), as `RecallClient` calls."""
    from memgraph_recall.embedded.prelude import call_prelude

    return runtime.call(procedure, user_id, *rest, prelude=call_prelude(user_id, rest))


def runtime_of(modules: Path):
    """An embedded runtime over `modules` (a query_modules folder, this checkout's or another's), refused
    when a recall_lib module came from elsewhere: it is a namespace package, so two checkouts could mix."""
    from memgraph_recall.embedded import Runtime

    runtime = Runtime(modules.resolve())
    if runtime.load_errors:
        raise SystemExit(f"query modules failed to load: {runtime.load_errors}")
    helpers = [Path(m.__file__).resolve() for name, m in list(sys.modules.items())
               if name.startswith("recall_lib.") and getattr(m, "__file__", None)]
    stray = [str(h) for h in helpers if modules.resolve() not in h.parents]
    if not helpers or stray:
        raise SystemExit(f"recall_lib modules not from {modules}: {stray or 'none loaded'}")
    return runtime


def emit(result: dict, json_lines: Path | None) -> None:
    """A benchmark's figures on stdout, and appended to `json_lines` when given (runs compared later)."""
    print(json.dumps(result))
    if json_lines:
        with json_lines.open("a") as out:
            out.write(json.dumps(result) + "\n")


def fresh_module_state(runtime) -> None:
    """The recall module's cache as a fresh load leaves it (`CALL mg.load('recall')` re-executes the
    module: new globals), keeping its settings and the model already loaded: a database's first call."""
    module = runtime.modules["recall"]
    module.CACHE = type(module.CACHE)(module.CACHE.settings)
