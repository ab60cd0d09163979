"""Errors the embedded runtime raises, worded like the Memgraph errors they stand in for."""


class QueryError(Exception):
    """A query failed, as a Memgraph client would see it (the message reads like Memgraph's)."""


class ProcedureNotFoundError(QueryError):
    """`There is no procedure named 'm.p'.`"""


class ArgumentError(QueryError):
    """Wrong number or type of arguments, rejected before the procedure runs."""


class ProcedureError(QueryError):
    """The procedure raised; the original exception is `__cause__`."""


class QueryTimeoutError(ProcedureError):
    """The call's time limit elapsed (the procedure saw `AbortError` or returned too late)."""


class ResultError(QueryError):
    """The procedure returned something Memgraph would refuse (undeclared field, wrong type, ...)."""


class GraphFileError(ValueError):
    """An `export_util.json` file or element list is malformed; nothing was loaded."""


class ConstraintViolation(QueryError, ValueError):
    """A constraint refused a write or a definition: raised as such by unique constraints (module
    `constraints`), worded as Memgraph's: `Unable to commit due to unique constraint violation on :L(k)`
    (a transaction or a single write was undone), or `Unable to create unique constraint :L(k), because
    an existing node violates it.` Type constraints raise the subclass TypeConstraintViolation (Memgraph's
    storage reports both as one ConstraintViolation, of type UNIQUE or TYPE)."""


class TypeConstraintViolation(ConstraintViolation):
    """A type constraint refused a write or a definition (module `type_constraints`), worded as
    Memgraph's: `IS TYPED STRING violation on L(k)` (as the write happens; outside a transaction the
    write was undone), or `Unable to create IS TYPED STRING constraint on :L(k), because an existing node
    violates it.`"""
