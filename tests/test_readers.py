import json
import warnings

import pytest
import spacy
from spacy.training import Example
from spacy.util import registry

from spacy_siamese.pairs import get_label, get_partner
from spacy_siamese.readers import (
    PairFormatError,
    PairRecord,
    create_pair_corpus,
    detect_format,
    detokenize_ptb,
    read_pair_examples,
    read_pairs,
    stackexchange_text,
)

QUORA_OFFICIAL = (
    "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
    "0\t1\t2\tWhat is the step by step guide to invest in share market?\tHow do I invest in shares?\t0\n"
    '1\t3\t4\t"What does ""positive atheism"" mean?"\t"Is this a question\nspanning two lines?"\t1\n'
    "2\t5\t6\tHow do I lose weight fast?\tWhat is the best way to reduce weight fast?\t1\n"
)
QUORA_MIRROR = (
    "label\tquestion1\tquestion2\tquora_id\n"
    "0\tWhat causes stool color to change to yellow?\tWhat can cause stool to come out as little balls?\t360472\n"
    '0\tHow is being gay less moral than divorce?\t"Why do they confuse it with ""positive atheism""?"\t114030\n'
    '1\t"How do I get rid of acne and acne…?\tHow do I get rid of acne naturally?\t6300\n'
    "1\tWhich are the best motivational videos?\tWhat are some of the best motivational clips?\t\n"
)
BIMPM = (
    "1\tHow do I get funding for my web based startup idea ?\tHow do I get seed funding pre product ?\t327970\n"
    "0\tI am a 63 kg -LRB- 138 lbs -RRB- guy , 5 ' 8 '' tall . What 's wrong ?\tWhy ca n't I -LSB- sleep -RSB- ?\t4245\n"
    "1\t`` What does the phrase '' `` silent waters run deep '' '' mean ? ''\tHow do you explain the phrase ` still waters run deep ' ?\t129336\n"
)
STACKEXCHANGE = (
    "duplicate\tHow to add a directory to my path?<p>How do I add a directory to my <code>$PATH</code>"
    " in Ubuntu &amp; make it <em>permanent</em>? </p>  <p>Thanks.</p> "
    "\tHow to add /home/username/bin to $PATH?<p>Show how you can add it.</p> \n"
    "non-duplicate\tWhat does Package <package> has no installation candidate mean?<p>What does"
    " the above error mean?</p>\tWhy is my screen black?<blockquote><p>Possible duplicate</p></blockquote>\n"
)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf8")
    return path


def write_jsonl(tmp_path, name, objs):
    return write(tmp_path, name, "".join(json.dumps(obj) + "\n" for obj in objs))


def error_for(path, **kwargs) -> PairFormatError:
    with pytest.raises(PairFormatError) as excinfo:
        list(read_pairs(path, **kwargs))
    return excinfo.value


# Formats


def test_tsv_official_quora_header_with_quoted_multiline_field(tmp_path):
    path = write(tmp_path, "quora_duplicate_questions.tsv", QUORA_OFFICIAL)
    records = list(read_pairs(path, format="tsv"))
    assert [r.line for r in records] == [2, 3, 5]
    assert [r.label for r in records] == [0.0, 1.0, 1.0]
    assert records[1].text1 == 'What does "positive atheism" mean?'
    assert records[1].text2 == "Is this a question\nspanning two lines?"
    assert records[2].text1 == "How do I lose weight fast?"
    assert all(isinstance(r, PairRecord) and isinstance(r.label, float) for r in records)


def test_tsv_mirror_header(tmp_path):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    records = list(read_pairs(path, format="tsv"))
    assert len(records) == 4
    assert records[0] == PairRecord(
        "What causes stool color to change to yellow?",
        "What can cause stool to come out as little balls?",
        0.0,
        2,
    )
    assert records[1].text2 == 'Why do they confuse it with "positive atheism"?'
    # An opening quote that is never closed is raw text, not CSV quoting.
    assert records[2].text1 == '"How do I get rid of acne and acne…?'
    assert records[2].line == 4 and records[3].line == 5


@pytest.mark.parametrize("c1,c2,cl", [("text1", "text2", "label"), ("Sentence1", "sentence2", "is_duplicate")])
def test_tsv_other_column_names(tmp_path, c1, c2, cl):
    path = write(tmp_path, "pairs.tsv", f"{cl}\t{c2}\t{c1}\n0.5\tsecond\tfirst\n")
    assert list(read_pairs(path)) == [PairRecord("first", "second", 0.5, 2)]


def test_bimpm_unescapes_and_detokenizes(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    records = list(read_pairs(path, format="bimpm"))
    assert [r.label for r in records] == [1.0, 0.0, 1.0]
    assert records[0].text1 == "How do I get funding for my web based startup idea?"
    assert records[1].text1 == "I am a 63 kg (138 lbs) guy, 5'8\" tall. What's wrong?"
    assert records[1].text2 == "Why can't I [sleep]?"
    assert records[2].text1 == 'What does the phrase "silent waters run deep" mean?'
    assert records[2].text2 == "How do you explain the phrase 'still waters run deep'?"


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


def test_detokenized_text_tokenizes_like_corenlp(nlp):
    text = detokenize_ptb("Why ca n't I -LRB- really -RRB- stop , eating `` junk '' food ?")
    assert [t.text for t in nlp.make_doc(text)] == (
        ["Why", "ca", "n't", "I", "(", "really", ")", "stop", ",", "eating", '"', "junk", '"', "food", "?"]
    )


def test_jsonl(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"text1": "a", "text2": "b", "label": 1}\n'
        "\n"
        '{"text1": "c", "text2": "", "label": 0.25, "extra": [1]}\n'
        "   \n"
        '{"text1": "e", "text2": "f", "label": false}\n',
        encoding="utf8",
    )
    assert list(read_pairs(path)) == [
        PairRecord("a", "b", 1.0, 1),
        PairRecord("c", "", 0.25, 3),
        PairRecord("e", "f", 0.0, 5),
    ]


def test_stackexchange_strips_html_and_keeps_title(tmp_path):
    path = write(tmp_path, "askubuntu.tsv", STACKEXCHANGE)
    records = list(read_pairs(path, format="stackexchange"))
    assert [r.label for r in records] == [1.0, 0.0]
    assert records[0].text1 == (
        "How to add a directory to my path?\n"
        "How do I add a directory to my $PATH in Ubuntu & make it permanent? Thanks."
    )
    assert records[0].text2 == "How to add /home/username/bin to $PATH?\nShow how you can add it."
    # Literal <...> in a title is kept; the body starts at the first block tag.
    assert records[1].text1.startswith("What does Package <package> has no installation candidate mean?\n")
    assert records[1].text2 == "Why is my screen black?\nPossible duplicate"
    for r in records:
        assert "<p>" not in r.text1 + r.text2 and "&amp;" not in r.text1


def test_stackexchange_text_without_body():
    assert stackexchange_text("Just a title  ") == "Just a title"
    assert stackexchange_text("Title<p>a<br>b</p><ul><li>c</li><li>d</li></ul>") == "Title\na b c d"


def test_empty_texts_are_allowed(tmp_path):
    path = write(tmp_path, "dev.tsv", "1\t \tsomething\t7\n")
    assert list(read_pairs(path, format="bimpm")) == [PairRecord("", "something", 1.0, 1)]


# Auto-detection


@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("official.tsv", QUORA_OFFICIAL, "tsv"),
        ("mirror.tsv", QUORA_MIRROR, "tsv"),
        ("dev.tsv", BIMPM, "bimpm"),
        ("askubuntu.tsv", STACKEXCHANGE, "stackexchange"),
        ("pairs.jsonl", '{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
        ("pairs.json", '{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
        ("pairs.txt", '\n{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
    ],
)
def test_auto_detection(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    assert detect_format(path) == expected
    assert list(read_pairs(path)) == list(read_pairs(path, format=expected))


def test_auto_detection_fails_clearly(tmp_path):
    path = write(tmp_path, "mystery.tsv", "\nfoo\tbar\n")
    err = error_for(path)
    assert "mystery.tsv:2:" in str(err)
    assert "could not detect" in str(err)
    for name in ("tsv", "bimpm", "stackexchange", "jsonl"):
        assert name in str(err)


# Malformed input


@pytest.mark.parametrize(
    "name,fmt,text,line,reason",
    [
        ("dev.tsv", "bimpm", "1\ta\tb\t1\n0\ta\tb\n", 2, "expected 4 tab-separated fields (label, text1, text2, id), found 3"),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\n\n1\ta\tb\t2\t3\n", 3, "found 5"),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\nyes\ta\tb\t2\n", 2, "is not a number"),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\n0.5\ta\tb\t2\n", 2, "expected label 0 or 1"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n0\ta\tb\t1\n2\ta\tb\t1\n", 3, "outside [0, 1]"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n0\ta\tb\n", 2, "expected 4 tab-separated fields"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n-0.5\ta\tb\t1\n", 2, "outside [0, 1]"),
        ("se.tsv", "stackexchange", "duplicate\ta\tb\nmaybe\ta\tb\n", 2, "'duplicate' or 'non-duplicate'"),
        ("se.tsv", "stackexchange", "duplicate\ta<p>b</p>\n", 1, "expected 3 tab-separated fields"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": 1}\n{"text1": "a",\n', 2, "invalid JSON"),
        ("p.jsonl", "jsonl", '\n{"text1": "a", "label": 1}\n', 2, "missing key(s) 'text2'"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": "1"}\n', 1, "'label' must be a number"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": null, "label": 1}\n', 1, "'text2' must be a string"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": 1.5}\n', 1, "outside [0, 1]"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": NaN}\n', 1, "outside [0, 1]"),
        ("p.jsonl", "jsonl", '["a", "b", 1]\n', 1, "expected a JSON object"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, name, fmt, text, line, reason):
    path = write(tmp_path, name, text)
    err = error_for(path, format=fmt)
    assert str(err).startswith(f"{path}:{line}: ")
    assert reason in str(err)
    assert err.line == line and err.path == str(path)
    if fmt != "auto":  # auto-detection agrees on where the error is
        assert error_for(path).line == line


def test_multiline_record_error_reports_start_line(tmp_path):
    text = QUORA_OFFICIAL + '3\t7\t8\t"An open quote\nover\nlines"\t9\n'
    path = write(tmp_path, "quora.tsv", text)
    err = error_for(path)
    assert str(err).startswith(f"{path}:6: expected 6 tab-separated fields")


def test_tsv_header_missing_column(tmp_path):
    path = write(tmp_path, "bad.tsv", "\nlabel\tq1\tq2\n1\ta\tb\n")
    err = error_for(path, format="tsv", lenient=True)
    assert str(err).startswith(f"{path}:2: ")
    assert "columns found: label, q1, q2" in str(err)


def test_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(b"1\ta\tb\t1\n0\tcaf\xe9\tb\t2\n1\tc\td\t3\n")
    err = error_for(path, format="bimpm")
    assert str(err).startswith(f"{path}:2: invalid UTF-8")
    with pytest.warns(UserWarning, match="Skipped 1 malformed line"):
        assert [r.line for r in read_pairs(path, lenient=True)] == [1, 3]


def test_lenient_skips_and_warns_once(tmp_path):
    path = write(
        tmp_path,
        "dev.tsv",
        "1\ta\tb\t1\n0\tmissing\t2\n7\tc\td\t3\n0\te\tf\t4\n1\tg\th\n",
    )
    with pytest.warns(UserWarning) as record:
        records = list(read_pairs(path, format="bimpm", lenient=True))
    assert [(r.text1, r.line) for r in records] == [("a", 1), ("e", 4)]
    assert len(record) == 1
    message = str(record[0].message)
    assert "Skipped 3 malformed line(s)" in message and "dev.tsv" in message
    assert "line 2:" in message and "line 3:" in message and "line 5:" in message


def test_lenient_without_errors_does_not_warn(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(read_pairs(path, lenient=True))) == 3


@pytest.mark.parametrize("text", ["", "\n\n", "label\tquestion1\tquestion2\tquora_id\n"])
def test_no_pairs(tmp_path, text):
    path = write(tmp_path, "empty.tsv", text)
    err = error_for(path)
    assert f"no pairs found in {path}" in str(err)


def test_no_pairs_after_skipping(tmp_path):
    path = write(tmp_path, "dev.tsv", "1\ta\tb\n")
    with pytest.warns(UserWarning, match="Skipped 1"):
        err = error_for(path, format="bimpm", lenient=True)
    assert "no pairs found" in str(err)


def test_missing_file(tmp_path, nlp):
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        read_pairs(tmp_path / "nope.tsv")
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        list(create_pair_corpus(tmp_path / "nope.tsv")(nlp))


def test_unknown_format(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    with pytest.raises(ValueError, match="Unknown pair format"):
        read_pairs(path, format="csv")


# spaCy reader


def test_registered_reader_yields_pair_examples(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM)
    make_corpus = registry.readers.get("spacy-siamese.PairCorpus.v1")
    corpus = make_corpus(str(path), format="auto")
    for _ in range(2):  # re-read on every call (epoch)
        examples = list(corpus(nlp))
        assert len(examples) == 3 and all(isinstance(eg, Example) for eg in examples)
        assert [get_label(eg) for eg in examples] == [1.0, 0.0, 1.0]
        assert examples[1].predicted.text == "I am a 63 kg (138 lbs) guy, 5'8\" tall. What's wrong?"
        assert get_partner(examples[1]).text == "Why can't I [sleep]?"
        assert get_partner(examples[0]).vocab is nlp.vocab


def test_reader_from_config(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    config = {"corpus": {"@readers": "spacy-siamese.PairCorpus.v1", "path": str(path), "limit": 2}}
    corpus = registry.resolve(config)["corpus"]
    examples = list(corpus(nlp))
    assert [get_label(eg) for eg in examples] == [0.0, 0.0]


def test_reader_limit_and_read_pair_examples(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    assert len(list(create_pair_corpus(path, limit=3)(nlp))) == 3
    assert len(list(create_pair_corpus(path, limit=0)(nlp))) == 4
    examples = read_pair_examples(nlp, path, limit=1)
    assert len(examples) == 1 and get_partner(examples[0]).text.startswith("What can cause stool")


def test_reader_lenient_warns(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM + "2\ta\tb\t9\n")
    corpus = create_pair_corpus(path, lenient=True)
    with pytest.warns(UserWarning, match="Skipped 1 malformed line"):
        assert len(list(corpus(nlp))) == 3
    with pytest.raises(PairFormatError, match="dev.tsv:4:"):
        list(create_pair_corpus(path)(nlp))


def test_reader_path_none():
    with pytest.raises(ValueError, match=r"paths\.train") as excinfo:
        create_pair_corpus(None)
    assert "--paths.train" in str(excinfo.value)


def test_error_pickles():
    import pickle

    err = pickle.loads(pickle.dumps(PairFormatError("a.tsv", 3, "bad")))
    assert str(err) == "a.tsv:3: bad" and err.line == 3
