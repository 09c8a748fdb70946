import pytest
import spacy

from spacy_siamese.corpora import EmptyTextWarning, PairRecord, detokenize_ptb, read_pairs

from .util import write

BIMPM = (
    "1\tHow do I get funding for my web based startup idea ?\tHow do I get seed funding pre product ?\t327970\n"
    "0\tI am a 63 kg -LRB- 138 lbs -RRB- guy , 5 ' 8 '' tall . What 's wrong ?"
    "\tWhy ca n't I -LSB- sleep -RSB- ?\t4245\n"
    "1\t`` What does the phrase '' `` silent waters run deep '' '' mean ? ''"
    "\tHow do you explain the phrase ` still waters run deep ' ?\t129336\n"
)


def test_bimpm_unescapes_and_detokenizes(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    records = list(read_pairs(path, format="bimpm"))
    assert [r.label for r in records] == [1.0, 0.0, 1.0]
    assert records[0].text1 == "How do I get funding for my web based startup idea?"
    assert records[1].text1 == "I am a 63 kg (138 lbs) guy, 5'8\" tall. What's wrong?"
    assert records[1].text2 == "Why can't I [sleep]?"
    assert records[2].text1 == 'What does the phrase "silent waters run deep" mean?'
    assert records[2].text2 == "How do you explain the phrase 'still waters run deep'?"


def test_a_first_row_whose_texts_are_column_names_is_no_header(tmp_path):
    """A BiMPM row with the text "SENTENCE1" twice names no label column: auto-detection reads it
    as BiMPM, not as a tab-separated header naming a column twice (found by the CI fuzz profile)."""
    path = write(tmp_path, "pairs.txt", "0\tSENTENCE1\tSENTENCE1\t0\n" + BIMPM)
    records = list(read_pairs(path))
    assert [r.label for r in records] == [0.0, 1.0, 0.0, 1.0] and records[0].text1 == "SENTENCE1"


@pytest.mark.parametrize(
    "tokens,text",
    [
        ("-LRB- a -RRB- -LSB- b -RSB- -LCB- c -RCB-", "(a) [b] {c}"),
        ("He said `` hi '' , then left ; ok : fine !", 'He said "hi", then left; ok: fine!'),
        ("I do n't know what you 're doing , it 's 50 % off", "I don't know what you're doing, it's 50% off"),
        ("the Jews ' living conditions", "the Jews' living conditions"),
        ("Make $ 1,000 online ...", "Make $1,000 online..."),
        ("-LSB- math -RSB- \\ frac -LCB- 1 -RCB- -LCB- 2 -RCB- -LSB- / math -RSB-", "[math] \\frac {1} {2} [/math]"),
        ("  extra   spaces  ?  ", "extra spaces?"),
        ("", ""),
    ],
)
def test_detokenize_ptb(tokens, text):
    assert detokenize_ptb(tokens) == text


def test_detokenized_text_tokenizes_like_corenlp():
    text = detokenize_ptb("Why ca n't I -LRB- really -RRB- stop , eating `` junk '' food ?")
    assert [t.text for t in spacy.blank("en").make_doc(text)] == (
        ["Why", "ca", "n't", "I", "(", "really", ")", "stop", ",", "eating", '"', "junk", '"', "food", "?"]
    )


def test_empty_texts_are_kept_with_a_warning(tmp_path):
    path = write(tmp_path, "dev.tsv", "1\t \tsomething\t7\n")
    with pytest.warns(EmptyTextWarning, match=r"1 of the 1 pair\(s\) read from .*dev.tsv have an empty .*\(line 1\)"):
        assert list(read_pairs(path, format="bimpm")) == [PairRecord("", "something", 1.0, 1)]
