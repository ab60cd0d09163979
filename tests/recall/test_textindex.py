"""The text lane's BM25: Tantivy-like tokens, exact scores, deterministic top-k, speed at 100k messages."""

import math
import time
from collections import Counter
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_lib import textindex
from recall_lib.textindex import (
    COMMON_TERM_MIN_DOCS,
    BM25Index,
    TermOverlap,
    overlap_best,
    query_terms,
    tokenize,
)

# Text that exercises the tokenizer's corners: case, underscores, the bulk separator, sigma, long runs.
_PIECES = st.sampled_from(
    [
        "cat",
        "Cat",
        "DOG",
        "a_b",
        " ",
        ". ",
        "\x00",
        "ΟΔΟΣ",
        "é",
        "x" * 39,
        "É" * 19,
        "9",
        "\n",
        "’",
        "\xa0",
        "İ",
        "\ud800",
    ]
)
_DOCS = st.lists(
    st.one_of(st.lists(_PIECES, max_size=12).map("".join), st.text(max_size=30)), min_size=0, max_size=12
)
_VOCABULARY = ["alpha", "beta", "gamma", "delta", "epsilon"]
_SMALL_DOCS = st.lists(
    st.lists(st.sampled_from(_VOCABULARY), max_size=8).map(" ".join), min_size=1, max_size=15
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World! It's 2024_05-01.", ["hello", "world", "it", "s", "2024", "05", "01"]),
        ("snake_case and CamelCase", ["snake", "case", "and", "camelcase"]),
        ("x" * 39 + " " + "y" * 40, ["x" * 39]),  # 40 bytes or more: dropped
        ("é" * 19 + " " + "é" * 20, ["é" * 19]),  # 38 bytes kept, 40 bytes dropped
        ("Café über ΟΔΟΣ", ["café", "über", "οδοσ"]),  # per-character lowercase: no final sigma
        ("love❤️pizza", ["love", "pizza"]),
        ("我爱北京 ok", ["我爱北京", "ok"]),
        ("", []),
        ("?!. ,", []),
    ],
)
def test_tokenize_like_tantivy(text, expected):
    assert tokenize(text) == expected


def _postings(index: BM25Index) -> list[Counter]:
    """Each document's term frequencies, read back from the CSR arrays."""
    terms = {row: term for term, row in index.vocabulary.items()}
    counters = [Counter() for _ in range(index.n_docs)]
    for row in range(len(terms)):
        for position in range(index.indptr[row], index.indptr[row + 1]):
            counters[index.doc_ids[position]][terms[row]] = int(index.term_freqs[position])
    return counters


@given(_DOCS)
def test_bulk_build_tokenises_each_document_like_tokenize(docs):
    index = BM25Index.build(docs)
    assert index.n_docs == len(docs)
    assert _postings(index) == [Counter(tokenize(doc)) for doc in docs]
    assert index.doc_lengths.tolist() == [len(tokenize(doc)) for doc in docs]
    for term in {token for doc in docs for token in tokenize(doc)}:
        assert index.doc_freq(term) == sum(term in tokenize(doc) for doc in docs)


@given(_DOCS, st.integers(1, 4))
def test_bulk_build_gives_the_same_index_in_chunks_of_documents(docs, chunk):
    with mock.patch.object(textindex, "_CHUNK_DOCS", chunk):
        index = BM25Index.build(docs)
    assert _postings(index) == [Counter(tokenize(doc)) for doc in docs]
    assert index.doc_lengths.tolist() == [len(tokenize(doc)) for doc in docs]


@given(_DOCS)
def test_large_vocabularies_sort_postings_the_other_way_to_the_same_index(docs):
    radix = BM25Index.build(docs)
    with mock.patch.object(textindex, "_RADIX_TERMS", 0):
        general = BM25Index.build(docs)
    for name in ("indptr", "doc_ids", "term_freqs", "doc_lengths"):
        np.testing.assert_array_equal(getattr(radix, name), getattr(general, name))
    assert radix.vocabulary == general.vocabulary


def _reference_scores(
    docs: list[str], terms: list[str], k1: float = 1.5, b: float = 0.75
) -> dict[int, float]:
    """BM25 written out directly from its definition, for matched documents only."""
    tokens = [tokenize(doc) for doc in docs]
    average = sum(map(len, tokens)) / len(docs) or 1.0
    scores: dict[int, float] = {}
    for term in set(terms):
        df = sum(term in doc_tokens for doc_tokens in tokens)
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        for doc, doc_tokens in enumerate(tokens):
            tf = doc_tokens.count(term)
            if tf:
                norm = k1 * (1 - b + b * len(doc_tokens) / average)
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
    return scores


@given(_SMALL_DOCS, st.lists(st.sampled_from([*_VOCABULARY, "absent"]), max_size=4), st.integers(0, 20))
def test_search_is_the_reference_top_k(docs, terms, k):
    index = BM25Index.build(docs)
    found, scores = index.search(terms, k)
    reference = _reference_scores(docs, terms)
    assert len(found) == min(k, len(reference))
    assert scores.tolist() == pytest.approx([reference[doc] for doc in found.tolist()], rel=1e-9)
    for i in range(len(found) - 1):  # best first; equal scores in index order
        assert scores[i] > scores[i + 1] or (scores[i] == scores[i + 1] and found[i] < found[i + 1])
    if len(found):  # nothing clearly better was left out
        assert all(doc in found for doc, score in reference.items() if score > scores[-1] * (1 + 1e-9))


@given(_SMALL_DOCS, st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=3), st.data())
def test_allowed_mask_only_removes_documents(docs, terms, data):
    index = BM25Index.build(docs)
    allowed = np.array(data.draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs))), dtype=bool)
    everything, all_scores = index.search(terms, len(docs))
    kept, kept_scores = index.search(terms, len(docs), allowed)
    mask = allowed[everything]
    assert kept.tolist() == everything[mask].tolist()
    assert kept_scores.tolist() == all_scores[mask].tolist()


def test_ties_go_to_the_lower_index_even_across_the_k_cut():
    docs = ["red fox", "blue fox", "red fox", "green", "red fox", "red fox"]
    index = BM25Index.build(docs)
    found, scores = index.search(["red"], 2)
    assert found.tolist() == [0, 2]
    assert scores[0] == scores[1]
    assert index.search(["red"], 10)[0].tolist() == [0, 2, 4, 5]


def test_search_details():
    index = BM25Index.build(["apple pie", "apple apple tart", "pear", ""])
    assert index.n_docs == 4
    assert index.doc_freq("apple") == 2 and index.doc_freq("kiwi") == 0
    assert index.search(["apple"], 1)[0].tolist() == [1]  # higher tf wins at similar length
    # A term repeated in the query counts once.
    assert index.search(["apple", "apple"], 5)[1].tolist() == index.search(["apple"], 5)[1].tolist()
    for terms, k in ((["kiwi"], 3), (["apple"], 0), ([], 3)):
        found, scores = index.search(terms, k)
        assert found.shape == (0,) and scores.shape == (0,)
    assert index.search(["pear"], 3, np.array([True, True, False, True]))[0].tolist() == []
    assert index.nbytes > sum(
        a.nbytes for a in (index.indptr, index.doc_ids, index.term_freqs, index.doc_lengths)
    )
    with pytest.raises(ValueError):
        index.doc_ids[0] = 3  # read-only: a cached index is shared


def test_empty_index():
    index = BM25Index.build([])
    assert index.n_docs == 0
    assert index.search(["a"], 3)[0].tolist() == []
    assert query_terms(tokenize("who am I"), index) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda i: i.search("apple", 3), "terms must be a list of tokens, not a string"),
        (lambda i: i.search(["apple"], -1), "k must be an integer >= 0, got -1"),
        (lambda i: i.search(["apple"], True), "k must be an integer >= 0"),
        (
            lambda i: i.search(["apple"], 2, np.ones(3, dtype=bool)),
            r"allowed must be a boolean array of shape \(2,\)",
        ),
        (lambda i: i.search(["apple"], 2, np.ones(2)), "allowed must be a boolean array"),
        (lambda i: BM25Index.build(["ok", None]), "docs must be strings, got None at position 1"),
        (lambda i: BM25Index.build(["ok"], k1=-1), "k1 must be a finite number >= 0"),
        (lambda i: BM25Index.build(["ok"], b=2), "b must be a number from 0 to 1"),
    ],
)
def test_bad_arguments_are_named(call, message):
    index = BM25Index.build(["apple", "pear"])
    with pytest.raises(ValueError, match=message):
        call(index)


def test_query_terms_drop_stopwords_and_keep_order():
    index = BM25Index.build(["I went camping with the kids", "my favorite book"])
    terms = query_terms(tokenize("How many times did I go camping with the kids? Camping!"), index)
    assert terms == ["many", "times", "go", "camping", "kids"]


def test_query_terms_drop_near_universal_terms_only_in_a_large_index():
    common = ["pizza night again"] * 40 + [f"note {n}" for n in range(COMMON_TERM_MIN_DOCS - 40)]
    assert query_terms(tokenize("What pizza toppings?"), BM25Index.build(common)) == ["toppings"]
    small = BM25Index.build(common[:45])
    assert query_terms(tokenize("What pizza toppings?"), small) == ["pizza", "toppings"]


def test_all_stopword_question_falls_back_to_its_words_in_the_index():
    index = BM25Index.build(["who is there", "I am here"])
    assert query_terms(tokenize("Who am I?"), index) == ["who", "am", "i"]
    assert query_terms(tokenize("what about it"), index) == []


def test_overlap_best():
    passages = ["We hiked up the ridge. ", "Then we cooked pasta by the lake. ", "Pasta again, lake view."]
    assert overlap_best(passages, ["pasta", "lake", "cooked"]) == 1
    assert overlap_best(passages, ["pasta", "lake"]) == 1  # tie: the first
    assert overlap_best(passages, ["nothing"]) == 0
    with pytest.raises(ValueError, match="passages must not be empty"):
        overlap_best([], ["a"])


@given(st.lists(st.lists(_PIECES, max_size=12).map("".join), min_size=1, max_size=4), st.data())
def test_term_overlap_counts_what_tokenize_finds(passages, data):
    """The ASCII search finds exactly the terms tokenising finds (terms are tokens: lowercase, short)."""
    others = {"cat", "dog", "zz", "σ", "a", "a_b", "Cat"}  # "a_b" and "Cat" are never tokens
    vocabulary = sorted({t for p in passages for t in tokenize(p)} | others)
    terms = data.draw(st.lists(st.sampled_from(vocabulary), max_size=6))
    overlap = TermOverlap(terms)
    for passage in passages:
        assert overlap.count(passage) == len(set(terms) & set(tokenize(passage)))
    counts = [len(set(terms) & set(tokenize(p))) for p in passages]
    assert overlap.best(passages) == (counts.index(max(counts)) if terms else 0)


def test_term_overlap_needs_whole_tokens():
    overlap = TermOverlap(["cat", "a_b", "b"])
    assert overlap.count("Cats and CAT, a_b. concatenate") == 2  # "cat" and "b" ("a_b" is no token)
    assert overlap.count("Cats and CAT, a_b. concatenate σ") == 2  # tokenised: the same
    assert overlap.count("") == 0 and TermOverlap([]).count("cat") == 0


def test_speed_at_100k_short_messages():
    """Build for 100k messages well under 2 s and search in milliseconds (CPU time, with a margin)."""
    rng = np.random.default_rng(7)
    words = np.array([f"w{n}" for n in range(20000)] + ["the", "and", "I", "you"] * 500, dtype=object)
    lengths = rng.integers(5, 41, 100_000)
    tokens = words[rng.integers(0, len(words), lengths.sum())].tolist()
    ends = np.cumsum(lengths).tolist()
    docs = [
        " ".join(tokens[end - length : end]) + "." for end, length in zip(ends, lengths.tolist(), strict=True)
    ]
    start = time.process_time()
    index = BM25Index.build(docs)
    build_seconds = time.process_time() - start
    start = time.process_time()
    for n in range(20):
        index.search([f"w{n}", "w77", "the"], 8)
    search_ms = (time.process_time() - start) / 20 * 1000
    assert build_seconds < 3.0, build_seconds
    assert search_ms < 30, search_ms


def test_documents_lists_each_document_holding_any_term_once_head_and_tail_alike():
    index = BM25Index.build(["I always code", "never mind"] + [f"filler words {n}" for n in range(40)])
    grown = index.extended(["always, never", "rarely"])
    assert grown.tail is not None  # the new documents sit in a tail
    assert grown.documents(["always", "never", "absent"]).tolist() == [0, 1, 42]
    assert grown.documents([]).tolist() == [] and index.documents(["never"]).tolist() == [1]


def test_a_word_the_documents_hold_is_its_own_family_and_an_absent_one_is_its_relatives_head_and_tail():
    index = BM25Index.build(["we went camping", "camps by the lake", "the tests pass"] + ["filler"] * 40)
    grown = index.extended(["camp fire", "one test"])
    assert grown.family("camped") == ("camp", "camping", "camps")  # "camp" only in the tail
    assert index.family("camped") == ("camping", "camps")
    assert grown.family("tests") == ("tests",)  # written: searched alone, though "test" is indexed
    assert grown.family("hiking") == ("hiking",)  # no relative either: nothing found, as before
    other = BM25Index.build(["cafés 2023s", "v2 builds"])
    assert other.family("café") == ("café",) and other.family("2023") == ("2023",)  # ASCII words only
    assert other.family("v2s") == ("v2s",) and other.family("built") == ("built",)  # not Porter's kin


def test_a_family_scores_as_one_term_its_words_spell():
    docs = ["we went camping camping", "camps by the lake", "camping and camps", "a lake", "tea"]
    folded = [doc.replace("camping", "camp").replace("camps", "camp") for doc in docs]
    found, scores = BM25Index.build(docs).search([("camping", "camps"), "lake"], 5)
    reference = _reference_scores(folded, ["camp", "lake"])
    assert found.tolist() == sorted(reference, key=lambda doc: (-reference[doc], doc))
    assert scores.tolist() == pytest.approx([reference[doc] for doc in found.tolist()], rel=1e-9)
