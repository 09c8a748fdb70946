import io
import tarfile

import pytest
import spacy
from spacy.util import registry

from spacy_siamese.documents import (
    DocRecord,
    DocumentFormatError,
    create_document_pairs,
    read_documents,
    sample_pairs,
    split_documents,
)
from spacy_siamese.pairs import get_label, get_partner
from spacy_siamese.readers import PairFormatError

MESSAGE = """From: someone@example.com
Subject: Re: {subject}
Organization: Example University
Lines: 9

In article <1@example.com> other@example.com writes:
> a quoted line about {subject}
{body}

--
Someone, signature line
"""
GROUPS = {
    "sci.space": ["The shuttle launch was delayed by weather.", "Orbit insertion burns use fuel."],
    "rec.autos": ["My car engine needs new oil.", "The sedan has a V6 engine.", "Tires wear out fast."],
}


def _tar(path, members):
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members:
            data = text.encode("utf8") if isinstance(text, str) else text
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def _newsgroups(tmp_path, extra=()):
    members = [
        (f"20news-bydate-train/{group}/{100 + i}", MESSAGE.format(subject=group, body=body))
        for group, bodies in GROUPS.items()
        for i, body in enumerate(bodies)
    ]
    return _tar(tmp_path / "20news-bydate-train.tar.gz", members + list(extra))


SGM = """<!DOCTYPE lewis SYSTEM "lewis.dtd">
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="1" NEWID="1">
<DATE>26-FEB-1987</DATE>
<TOPICS><D>cocoa</D></TOPICS>
<TEXT>&#2;
<TITLE>BAHIA COCOA REVIEW</TITLE>
<BODY>Showers continued &lt;in&gt; the cocoa zone.
 Reuter
&#3;</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="2" NEWID="2">
<TOPICS><D>grain</D><D>wheat</D></TOPICS>
<TEXT TYPE="UNPROC">&#2;
WHEAT EXPORTS RISE
</TEXT>
</REUTERS>
<REUTERS TOPICS="NO" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="3" NEWID="3">
<TOPICS></TOPICS>
<TEXT><TITLE>NO TOPIC</TITLE><BODY>Ignored by ModApte.</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="PUBLISHED-TESTSET" OLDID="4" NEWID="4">
<TOPICS><D>wheat</D></TOPICS>
<TEXT><TITLE>WHEAT TEST</TITLE><BODY>A test document.</BODY></TEXT>
</REUTERS>
"""
BAD_BLOCK = """<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" OLDID="5">
<TOPICS><D>grain</D></TOPICS>
<TEXT><TITLE>NO NEWID</TITLE></TEXT>
</REUTERS>
"""
NEWS = (
    "ID,TITLE,URL,PUBLISHER,CATEGORY,STORY,HOSTNAME,TIMESTAMP\n"
    "1,Fed official says weak data caused by weather,http://a,A,b,s1,a.com,1\n"
    '2,"Fed\'s Plosser: taper, not pause",http://b,B,b,s1,b.com,2\n'
    "3,Stocks fall in Europe,http://c,C,b,s2,c.com,3\n"
    "4,New phone unveiled,http://d,D,t,s3,d.com,4\n"
    "5,Phone maker shows new phone,http://e,E,t,s3,e.com,5\n"
)


def test_20news_reader_and_stripping(tmp_path):
    path = _newsgroups(tmp_path)
    docs = read_documents("20news", path)
    assert len(docs) == 5 and {d.labels for d in docs} == {("sci.space",), ("rec.autos",)}
    text = next(d.text for d in docs if d.id.endswith("rec.autos/100"))
    assert text == "My car engine needs new oil."
    raw = read_documents("20news", path, strip_headers=False, strip_quotes=False, strip_signatures=False)
    raw_text = next(d.text for d in raw if d.id.endswith("rec.autos/100"))
    assert "Subject:" in raw_text and "> a quoted line" in raw_text and "signature line" in raw_text


def test_20news_malformed_members(tmp_path):
    path = _newsgroups(tmp_path, [("20news-bydate-train/stray-file", "x\n\ny"),
                                  ("20news-bydate-train/rec.autos/999", b"Subject: x\n\n\xff\xfe bad")])
    with pytest.raises(DocumentFormatError, match=r"20news-bydate-train.tar.gz:20news-bydate-train/stray-file"):
        read_documents("20news", path)
    with pytest.warns(UserWarning, match=r"Skipped 2 malformed record\(s\).*invalid UTF-8"):
        docs = read_documents("20news", path, lenient=True)
    assert len(docs) == 5
    assert issubclass(DocumentFormatError, PairFormatError)


def test_reuters_reader_modapte(tmp_path):
    (tmp_path / "reut2-000.sgm").write_bytes(SGM.encode("latin-1"))
    train = read_documents("reuters", tmp_path, split="train")
    assert [d.id for d in train] == ["NEWID=1", "NEWID=2"]
    assert train[0].text.startswith("BAHIA COCOA REVIEW\nShowers continued <in> the cocoa zone.")
    assert train[1].labels == ("grain", "wheat") and train[1].text == "WHEAT EXPORTS RISE"
    assert [d.id for d in read_documents("reuters", tmp_path, split="test")] == ["NEWID=4"]
    assert len(read_documents("reuters", tmp_path, split="all")) == 3


def test_reuters_malformed_block(tmp_path):
    (tmp_path / "reut2-000.sgm").write_text(SGM + BAD_BLOCK, encoding="latin-1")
    with pytest.raises(DocumentFormatError, match=r"reut2-000.sgm:25: <REUTERS> tag lacks attribute\(s\) NEWID"):
        read_documents("reuters", tmp_path)
    (tmp_path / "reut2-000.sgm").write_text(SGM + "<REUTERS NEWID=\"9\">unclosed", encoding="latin-1")
    with pytest.raises(DocumentFormatError, match="not closed"):
        read_documents("reuters", tmp_path)


def test_20news_official_archive_split(tmp_path):
    """The official 20news-bydate.tar.gz holds both halves: `split` picks one."""
    members = [
        (f"20news-bydate-{half}/{group}/{i}", MESSAGE.format(subject=group, body=f"{half} body {i}"))
        for half in ("train", "test")
        for i, group in enumerate(GROUPS)
    ]
    path = _tar(tmp_path / "20news-bydate.tar.gz", members)
    train = read_documents("20news", path)  # split="train" by default
    assert {d.id.split("/")[0] for d in train} == {"20news-bydate-train"} and len(train) == 2
    test = read_documents("20news", path, split="test")
    assert {d.id.split("/")[0] for d in test} == {"20news-bydate-test"} and len(test) == 2
    assert len(read_documents("20news", path, split="all")) == 4
    with pytest.raises(DocumentFormatError, match="no documents found"):
        read_documents("20news", _newsgroups(tmp_path), split="test")  # the train half alone
    with pytest.raises(ValueError, match="split must be"):
        read_documents("20news", path, split="dev")


def test_reuters_reader_tar_archive(tmp_path):
    """The official reuters21578.tar.gz is read like the directory of .sgm files."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "reut2-000.sgm").write_bytes(SGM.encode("latin-1"))
    archive = _tar(tmp_path / "reuters21578.tar.gz", [("README.txt", "readme"), ("reut2-000.sgm", SGM.encode("latin-1"))])
    assert read_documents("reuters", archive) == read_documents("reuters", tmp_path / "dir")
    bad = _tar(tmp_path / "bad.tar.gz", [("reut2-000.sgm", (SGM + BAD_BLOCK).encode("latin-1"))])
    with pytest.raises(DocumentFormatError, match=r"bad.tar.gz:reut2-000.sgm:25: <REUTERS> tag lacks"):
        read_documents("reuters", bad)
    empty = _tar(tmp_path / "empty.tar.gz", [("README.txt", "readme")])
    with pytest.raises(DocumentFormatError, match="no reut2-\\*.sgm files in this archive"):
        read_documents("reuters", empty)


def test_jsonl_collection_round_trip_and_errors(tmp_path):
    from spacy_siamese.documents import write_documents

    docs = [DocRecord("a text", ("x",), "g", "1"), DocRecord("", ("x", "y"), "", "2")]
    path = tmp_path / "docs.jsonl"
    write_documents(docs, path)
    assert read_documents("jsonl", path) == docs
    path.write_text('{"text": "t", "label": "x"}\n\n{"text": "u", "labels": "y", "id": 7}\n', encoding="utf8")
    assert read_documents("jsonl", path) == [DocRecord("t", ("x",), "", "1"), DocRecord("u", ("y",), "", "7")]
    for line, message in [
        ("{not json", "invalid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"text": 5, "labels": ["x"]}', 'field "text"'),
        ('{"labels": ["x"]}', 'field "text"'),
        ('{"text": "t"}', 'field "labels"'),
        ('{"text": "t", "labels": []}', 'field "labels"'),
    ]:
        path.write_text('{"text": "ok", "labels": ["x"]}\n' + line + "\n", encoding="utf8")
        with pytest.raises(DocumentFormatError, match=f"docs.jsonl:2: {message}"):
            read_documents("jsonl", path)
        with pytest.warns(UserWarning, match="Skipped 1 malformed record"):
            assert len(read_documents("jsonl", path, lenient=True)) == 1


def test_news_reader(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text(NEWS, encoding="utf8")
    docs = read_documents("news", path)
    assert len(docs) == 5 and docs[1].text == "Fed's Plosser: taper, not pause"
    assert docs[0].labels == ("s1",) and docs[0].group == "b"
    path.write_text(NEWS + "6,Too few fields,http://f\n7,,http://g,G,e,s4,g.com,7\n", encoding="utf8")
    with pytest.raises(DocumentFormatError, match=r"news.csv:7: expected 8 fields, found 3"):
        read_documents("news", path)
    with pytest.warns(UserWarning, match=r"Skipped 2 .*8: empty field\(s\) TITLE"):
        assert len(read_documents("news", path, lenient=True)) == 5
    path.write_text("id,title\n1,x\n", encoding="utf8")
    with pytest.raises(DocumentFormatError, match="header"):
        read_documents("news", path)


def _docs():
    docs = [DocRecord(f"doc {i}", (f"l{i % 4}",), f"g{i % 2}", str(i)) for i in range(40)]
    docs.append(DocRecord("two labels", ("l0", "l1"), "g0", "40"))
    return docs


def test_sample_pairs_seeded_and_labelled():
    docs = _docs()
    pairs = sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=1)
    assert pairs == sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=1)
    assert pairs != sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=2)
    assert sum(p.label for p in pairs) == 60
    for i, j, label in pairs:
        assert i != j
        assert bool(set(docs[i].labels) & set(docs[j].labels)) == (label == 1.0)
    hard = sample_pairs(docs, n_pairs=100, positive_ratio=0.0, hard_negative_ratio=1.0, seed=0)
    assert all(docs[i].group == docs[j].group for i, j, _ in hard)
    with pytest.raises(ValueError, match="no two documents share a label"):
        sample_pairs([DocRecord("a", ("x",)), DocRecord("b", ("y",))], n_pairs=2)


def test_split_documents():
    docs = _docs()
    train, dev = split_documents(docs, dev_fraction=0.25, seed=3)
    assert (train, dev) == split_documents(docs, dev_fraction=0.25, seed=3)
    assert len(dev) == 10 and not {d.id for d in train} & {d.id for d in dev}
    assert len(train) + len(dev) == len(docs)


def test_document_pairs_reader(tmp_path):
    path = _newsgroups(tmp_path)
    make = registry.readers.get("spacy-siamese.DocumentPairs.v1")
    assert make is create_document_pairs
    nlp = spacy.blank("en")
    corpus = make(path, collection="20news", split="all", n_pairs=12, seed=0)
    examples = list(corpus(nlp))
    again = list(make(path, collection="20news", split="all", n_pairs=12, seed=0)(nlp))
    assert len(examples) == 12
    assert [(e.predicted.text, get_partner(e).text, get_label(e)) for e in examples] == [
        (e.predicted.text, get_partner(e).text, get_label(e)) for e in again
    ]
    assert {get_label(e) for e in examples} == {0.0, 1.0}
    assert [e.predicted.text for e in corpus(nlp)] == [e.predicted.text for e in examples]  # every epoch
    with pytest.raises(ValueError, match="path is None"):
        make(None, collection="20news")
    with pytest.raises(ValueError, match="Unknown document collection"):
        list(make(path, collection="usenet")(nlp))
