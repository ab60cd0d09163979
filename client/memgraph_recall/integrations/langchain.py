"""`RecallRetriever`: recall as a LangChain retriever, one `Document` per rendered row.

Needs the `[langchain]` extra (`langchain-core`). The user is fixed when the retriever is built,
so a chain or an agent can only ever search that user's memory; `invoke(question)` calls
`recall.render` with `explain` on and returns the rows best first, as retrievers do: by the rank that
chose each row within its kind, the kinds taken in turn at equal rank (turn, fact, note), the render's
own order breaking ties. `page_content` is the row
as a model reads it (`TURN [...]`, `FACT: ...`, `MEMORY [...]`; a TURN row the text writes short below
one of its session and day, `TURN [same session, ...]`, written out in full, since a document stands
alone), `metadata` what the `recalled` map
says about it (kind, session, time, speaker, the lanes that found it, rank and score).

`metadata` reads as the rendered rows do: `kind` is the row's own word (`TURN`, `FACT`, `MEMORY`),
`rank` the document's place in the list (1 = best) and `shown` the row's place in the rendered text.
The ranking that chose a row counts within its kind (a turn's place in the fused turn ranking, a
fact's or note's best lane rank), so it is `kind_rank`, with its `score`: compare scores only between
rows of one kind.
"""

import asyncio
import logging
from collections.abc import Mapping
from datetime import date
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator

from memgraph_recall.client import RecallClient
from memgraph_recall.rendered import RenderedRow, rendered_rows

_TIME = {"turn": "timestamp", "fact": "valid_at", "memory": "updated_at"}
_KINDS = {"turn": 0, "fact": 1, "memory": 2}


def best_first(row: RenderedRow) -> tuple:
    """A row's place in rank order: its rank within its kind, then the kind, then where it was shown."""
    rank = row.rank if isinstance(row.rank, int) else 1 << 30
    return rank, _KINDS.get(row.kind, 3), row.position
logger = logging.getLogger(__name__)


class RecallRetriever(BaseRetriever):
    """LangChain retriever over `RecallClient` (a server or the embedded runtime) for one user.

    `today` fixes the date relative dates are read against (default: the current date at each
    call); `config` holds recall config keys for every call (`turns_k`, `lanes`, `since`, ...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    client: RecallClient
    user: str
    today: date | str | None = None
    config: Mapping[str, Any] = Field(default_factory=dict)

    @field_validator("user")
    @classmethod
    def _user_is_named(cls, user: str) -> str:
        if not user.strip():
            raise ValueError("user: expected a non-empty user_id")
        return user

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[Document]:
        recalled = self.client.render(self.user, query, self.today or date.today(),
                                      {**self.config, "explain": True})
        if recalled.user_found is False:
            logger.warning("recall: no user %r in %s, so no documents (user ids are exact)", self.user,
                           self.client.backend.description)
        rows = sorted(rendered_rows(recalled), key=best_first)
        return [self._document(rank, row) for rank, row in enumerate(rows, start=1)]

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
                                       ) -> list[Document]:
        """The same call in a worker thread: `RecallClient` blocks, the event loop must not."""
        return await asyncio.to_thread(self._get_relevant_documents, query,
                                       run_manager=run_manager.get_sync())

    def _document(self, rank: int, row: RenderedRow) -> Document:
        item = row.item
        metadata = {
            "user": self.user,
            "kind": row.kind.upper(),
            "rank": rank,
            "shown": row.position + 1,
            "session": item.get("session_id"),
            "time": item.get(_TIME[row.kind]),
            "speaker": item.get("speaker"),
            "lanes": [hit.get("lane") for hit in row.lanes],
            "kind_rank": row.rank,
            "score": row.score,
            "hits": row.lanes,
            "lifts": list(row.fused.get("lifts") or ()),
        }
        for key in ("action_id", "turn", "path", "type"):
            if key in item:
                metadata[key] = item[key]
        if item.get("facts"):  # facts read from this message, folded into its row to save the budget
            metadata["facts"] = [fact["sentence"] for fact in item["facts"]]
        return Document(page_content=row.text, metadata=metadata)
