"""What `setup` makes Memgraph enforce on :Action(action_id), and the record recall reads of it.

Facts and entities are attributed to a user through the action_ids they cite
(`query_modules/recall_lib/ownership.py`), which is safe only where an action_id names one Action:
- unique (`CREATE CONSTRAINT ... IS UNIQUE`): no two Actions hold equal ids;
- typed a string (`... IS TYPED STRING`): a citation is text, and Memgraph's uniqueness tells `7` from
  `"7"`, so where integer ids may exist another user's integer id cited as text could name this user's
  Action. Without the type constraint recall does not attribute through text that reads as an integer.

A procedure cannot see constraints, so setup reads them back (`SHOW CONSTRAINT INFO`) and writes what
holds on the database's RecallMeta, which every call reads. One sequence of steps (`establish`) over
either target: a Bolt server (`BoltTarget`) or an embedded store (`StoreTarget`).
"""

from dataclasses import dataclass
from typing import Any, Protocol

from memgraph_recall.shape import (
    NOT_TEXT_ACTION_IDS,
    RECORD_RULE,
    SHOW_CONSTRAINTS,
    TEXT_ACTION_IDS,
    TEXT_FIX,
    UNIQUE_ACTION_IDS,
    action_ids_enforced,
    action_ids_typed_text,
)


@dataclass(frozen=True)
class ActionIdRule:
    """What Memgraph enforces on :Action(action_id) after setup, and why not where it does not."""

    unique: bool
    text: bool
    refused: str | None = None  # Memgraph's refusal of the uniqueness constraint (duplicate ids)
    not_text: int = 0  # Actions whose action_id is not a string (the type constraint was not created)
    text_refused: str | None = None  # Memgraph's refusal of the type constraint, if it came to that

    def line(self) -> str:
        """What setup says of it."""
        if not self.unique:
            reason = f" ({self.refused})" if self.refused else ""
            return (
                f"action_ids NOT unique{reason}: recall shows no fact or entity here until duplicate "
                "action_ids are removed and setup is run again"
            )
        if self.text:
            return ("action_ids unique and typed STRING (constraints on :Action(action_id)): facts and "
                    "entities are attributed")
        if self.not_text:
            why = (f"{self.not_text} Actions hold an action_id that is not a string; make them strings "
                   f"({TEXT_FIX}; two that become equal must be renamed first) and run setup again")
        else:
            why = f"Memgraph refused IS TYPED STRING ({self.text_refused}); run setup again"
        return (f"action_ids unique (constraint on :Action(action_id)) but not typed STRING: {why}. "
                "Until then facts and entities are attributed, but not through action_ids that read as "
                "integers")


class Target(Protocol):
    """Where setup runs: each step as Memgraph would run it."""

    def create_unique(self) -> None: ...  # raises on existing duplicates
    def create_text(self) -> None: ...  # raises when an existing action_id is not a string
    def constraints(self) -> list[dict]: ...  # SHOW CONSTRAINT INFO
    def not_text(self) -> int: ...  # Actions whose action_id is not a string
    def record(self, unique: bool, text: bool) -> None: ...  # on every RecallMeta


def establish(target: Target, refusal: type[Exception] | tuple[type[Exception], ...]) -> ActionIdRule:
    """Create what the data allows (an existing constraint is left as it is: Memgraph refuses to create
    a type constraint twice), then record what Memgraph holds. `refusal`: what the target raises when
    Memgraph refuses a constraint over the existing data."""
    refused = text_refused = None
    held = target.constraints()
    if not action_ids_enforced(held):
        try:
            target.create_unique()
        except refusal as exc:
            refused = str(exc)
    not_text = 0
    if not action_ids_typed_text(held):
        not_text = target.not_text()
        if not not_text:
            try:
                target.create_text()
            except refusal as exc:  # an Action written since the count
                text_refused = str(exc)
    held = target.constraints()
    unique, text = action_ids_enforced(held), action_ids_typed_text(held)
    rule = ActionIdRule(unique, text, refused, not_text, text_refused)
    target.record(rule.unique, rule.text)
    return rule


class StoreTarget:
    """An embedded database (`memgraph_recall.embedded.GraphStore`)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def create_unique(self) -> None:
        self.store.create_unique_constraint("Action", "action_id")

    def create_text(self) -> None:
        self.store.create_type_constraint("Action", "action_id", "STRING")

    def constraints(self) -> list[dict]:
        return self.store.constraints()

    def not_text(self) -> int:
        store = self.store
        with store.lock.read():
            held = (store.get_vertex(v).props.get("action_id") for v in store.label_lookup("Action"))
            return sum(1 for value in held if value is not None and not isinstance(value, str))

    def record(self, unique: bool, text: bool) -> None:
        for vertex_id in self.store.label_lookup("RecallMeta"):
            self.store.set_vertex_property(vertex_id, "action_ids_unique", unique)
            self.store.set_vertex_property(vertex_id, "action_ids_text", text)


class BoltTarget:
    """A server, through `BoltBackend.run` (DDL and the record on MAIN)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def create_unique(self) -> None:
        self.backend.run("setup", UNIQUE_ACTION_IDS)

    def create_text(self) -> None:
        self.backend.run("setup", TEXT_ACTION_IDS)

    def constraints(self) -> list[dict]:
        return self.backend.run("setup", SHOW_CONSTRAINTS)

    def not_text(self) -> int:
        rows = self.backend.run("setup", NOT_TEXT_ACTION_IDS)
        return int(rows[0]["actions"]) if rows else 0

    def record(self, unique: bool, text: bool) -> None:
        self.backend.run("setup", RECORD_RULE, {"unique": unique, "text": text})
