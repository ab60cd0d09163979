"""Word endings: the inflections the text lane folds together, so "camped" finds "camping" and "hobbies"
finds "hobby".

`stem` is step 1 of Porter's (1980) algorithm, its inflectional step: plurals (-s, -es, -ies), the past
(-ed) and the gerund (-ing), with the measure and consonant-vowel conditions that keep "sing", "need" and
"caress" whole. Only that step: the later ones fold derivations ("general", "generous", "generation"), which
in a coding chat joins names that mean different things. Written here because the module may import
nothing outside the standard library and numpy, and the full algorithm is not wanted.

`forms` turns a stem back into the spellings that can carry it, so the index, built without stemming,
finds a word's relatives by dictionary lookups (`textindex.BM25Index.family`): no pass over the
vocabulary, and nothing to do for a word the user's messages hold.
"""

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, at: int) -> bool:
    """Porter's consonant: not a vowel, and a "y" only after a vowel (or first)."""
    letter = word[at]
    if letter in _VOWELS:
        return False
    if letter == "y":
        return at == 0 or not _is_consonant(word, at - 1)
    return True


def _measure(word: str) -> int:
    """Porter's m: how many vowel-consonant sequences `word` holds ([C](VC)^m[V])."""
    count, previous_vowel = 0, False
    for at in range(len(word)):
        consonant = _is_consonant(word, at)
        if consonant and previous_vowel:
            count += 1
        previous_vowel = not consonant
    return count


def _has_vowel(word: str) -> bool:
    return any(not _is_consonant(word, at) for at in range(len(word)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y ("hop", not "snow"): a short syllable."""
    return (
        len(word) >= 3
        and _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


def _step_1a(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _step_1b(word: str) -> str:
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for ending in ("ed", "ing"):
        if word.endswith(ending) and _has_vowel(word[: -len(ending)]):
            return _restore(word[: -len(ending)])
    return word


def _restore(base: str) -> str:
    """After -ed or -ing came off: the final "e" or the single consonant the spelling had changed."""
    if base.endswith(("at", "bl", "iz")):
        return base + "e"
    if _double_consonant(base) and base[-1] not in "lsz":
        return base[:-1]
    if _measure(base) == 1 and _cvc(base):
        return base + "e"
    return base


def stem(word: str) -> str:
    """`word`'s inflectional stem (Porter's step 1); words of two letters or fewer and words holding
    anything but lowercase ASCII letters (numbers, identifiers) are their own stem."""
    if len(word) <= 2 or not (word.isascii() and word.isalpha() and word.islower()):
        return word
    word = _step_1b(_step_1a(word))
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


#: The endings a stem's spellings add (after the stem's own last letter is adjusted, see `forms`).
_ENDINGS = ("", "s", "es", "ed", "ing", "d")


def forms(word: str) -> frozenset[str]:
    """Spellings that may share `word`'s stem (a superset: the caller keeps those whose `stem` matches):
    the stem with each inflectional ending, with a final "e" or "i" undone ("race" -> "racing",
    "hobbi" -> "hobby", "hobbies") and a final consonant doubled ("run" -> "running")."""
    root = stem(word)
    bases = {root}
    if root.endswith("e"):
        bases.add(root[:-1])
    if root.endswith("i"):
        bases.update((root[:-1] + "y", root[:-1] + "ie"))
    if root and root[-1] not in _VOWELS:
        bases.add(root + root[-1])
    return frozenset(base + ending for base in bases for ending in _ENDINGS)
