"""The text lane: BM25 over one user's own messages, tokenised like Memgraph's text index.

Python procedures cannot reach Memgraph's (Tantivy) text index, and a
per-user index is exact where a global index searched and then filtered is
not. Postings are CSR-like numpy arrays (the layout bm25s uses), so an index
over 100k short messages builds in well under two seconds and answers in
milliseconds. Scoring is Lucene/Tantivy BM25: ``idf = ln(1 + (N - df + 0.5) /
(df + 0.5))`` times ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))``,
with document length counted in tokens. Tokens are not stemmed (as Tantivy's default); a question's
word the documents never hold is searched by the inflected relatives they do (`BM25Index.family`).
"""

import math
import re
import sys
from collections.abc import Iterable, Sequence
from itertools import count

import numpy as np

from .inflection import forms, stem

#: Tantivy's default tokenizer drops tokens of this many UTF-8 bytes or more.
MAX_TOKEN_BYTES = 40

#: A term found in more than this share of a user's documents says nothing about any of them.
COMMON_TERM_SHARE = 0.5

#: Below this many documents a term's share is noise, so only the stopword list applies.
COMMON_TERM_MIN_DOCS = 50

# Words that carry no topic in a question; our own compact list (pronouns, articles,
# auxiliaries, prepositions, question words, fillers).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else ever few for
    from further get got had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me might more most much must my myself no nor not now of
    off on once only or other our ours ourselves out over own please same shall she should so some
    such than that the their theirs them themselves then there these they this those through to too
    under until up upon us very was we were what whatever when where whether which while who whom
    whose why will with would yet you your yours yourself yourselves
    tell know remember recall anything something thing things
    s t d ll m re ve don didn doesn isn wasn aren weren haven hasn won wouldn couldn shouldn
    """.split()
)

# Runs of alphanumeric characters: ``\\w`` minus the underscore (Tantivy splits on "_").
_TOKEN = re.compile(r"[^\W_]+")
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")

# What an ASCII token looks like once lowercased (`TermOverlap`).
_ASCII_TERM = re.compile(rf"[a-z0-9]{{1,{MAX_TOKEN_BYTES - 1}}}")

# Joins documents for the bulk pass; not alphanumeric, so it never merges tokens.
_SEPARATOR = "\x00"


def _byte_class(byte: int) -> int:
    """How the bulk pass maps one UTF-8 byte: ASCII letters and digits lowercased, other ASCII to a space.

    Bytes of non-ASCII characters (0x80 and up) and the separator are kept;
    a run holding non-ASCII bytes is re-tokenised as text.
    """
    if byte >= 0x80 or chr(byte) == _SEPARATOR:
        return byte
    return ord(chr(byte).lower()) if chr(byte).isalnum() else ord(" ")


_BYTE_TABLE = bytes(map(_byte_class, range(256)))


def tokenize(text: str) -> list[str]:
    """``text``'s tokens as Tantivy's default tokenizer makes them.

    That is: runs of alphanumeric characters; runs of 40 or more UTF-8 bytes
    dropped (measured before lowercasing); the rest lowercased character by
    character (so a final capital sigma becomes "σ", not "ς"); no stemming.
    Python's ``isalnum`` differs from Rust's ``is_alphanumeric`` on some
    combining marks (e.g. Devanagari vowel signs split a word here); documents
    and questions are tokenised alike, so the index stays consistent.
    """
    if text.isascii():
        return [token for token in _ASCII_TOKEN.findall(text.lower()) if len(token) < MAX_TOKEN_BYTES]
    return [term for term in map(_term, _TOKEN.findall(text)) if term is not None]


def _term(raw: str) -> str | None:
    """The indexed form of one raw alphanumeric run: ``None`` when too long, else lowercased per character."""
    if len(raw.encode("utf-8")) >= MAX_TOKEN_BYTES:
        return None
    return raw.lower() if "Σ" not in raw else "".join(char.lower() for char in raw)


#: An index's tail (documents added since its postings were merged) is merged into them once it holds
#: more than 1/_TAIL_SHARE of their postings.
_TAIL_SHARE = 8


class BM25Index:
    """A BM25 index over a list of documents, addressed by their position in that list.

    Built once and never changed (its arrays are read-only), so a cache may
    share it between calls and threads. An index extended by new documents
    (a user's new session) keeps them in a **tail**, a second small index
    whose postings are searched with this one's statistics, so extending
    costs the new documents and the tail, not every posting; the tail is
    merged in when it outgrows an eighth of the postings. Scores are the
    same, to the last bit, as one index built over all the documents.
    """

    __slots__ = (
        "k1",
        "b",
        "vocabulary",
        "indptr",
        "doc_ids",
        "term_freqs",
        "doc_lengths",
        "tail",
        "_avg_len",
        "_postings_bytes",
    )

    def __init__(
        self,
        vocabulary: dict[str, int],
        indptr: np.ndarray,
        doc_ids: np.ndarray,
        term_freqs: np.ndarray,
        doc_lengths: np.ndarray,
        k1: float,
        b: float,
        tail: "BM25Index | None" = None,
        postings_bytes: int | None = None,
    ) -> None:
        """Wrap postings already in CSR form; use :meth:`build` to index documents. `doc_lengths`: every
        document's, the `tail`'s last (its postings number them from 0)."""
        for array in (indptr, doc_ids, term_freqs, doc_lengths):
            array.flags.writeable = False
        self.k1 = k1
        self.b = b
        self.vocabulary = vocabulary
        self.indptr = indptr
        self.doc_ids = doc_ids
        self.term_freqs = term_freqs
        self.doc_lengths = doc_lengths
        self.tail = tail
        self._avg_len = float(doc_lengths.mean()) if len(doc_lengths) and doc_lengths.any() else 1.0
        if postings_bytes is None:
            postings_bytes = (
                sum(array.nbytes for array in (indptr, doc_ids, term_freqs))
                + sys.getsizeof(vocabulary)
                + sum(sys.getsizeof(term) for term in vocabulary)
            )
        self._postings_bytes = postings_bytes

    @classmethod
    def build(cls, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> "BM25Index":
        """Index ``docs`` (strings); document ``i`` is ``docs[i]``."""
        if not (isinstance(k1, (int, float)) and math.isfinite(k1) and k1 >= 0):
            raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not (isinstance(b, (int, float)) and 0 <= b <= 1):
            raise ValueError(f"b must be a number from 0 to 1, got {b!r}")
        for position, doc in enumerate(docs):
            if not isinstance(doc, str):
                raise ValueError(f"docs must be strings, got {doc!r} at position {position}")
        n_docs = max(len(docs), 1)  # a key multiplier; no postings exist when there are no docs
        term_rows, token_docs, vocabulary = _tokenize_all(docs)
        doc_lengths = np.bincount(token_docs, minlength=len(docs)).astype(np.int32)
        # One key per (term, doc) occurrence: sorted, a run of equal keys is one posting, grouped by term
        # then doc. A stable sort and a run scan are ~3x faster here than np.unique(return_counts).
        occurrences = _sorted_keys(term_rows, token_docs, n_docs, len(vocabulary))
        starts = np.flatnonzero(np.diff(occurrences, prepend=-1))
        keys = occurrences[starts]
        term_freqs = np.diff(starts, append=len(occurrences))
        indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // n_docs, minlength=len(vocabulary)), out=indptr[1:])
        doc_ids = (keys % n_docs).astype(np.int32)
        return cls(vocabulary, indptr, doc_ids, term_freqs.astype(np.int32), doc_lengths, float(k1), float(b))

    @property
    def n_docs(self) -> int:
        """How many documents were indexed (empty ones included)."""
        return len(self.doc_lengths)

    @property
    def nbytes(self) -> int:
        """Approximate bytes held: the arrays, the vocabulary dict and its strings (for the cache's limit)."""
        tail = self.tail.nbytes - self.tail.doc_lengths.nbytes if self.tail is not None else 0
        return self._postings_bytes + self.doc_lengths.nbytes + tail

    def extended(self, docs: Sequence[str]) -> "BM25Index":
        """One index over these documents followed by `docs` (numbered after them), without re-tokenising
        these: `docs` are indexed alone and merged into the tail (or, once it is large, everything into
        one index)."""
        if not docs:
            return self
        new = BM25Index.build(docs, self.k1, self.b)
        tail = new if self.tail is None else _merged(self.tail, new)
        lengths = np.concatenate([self.doc_lengths, new.doc_lengths]).astype(np.int32)
        postings = (self.vocabulary, self.indptr, self.doc_ids, self.term_freqs)
        if len(tail.doc_ids) * _TAIL_SHARE > len(self.doc_ids):
            head = BM25Index(
                *postings, lengths[: len(lengths) - tail.n_docs], self.k1, self.b, None, self._postings_bytes
            )
            return _merged(head, tail)
        return BM25Index(*postings, lengths, self.k1, self.b, tail, self._postings_bytes)

    def _rows(self, term: str) -> list[tuple["BM25Index", int, int]]:
        """Where ``term``'s postings are: (index, row, number of its first document), this one's first."""
        found = []
        row = self.vocabulary.get(term)
        if row is not None:
            found.append((self, row, 0))
        if self.tail is not None:
            row = self.tail.vocabulary.get(term)
            if row is not None:
                found.append((self.tail, row, self.n_docs - self.tail.n_docs))
        return found

    def doc_freq(self, term: str) -> int:
        """In how many documents ``term`` (a token) occurs."""
        return sum(int(index.indptr[row + 1] - index.indptr[row]) for index, row, _ in self._rows(term))

    def documents(self, terms: Iterable[str]) -> np.ndarray:
        """The documents holding at least one of ``terms`` (tokens), ascending: their postings, no scores."""
        found = [
            index.doc_ids[index.indptr[row] : index.indptr[row + 1]] + first
            for term in dict.fromkeys(terms)
            for index, row, first in self._rows(term)
        ]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def search(
        self, terms: Iterable[str | tuple[str, ...]], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` documents for ``terms`` (OR, each distinct term counted once): indices and scores.

        Best first; equal scores in index order. Only documents matching at
        least one term are returned, and with ``allowed`` (a boolean mask over
        the documents) only those it marks. A term given as a tuple of words
        (a `family`) is scored as one term that each of them spells.
        """
        if isinstance(terms, str):
            raise ValueError(f"terms must be a list of tokens, not a string: {terms!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be an integer >= 0, got {k!r}")
        if allowed is not None:
            allowed = np.asarray(allowed)
            if allowed.dtype != np.bool_ or allowed.shape != (self.n_docs,):
                raise ValueError(
                    f"allowed must be a boolean array of shape ({self.n_docs},), "
                    f"got {allowed.dtype} of shape {allowed.shape}"
                )
        scores = np.zeros(self.n_docs, dtype=np.float64)
        for term in dict.fromkeys(terms):
            self._add_term(scores, (term,) if isinstance(term, str) else term)
        matched = scores > 0  # every posting adds a positive amount: idf > 0, tf >= 1
        if allowed is not None:
            matched &= allowed
        candidates = np.flatnonzero(matched)
        if k == 0 or len(candidates) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        candidate_scores = scores[candidates]
        if len(candidates) > k:
            # Keep everything tied with the k-th best, so the stable sort below breaks ties by index.
            kth_best = np.partition(candidate_scores, len(candidates) - k)[len(candidates) - k]
            keep = candidate_scores >= kth_best
            candidates, candidate_scores = candidates[keep], candidate_scores[keep]
        order = np.argsort(-candidate_scores, kind="stable")[:k]
        return candidates[order], candidate_scores[order]

    def family(self, term: str) -> tuple[str, ...]:
        """The words ``term`` is searched by: itself when the documents hold it, else the indexed words of
        its inflectional stem ("camped" -> "camp", "camping"), found by looking up the stem's spellings
        (`inflection.forms`), not by a pass over the vocabulary.

        Why only a word the documents never hold: the user wrote "camping" and the question says
        "camped", so it can only mean a relative; where the user wrote the word itself (a coding chat's
        "tests" beside hundreds of "test"), its relatives would blur what it picks out."""
        if self._rows(term):
            return (term,)
        root = stem(term)
        kin = sorted(form for form in forms(term) if form != term and self._rows(form) and stem(form) == root)
        return tuple(kin) or (term,)

    def _add_term(self, scores: np.ndarray, words: Sequence[str]) -> None:
        """Add one term's BM25 contribution to ``scores`` in place (its postings here and in the tail);
        a term of several `words` (a `family`) counts a document holding any of them, its frequency the
        sum of theirs."""
        rows = [found for word in words for found in self._rows(word)]
        if not rows:
            return
        parts = []
        for index, row, first in rows:
            start, end = index.indptr[row], index.indptr[row + 1]
            docs = index.doc_ids[start:end] + first if first else index.doc_ids[start:end]
            parts.append((docs, index.term_freqs[start:end]))
        if len(words) > 1 and len(rows) > 1:
            summed = np.zeros(self.n_docs, dtype=np.float64)
            for docs, tf in parts:
                summed[docs] += tf  # a word's postings hold each document once
            docs = np.flatnonzero(summed)
            parts = [(docs, summed[docs])]
        df = sum(len(docs) for docs, _ in parts)
        idf = math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
        for docs, tf in parts:
            tf = tf.astype(np.float64)
            norm = self.k1 * (1.0 - self.b + self.b * self.doc_lengths[docs] / self._avg_len)
            scores[docs] += idf * tf * (self.k1 + 1.0) / (tf + norm)


def _merged(first: BM25Index, second: BM25Index) -> BM25Index:
    """One index over `first`'s documents, then `second`'s: postings merged per term (neither has a tail)."""
    vocabulary = dict(first.vocabulary)
    rows = np.empty(len(second.vocabulary), dtype=np.int64)
    for term, row in second.vocabulary.items():
        rows[row] = vocabulary.setdefault(term, len(vocabulary))
    mine = np.zeros(len(vocabulary), dtype=np.int64)
    mine[: len(first.vocabulary)] = np.diff(first.indptr)
    theirs = np.diff(second.indptr)
    counts = mine.copy()
    np.add.at(counts, rows, theirs)
    indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    doc_ids = np.empty(int(indptr[-1]), dtype=np.int32)
    term_freqs = np.empty(int(indptr[-1]), dtype=np.int32)
    # Per term: the first index's postings first, then the second's (search does not need order).
    term = np.repeat(np.arange(len(first.vocabulary)), mine[: len(first.vocabulary)])
    at = indptr[term] + np.arange(len(first.doc_ids)) - first.indptr[term]
    doc_ids[at], term_freqs[at] = first.doc_ids, first.term_freqs
    term = np.repeat(rows, theirs)
    at = indptr[term] + mine[term] + np.arange(len(second.doc_ids)) - np.repeat(second.indptr[:-1], theirs)
    doc_ids[at], term_freqs[at] = second.doc_ids + first.n_docs, second.term_freqs
    lengths = np.concatenate([first.doc_lengths, second.doc_lengths]).astype(np.int32)
    return BM25Index(vocabulary, indptr, doc_ids, term_freqs, lengths, first.k1, first.b)


#: Documents joined and split at a time: the raw runs of ~1000 messages (~30k small bytes objects)
#: stay in the CPU cache and reuse the same memory, where splitting 100k messages at once made 3M
#: objects live together and ran ~2x slower inside a large process.
_CHUNK_DOCS = 1024


#: Vocabularies up to this size sort their postings by a 16-bit radix sort (see `_sorted_keys`).
_RADIX_TERMS = 1 << 16


def _sorted_keys(term_rows: np.ndarray, token_docs: np.ndarray, n_docs: int, n_terms: int) -> np.ndarray:
    """`term_rows * n_docs + token_docs`, sorted. Tokens come in document order, so a stable sort by
    term alone orders by (term, document); numpy sorts 16-bit keys stably by radix, O(n), ~2x faster
    at 3M tokens than sorting the 64-bit keys."""
    keys = term_rows * n_docs + token_docs
    if n_terms > _RADIX_TERMS:
        return np.sort(keys, kind="stable")
    return keys[np.argsort(term_rows.astype(np.uint16), kind="stable")]


def _tokenize_all(docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Every token of ``docs`` as (term row, document) arrays, and the vocabulary: ``tokenize`` in bulk.

    Why not ``tokenize`` per document: at 100k messages the per-call cost
    dominates. Here the joined documents are cut into raw runs by one
    ``bytes.translate`` + ``split`` per chunk of documents and numbered by
    one dict pass, both at C speed; ``tokenize``'s rules then run once per
    *distinct* run (an ASCII run is one term or too long; a run with
    non-ASCII bytes is decoded and tokenised as text, giving any number of
    terms). Terms are numbered by first appearance.
    """
    separator = _SEPARATOR.encode()
    first_seen: dict[bytes, int] = {}  # each distinct run -> the position of its first occurrence
    positions = count()
    run_parts: list[np.ndarray] = []
    doc_parts: list[np.ndarray] = []
    for start in range(0, len(docs), _CHUNK_DOCS):
        chunk = docs[start : start + _CHUNK_DOCS]
        joined = f" {_SEPARATOR} ".join(chunk)
        if joined.count(_SEPARATOR) != len(chunk) - 1:
            # A document holding the separator: as a non-alphanumeric it only splits tokens, as a space does.
            joined = f" {_SEPARATOR} ".join(doc.replace(_SEPARATOR, " ") for doc in chunk)
        runs = joined.encode("utf-8", "surrogatepass").translate(_BYTE_TABLE).split()
        run_ids = np.fromiter(map(first_seen.setdefault, runs, positions), dtype=np.int64, count=len(runs))
        # A run's document: the chunk's first plus the separators before it.
        doc_parts.append(start + np.cumsum(run_ids == first_seen.get(separator, -1)))
        run_parts.append(run_ids)
    run_ids = np.concatenate(run_parts) if run_parts else np.zeros(0, dtype=np.int64)
    token_docs = np.concatenate(doc_parts) if doc_parts else np.zeros(0, dtype=np.int64)
    # The terms of each distinct run, as CSR over first-occurrence positions.
    vocabulary: dict[str, int] = {}
    term_count = np.zeros(len(run_ids), dtype=np.int64)
    term_start = np.zeros(len(run_ids), dtype=np.int64)
    flat_terms: list[int] = []
    for run, position in first_seen.items():
        if run == separator:
            terms = []
        elif run.isascii():
            terms = [run.decode("ascii")] if len(run) < MAX_TOKEN_BYTES else []
        else:
            terms = tokenize(run.decode("utf-8", "surrogatepass"))
        term_start[position], term_count[position] = len(flat_terms), len(terms)
        flat_terms.extend(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
    flat = np.asarray(flat_terms, dtype=np.int64)
    if term_count.max(initial=0) <= 1:  # every run one term or none (most texts): a lookup, no gather
        term_of_run = np.full(len(term_count), -1, dtype=np.int64)
        single = np.flatnonzero(term_count == 1)
        term_of_run[single] = flat[term_start[single]]
        terms = term_of_run[run_ids]
        kept = terms >= 0
        return terms[kept], token_docs[kept], vocabulary
    counts = term_count[run_ids]
    first_of_run = np.cumsum(counts) - counts
    gather = np.repeat(term_start[run_ids] - first_of_run, counts) + np.arange(counts.sum())
    return flat[gather], np.repeat(token_docs, counts), vocabulary


def query_terms(tokens: Sequence[str], index: BM25Index) -> list[str]:
    """A question's searchable words (``tokens``: its `tokenize` tokens): minus stopwords and terms most
    of the user's texts hold.

    Deduplicated, in question order. A term counts as common when it occurs in
    more than ``COMMON_TERM_SHARE`` of the documents and the index holds at
    least ``COMMON_TERM_MIN_DOCS``. When nothing is left (a question of only
    such words), the question's tokens that occur in the index are used
    instead, so "who am I?" still finds something.
    """
    tokens = list(dict.fromkeys(tokens))
    large = index.n_docs >= COMMON_TERM_MIN_DOCS
    limit = COMMON_TERM_SHARE * index.n_docs
    kept = [
        token for token in tokens if token not in STOPWORDS and not (large and index.doc_freq(token) > limit)
    ]
    return kept or [token for token in tokens if index.doc_freq(token) > 0]


def overlap_best(passages: Sequence[str], question_terms: Iterable[str]) -> int:
    """The index of the passage sharing the most distinct ``question_terms``; the first on a tie."""
    return TermOverlap(question_terms).best(passages)


class TermOverlap:
    """How many distinct terms of one call's a passage holds, as `tokenize` would count them.

    Why not tokenise each passage: a call picks the matched passage of up to a hundred long messages,
    several passages each, and tokenising them was a third of a call's time (BEAM's coding chats). An
    ASCII passage, lowercased, is searched for each term as a substring, and a term it holds for a whole
    token (bounded by non-alphanumerics), which finds exactly the tokens `tokenize` would yield that are
    terms (terms are tokens: lowercase, under `MAX_TOKEN_BYTES`); other passages are tokenised.
    """

    def __init__(self, terms: Iterable[str]) -> None:
        self.terms = frozenset(terms)
        self._ascii = {  # only an ASCII token can be one of an ASCII passage's
            term: re.compile(r"(?<![a-z0-9])" + term + r"(?![a-z0-9])")
            for term in sorted(self.terms)
            if _ASCII_TERM.fullmatch(term)
        }

    def count(self, passage: str) -> int:
        if not passage.isascii():
            return len(self.terms.intersection(tokenize(passage)))
        lowered = passage.lower()
        return sum(1 for term, whole in self._ascii.items() if term in lowered and whole.search(lowered))

    def best(self, passages: Sequence[str]) -> int:
        """The index of the passage holding the most distinct terms; the first on a tie."""
        if not passages:
            raise ValueError("passages must not be empty")
        if len(passages) == 1 or not self.terms:
            return 0  # most turns: nothing to search
        overlaps = [self.count(passage) for passage in passages]
        return overlaps.index(max(overlaps))
