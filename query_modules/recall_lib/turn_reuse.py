"""`TurnReuse`: the turns a cached snapshot already read, for the build that follows a removal.

Why: when a session (or an Action, or an edge) is deleted, the cache cannot patch its entry and builds
the user afresh. At 100k messages that build spent most of its time reading each kept Action's
properties and converting its stored vectors, the very values the old entry holds. The build still
walks every holder and checks every Action's ownership as a cold build does (so what it holds is
exactly what a cold build would hold); only for an Action it admits that the old entry held as the
same (action id, session) does it take the old row and its normalised vectors instead of reading them.

What is kept is what the entry already trusts: each turn taken over keeps, in the new entry's rolling
check (`rolling`), the time its Action was last read, so it is read again within the maximum age of
that reading, as if the build had not happened; an edit is caught sooner, as on any call, by the
verification of every returned row, whose failure builds without reuse. Turns the rolling check found
changed are `excluded` and read again. Reused are only turns whose reading counted nothing as
malformed (a readable time, a usable vector of this model), so the build's malformed counts stay those
of a cold build, and whose text holds no fenced code: the prose vector of one that does (`prose`) is
read again with it, the few such turns costing what a cold build costs them.
"""

from dataclasses import dataclass

import numpy as np

from .passages import PASSAGE_CHARS
from .prose import FENCE
from .turn_table import TurnTable
from .vector_rows import VectorSet


@dataclass(frozen=True)
class TurnReuse:
    turns: TurnTable
    vectors: VectorSet  # the turns' passage vectors: owner = turn index, rows grouped by owner
    index: dict[int, int]  # Action vertex id -> turn index
    starts: np.ndarray  # per turn index, its first vector row (and per index + 1, the end)
    excluded: frozenset[int] = frozenset()  # Actions (vertex ids) to read again whatever the entry holds

    @classmethod
    def of(
        cls, turns: TurnTable, vectors: VectorSet, excluded: frozenset[int] = frozenset()
    ) -> "TurnReuse | None":
        """None when the rows are not grouped by turn in ascending order (nothing is reused then)."""
        owner = vectors.owner
        if len(owner) and bool(np.any(np.diff(owner) < 0)):
            return None
        starts = np.searchsorted(owner, np.arange(len(turns) + 1))
        if len(owner) and not np.array_equal(vectors.passage, np.arange(len(owner)) - starts[owner]):
            return None  # each turn's rows must be its passages in order
        index = {vertex_id: i for i, vertex_id in enumerate(turns.vertex_ids)}
        return cls(turns, vectors, index, starts, excluded)

    def row(
        self, vertex_id: int, action_id: str, session_id: str | None
    ) -> tuple[tuple, int, int] | None:
        """(the reader's row, where the turn's rows start and end in `vectors.matrix`) as the old entry
        holds them for this Action; None when it did not hold it as this action id and session, or its
        reading was not clean, or it is `excluded`, or its text holds fenced code."""
        i = self.index.get(vertex_id)
        if i is None or vertex_id in self.excluded:
            return None
        row = self.turns.fields(i)  # (vertex id, action id, session id, time, speaker, type, text)
        if row[1] != action_id or row[2] != session_id or row[3] is None or FENCE in row[6]:
            return None
        start, end = int(self.starts[i]), int(self.starts[i + 1])
        passages = self.turns.passages(i)
        if end - start != len(passages):
            return None  # no vector of this model (it may have been written since: read it)
        return (*row, passages if len(row[6]) > PASSAGE_CHARS else None), start, end
