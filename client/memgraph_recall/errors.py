"""Exceptions the client raises, and the one place that turns a server's error text into them.

Memgraph (and the embedded runtime, which words its errors the same way) reports every failure as a
message string: a missing procedure, a Cypher argument-type check, or `recall.x: <Python traceback>`
when the procedure raised. Callers want to know which of those happened and what to do about it.
"""

import re

_NOT_LOADED = re.compile(r"There is no procedure named '([\w.]+)'")
_ARGUMENT_CHECK = re.compile(r"argument named '\w+' at position \d+|"
                             r"'[\w.]+' requires (?:exactly|between|no) ")
_LAST_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?(\w+): (.*)$", re.DOTALL)
_ARGUMENT_EXCEPTIONS = ("ValueError", "TypeError", "KeyError")
# Memgraph's words for a write that collided with a concurrent transaction: the query-level
# TransactionSerializationException ("Cannot resolve conflicting transactions. ...", any version)
# and, inside a procedure, mgp.SerializationError ("Operation cannot be serialized.").
_CONFLICT = re.compile(r"Cannot resolve conflicting transactions|SerializationError|"
                       r"Operation cannot be serialized|Cannot serialize ")
# Memgraph's HintedAbortError when the transaction outlived its timeout (the embedded runtime says the same).
_ABORTED_BY_TIMEOUT = "Transaction was asked to abort because of transaction timeout"


class RecallError(Exception):
    """Base class of every error the memgraph-recall client raises."""


class RecallNotLoaded(RecallError):
    """The server has no `recall.*` procedures: wrong image, or the module failed to import."""


class RecallArgumentError(RecallError, ValueError):
    """The procedure rejected an argument or config value; the message is the module's own."""


class RecallProcedureError(RecallError):
    """The procedure failed for a reason other than its input (e.g. a model that cannot load)."""


class RecallConflictError(RecallProcedureError):
    """A write collided with a concurrent transaction (a serialization error): retrying may succeed."""


class RecallConnectionError(RecallError, ConnectionError):
    """The Memgraph server could not be reached or dropped the connection."""


class RecallTimeoutError(RecallError, TimeoutError):
    """A call got no answer within its `timeout` (the client gave up, or the server aborted it)."""


def not_loaded(procedure: str, detail: str) -> RecallNotLoaded:
    return RecallNotLoaded(
        f"the recall module is not loaded: is this the memgraph-recall image? ({detail}) "
        f"Check that `CALL mg.procedures() YIELD name WHERE name STARTS WITH 'recall.'` lists "
        f"{procedure}, and look for 'Unable to load module' in the server log "
        "(start Memgraph with --also-log-to-stderr to see it in `docker logs`)."
    )


def from_server_message(procedure: str, message: str) -> RecallError:
    """Classify a server or runtime error message raised while calling `procedure`."""
    message = message.strip()
    if _NOT_LOADED.search(message):
        return not_loaded(procedure, message)
    if _ARGUMENT_CHECK.search(message):
        return RecallArgumentError(f"{procedure}: {message}")
    if _ABORTED_BY_TIMEOUT in message:
        return RecallTimeoutError(f"{procedure}: the database aborted the call at its transaction timeout "
                                  "(the `timeout` setting, or the server's own query timeout if lower)")
    body = message.split(f"{procedure}:", 1)[1].strip() if f"{procedure}:" in message else message
    last_line = next((line.strip() for line in reversed(body.splitlines()) if line.strip()), body)
    match = _LAST_EXCEPTION.match(last_line)
    if _CONFLICT.search(last_line):
        return RecallConflictError(f"{procedure}: conflict with a concurrent write: "
                                   f"{match.group(2) if match else last_line}")
    if match and match.group(1).endswith(_ARGUMENT_EXCEPTIONS):
        return RecallArgumentError(f"{procedure}: {match.group(2)}")
    return RecallProcedureError(f"{procedure} failed: {last_line}")
