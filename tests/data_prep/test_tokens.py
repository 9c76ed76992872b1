import pytest
from gensim.utils import tokenize

from data_prep.tokens import Tokenizer, load_stop_words


def test_lower_case_ascii_letter_runs():
    text = "Don't e-mail ME at x2y@Enron.com! Café_au_lait"
    assert Tokenizer()(text) == ["don", "t", "e", "mail", "me", "at", "x", "y", "enron", "com",
                                 "caf", "au", "lait"]


def test_agrees_with_gensim_on_ascii_text():
    text = ("Phillip, the West Desk traded 1,200 MW on 12/07/2001; see "
            "http://www.enron.com/gas?id=42 -- THANKS. re: Q3 budget (rev.2)")
    assert Tokenizer()(text) == list(tokenize(text, lowercase=True))


def test_min_length_and_stop_words():
    tokenizer = Tokenizer(min_length=3, stop_words=frozenset({"the"}))
    assert tokenizer("The cat and a dog at THE zoo") == ["cat", "and", "dog", "zoo"]
    assert tokenizer.keeps("cat") and not tokenizer.keeps("at") and not tokenizer.keeps("the")


def test_stop_word_sources(tmp_path):
    assert load_stop_words("none") == frozenset() == load_stop_words(None)
    gensim_words = load_stop_words("gensim")
    assert {"the", "and", "of"} <= gensim_words and "enron" not in gensim_words
    path = tmp_path / "stop.txt"
    path.write_text("Foo\n\nbar\n")
    assert load_stop_words(path) == {"foo", "bar"} == load_stop_words(["FOO", "bar"])
    assert Tokenizer.from_params(1, str(path))("foo baz bar") == ["baz"]
    with pytest.raises(ValueError, match="stop_words"):
        load_stop_words("no-such-list")
    with pytest.raises(TypeError):
        load_stop_words([1, 2])


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (True, TypeError),
                                        (2.0, TypeError)])
def test_bad_min_length(bad, error):
    with pytest.raises(error, match="min_length"):
        Tokenizer(min_length=bad)
