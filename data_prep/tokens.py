"""Tokenisation: lower-case, then maximal runs of ASCII letters.

The module is called ``tokens`` (not ``tokenize``) so that it can never shadow the standard
library's ``tokenize``, which ``inspect`` and ``linecache`` import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lpp.validation import positive_int

STOP_WORD_LISTS = ("none", "gensim")


def load_stop_words(spec) -> frozenset[str]:
    """``"none"`` (or ``None``), ``"gensim"`` (gensim's 337-word English list), a path to a
    file with one word per line, or an iterable of words. Words are lower-cased."""
    if spec is None or (isinstance(spec, str) and spec == "none"):
        return frozenset()
    if isinstance(spec, str) and spec == "gensim":
        from gensim.parsing.preprocessing import STOPWORDS

        return frozenset(STOPWORDS)
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"prepare_topics.stop_words must be one of {STOP_WORD_LISTS} or a "
                             f"file of words; {spec!r} is neither")
        return frozenset(w.strip().lower() for w in path.read_text().splitlines() if w.strip())
    words = list(spec)
    if not all(isinstance(w, str) for w in words):
        raise TypeError("stop words must be strings")
    return frozenset(w.lower() for w in words)


@dataclass(frozen=True)
class Tokenizer:
    """Lower-case the text and take every maximal ``[a-z]+`` run as a token.

    Tokens shorter than ``min_length`` and tokens in ``stop_words`` are dropped. Letters
    outside ASCII split words (the corpora here are English).
    """

    min_length: int = 1
    stop_words: frozenset[str] = frozenset()
    _pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "min_length", positive_int(self.min_length, "min_length"))
        object.__setattr__(self, "stop_words", frozenset(self.stop_words))
        object.__setattr__(self, "_pattern", re.compile(f"[a-z]{{{self.min_length},}}"))

    @classmethod
    def from_params(cls, min_length: int = 1, stop_words="none") -> Tokenizer:
        """The tokenizer of the settings ``prepare_topics.min_token_length`` and
        ``prepare_topics.stop_words``."""
        positive_int(min_length, "prepare_topics.min_token_length")
        return cls(min_length=min_length, stop_words=load_stop_words(stop_words))

    def __call__(self, text: str) -> list[str]:
        tokens = self._pattern.findall(text.lower())
        if self.stop_words:
            tokens = [t for t in tokens if t not in self.stop_words]
        return tokens

    def keeps(self, word: str) -> bool:
        """Whether a ready-made word type (e.g. from a UCI vocabulary) survives the filters."""
        return len(word) >= self.min_length and word not in self.stop_words
