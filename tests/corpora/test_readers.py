import pytest
import spacy
from spacy.training import Example
from spacy.util import registry

from spacy_siamese.corpora import PairFormatError, create_document_pairs, create_pair_corpus, read_pair_examples
from spacy_siamese.corpora.readers import create_labelled_documents
from spacy_siamese.labelled import get_doc_labels, is_labelled_doc
from spacy_siamese.pair_examples import get_label, get_partner

from .test_bimpm import BIMPM
from .test_newsgroups import newsgroups_archive
from .test_tsv import QUORA_MIRROR
from .util import write


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_registered_pair_reader_yields_pair_examples(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM)
    make_corpus = registry.readers.get("spacy-siamese.PairCorpus.v1")
    assert make_corpus is create_pair_corpus
    corpus = make_corpus(str(path), format="auto")
    for _ in range(2):  # re-read on every call (epoch)
        examples = list(corpus(nlp))
        assert len(examples) == 3 and all(isinstance(eg, Example) for eg in examples)
        assert [get_label(eg) for eg in examples] == [1.0, 0.0, 1.0]
        assert examples[1].predicted.text == "I am a 63 kg (138 lbs) guy, 5'8\" tall. What's wrong?"
        assert get_partner(examples[1]).text == "Why can't I [sleep]?"
        assert get_partner(examples[0]).vocab is nlp.vocab


def test_pair_reader_from_config(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    config = {"corpus": {"@readers": "spacy-siamese.PairCorpus.v1", "path": str(path), "limit": 2}}
    corpus = registry.resolve(config)["corpus"]
    assert [get_label(eg) for eg in corpus(nlp)] == [0.0, 0.0]


def test_pair_reader_limit_and_read_pair_examples(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    assert len(list(create_pair_corpus(path, limit=3)(nlp))) == 3
    assert len(list(create_pair_corpus(path, limit=0)(nlp))) == 4
    examples = read_pair_examples(nlp, path, limit=1)
    assert len(examples) == 1 and get_partner(examples[0]).text.startswith("What can cause stool")


def test_pair_reader_lenient_warns(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM + "2\ta\tb\t9\n")
    with pytest.warns(UserWarning, match="Skipped 1 malformed line"):
        assert len(list(create_pair_corpus(path, lenient=True)(nlp))) == 3
    with pytest.raises(PairFormatError, match="dev.tsv:4:"):
        list(create_pair_corpus(path)(nlp))


def test_pair_reader_bad_paths(tmp_path, nlp):
    with pytest.raises(ValueError, match=r"paths\.train") as excinfo:
        create_pair_corpus(None)
    assert "--paths.train" in str(excinfo.value)
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        list(create_pair_corpus(tmp_path / "nope.tsv")(nlp))


def test_document_pairs_reader(tmp_path, nlp):
    path = newsgroups_archive(tmp_path)
    make = registry.readers.get("spacy-siamese.DocumentPairs.v1")
    assert make is create_document_pairs
    corpus = make(path, collection="20news", split="all", n_pairs=12, seed=0)
    examples = list(corpus(nlp))
    again = list(make(path, collection="20news", split="all", n_pairs=12, seed=0)(nlp))
    assert len(examples) == 12

    def triples(egs):
        return [(e.predicted.text, get_partner(e).text, get_label(e)) for e in egs]

    assert triples(examples) == triples(again)
    assert {get_label(e) for e in examples} == {0.0, 1.0}
    assert [e.predicted.text for e in corpus(nlp)] == [e.predicted.text for e in examples]  # every epoch
    with pytest.raises(ValueError, match="path is None"):
        make(None, collection="20news")
    with pytest.raises(ValueError, match="split must be one of"):
        make(path, collection="20news", split="validation")
    with pytest.raises(ValueError, match="Unknown document collection"):
        list(make(path, collection="usenet")(nlp))


def test_labelled_documents_reader(tmp_path, nlp):
    path = newsgroups_archive(tmp_path)
    make = registry.readers.get("spacy-siamese.LabelledDocuments.v1")
    assert make is create_labelled_documents
    examples = list(make(path, collection="20news", split="all")(nlp))
    assert examples and all(is_labelled_doc(eg) for eg in examples)
    assert all(len(get_doc_labels(eg)) == 1 for eg in examples)
    train = list(make(path, collection="20news", split="train", dev_fraction=0.5)(nlp))
    dev = list(make(path, collection="20news", split="dev", dev_fraction=0.5)(nlp))
    assert len(train) + len(dev) == len(examples)
    assert len(list(make(path, collection="20news", split="all", limit=2)(nlp))) == 2
    jsonl = write(
        tmp_path, "docs.jsonl", '{"text": "one", "labels": ["x"], "group": "g"}\n{"text": "two", "labels": ["y"]}\n'
    )
    groups = make(jsonl, collection="jsonl", split="all", label="group")
    with pytest.raises(ValueError, match="docs.jsonl:2: the document has no group"):
        list(groups(nlp))
    assert [get_doc_labels(eg) for eg in make(jsonl, collection="jsonl", split="all")(nlp)] == [["x"], ["y"]]
    with pytest.raises(ValueError, match="path is None"):
        make(None, collection="20news")
    with pytest.raises(ValueError, match="label must be one of"):
        make(path, collection="20news", label="topic")
    with pytest.raises(ValueError, match="split must be one of"):
        make(path, collection="20news", split="valid")
