import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import registry

from spacy_siamese.corpora import (
    EmptyTextWarning,
    MultiPairCorpus,
    PairFormatError,
    create_document_pairs,
    create_multi_pair_corpus,
    create_pair_corpus,
)
from spacy_siamese.corpora.readers import create_labelled_documents
from spacy_siamese.labelled import get_doc_labels, is_labelled_doc
from spacy_siamese.pair_examples import get_dataset, get_label, get_partner

from .test_bimpm import BIMPM
from .test_newsgroups import newsgroups_archive
from .test_sts import STS
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


def test_pair_reader_tags_its_pairs_with_a_dataset_when_asked(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    config = {"corpus": {"@readers": "spacy-siamese.PairCorpus.v1", "path": str(path), "dataset": "quora"}}
    assert [get_dataset(eg) for eg in registry.resolve(config)["corpus"](nlp)] == ["quora"] * 4
    assert {get_dataset(eg) for eg in create_pair_corpus(path)(nlp)} == {None}
    with pytest.raises(ValueError, match="dataset name .* got 'Quora pairs'"):
        create_pair_corpus(path, dataset="Quora pairs")


def test_pair_reader_limit(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    assert len(list(create_pair_corpus(path, limit=3)(nlp))) == 3
    assert len(list(create_pair_corpus(path, limit=0)(nlp))) == 4
    examples = list(create_pair_corpus(path, limit=1)(nlp))
    assert len(examples) == 1 and get_partner(examples[0]).text.startswith("What can cause stool")


def test_a_raw_file_where_json_lines_are_expected_says_to_convert_it(tmp_path, nlp):
    """The project's configs read the canonical JSON lines (format = "jsonl"): a raw file given
    to them is named with its format and the convert command, not a JSON error on line 1."""
    path = write(tmp_path, "dev.tsv", BIMPM)
    with pytest.raises(PairFormatError, match=r"dev.tsv is a bimpm pair file, not JSON lines.*spacy_siamese convert"):
        list(create_pair_corpus(path, format="jsonl")(nlp))
    assert len(list(create_pair_corpus(path, format="bimpm")(nlp))) == 3
    converted = write(tmp_path, "dev.txt", '{"text1": "a", "text2": "b", "label": 1}\n')
    assert len(list(create_pair_corpus(converted, format="jsonl")(nlp))) == 1
    broken = write(tmp_path, "broken.jsonl", '{"text1": "a"\n')
    with pytest.raises(PairFormatError, match="broken.jsonl:1: invalid JSON"):
        list(create_pair_corpus(broken, format="jsonl")(nlp))


def test_pair_reader_lenient_warns(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM + "2\ta\tb\t9\n")
    with pytest.warns(UserWarning, match="Skipped 1 malformed line"):
        assert len(list(create_pair_corpus(path, lenient=True)(nlp))) == 3
    with pytest.raises(PairFormatError, match="dev.tsv:4:"):
        list(create_pair_corpus(path)(nlp))


def test_pair_reader_keeps_empty_texts_and_warns(tmp_path, nlp):
    path = write(tmp_path, "dev.tsv", BIMPM + "0\t \t-LRB- -RRB-\t9\n")
    with pytest.warns(EmptyTextWarning, match=r"1 of the 4 pair\(s\) read from .*dev.tsv .*\(line 4\)"):
        examples = list(create_pair_corpus(path)(nlp))
    assert len(examples) == 4 and examples[3].predicted.text == "" and get_partner(examples[3]).text == "()"


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


# -- several datasets, each pair tagged with its dataset ------------------------


def multi_corpus_files(tmp_path):
    write(tmp_path, "quora.tsv", QUORA_MIRROR)
    write(tmp_path, "sts-dev.csv", STS)
    return {"quora": {"path": "quora.tsv", "limit": 3}, "sts": {"path": "sts-dev.csv", "format": "sts"}}


def test_multi_pair_corpus_tags_every_pair_with_its_dataset(tmp_path, nlp):
    datasets = multi_corpus_files(tmp_path)
    config = {"corpus": {"@readers": "spacy-siamese.MultiPairCorpus.v1", "root": str(tmp_path), "datasets": datasets}}
    corpus = registry.resolve(config)["corpus"]
    assert registry.readers.get("spacy-siamese.MultiPairCorpus.v1") is create_multi_pair_corpus
    assert isinstance(corpus, MultiPairCorpus) and list(corpus.corpora) == ["quora", "sts"]
    for _ in range(2):  # re-read on every call (epoch)
        examples = list(corpus(nlp))
        assert [get_dataset(eg) for eg in examples] == ["quora"] * 3 + ["sts"] * 3
        assert [get_label(eg) for eg in examples] == [0.0, 0.0, 1.0, 1.0, 0.25, 0.0]
        assert get_partner(examples[3]).text == "An air plane is taking off."


def test_the_dataset_tag_survives_docbin_and_evaluate_copies(tmp_path, nlp):
    examples = list(create_multi_pair_corpus(datasets=multi_corpus_files(tmp_path), root=tmp_path)(nlp))
    doc_bin = DocBin(store_user_data=True, docs=[eg.reference for eg in examples])
    docs = list(DocBin().from_bytes(doc_bin.to_bytes()).get_docs(nlp.vocab))
    assert [get_dataset(Example(doc, doc)) for doc in docs] == [get_dataset(eg) for eg in examples]
    copied = Example(examples[4].x.copy(), examples[4].y.copy())  # what nlp.evaluate does
    assert get_dataset(copied) == "sts" and get_label(copied) == 0.25


def test_multi_pair_corpus_paths_without_root_are_read_from_the_working_directory(tmp_path, nlp, monkeypatch):
    datasets = multi_corpus_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert len(list(create_multi_pair_corpus(datasets=datasets)(nlp))) == 6
    monkeypatch.chdir(tmp_path.parent)
    with pytest.raises(FileNotFoundError, match=r"dataset 'quora': Pair file not found: quora.tsv.*`root` \(not set\)"):
        create_multi_pair_corpus(datasets=datasets)


@pytest.mark.parametrize(
    "datasets,message",
    [
        ({}, "no datasets"),
        ({"STS-B": {"path": "sts-dev.csv"}}, "lower-case letters, digits and underscores"),
        ({"sts": {"path": "sts-dev.csv", "weight": 2.0}}, "unknown setting.*weight.*batch_by_dataset"),
        ({"sts": {"format": "sts"}}, "dataset 'sts' has no path"),
        ({"sts": {"path": "sts-dev.csv", "format": "csv"}}, "dataset 'sts': unknown format 'csv'"),
        ({"sts": "sts-dev.csv"}, "must be a section with a path"),
        ({"sts": {"path": "sts-dev.csv", "lenient": "no"}}, "dataset 'sts': lenient must be true or false, got 'no'"),
        ({"sts": {"path": "sts-dev.csv", "limit": 2.5}}, "dataset 'sts': limit must be a whole number.*got 2.5"),
        ({"sts": {"path": "sts-dev.csv", "limit": "all"}}, "dataset 'sts': limit must be a whole number.*got 'all'"),
    ],
)
def test_multi_pair_corpus_settings_are_checked(tmp_path, datasets, message):
    multi_corpus_files(tmp_path)
    with pytest.raises(ValueError, match=message):
        create_multi_pair_corpus(datasets=datasets, root=tmp_path)


NEWS_CSV = "ID,TITLE,URL,PUBLISHER,CATEGORY,STORY,HOSTNAME,TIMESTAMP\n" + "".join(
    f"{i},headline {i},u,p,b,s{i % 3},h,1\n" for i in range(12)
)
JSONL_DOCS = "".join(f'{{"text": "doc {i}", "labels": ["l{i % 3}"]}}\n' for i in range(12))


@pytest.mark.parametrize("collection,name,text", [("jsonl", "docs.jsonl", JSONL_DOCS), ("news", "news.csv", NEWS_CSV)])
def test_document_readers_refuse_a_test_split_the_collection_does_not_have(tmp_path, nlp, collection, name, text):
    """jsonl and news collections are read whole: split="test" would be the training documents."""
    path = write(tmp_path, name, text)
    for make in (create_document_pairs, create_labelled_documents):
        with pytest.raises(ValueError, match=f"the {collection} collection has no test part.*20news or reuters"):
            list(make(path, collection=collection, split="test")(nlp))
    train = list(create_labelled_documents(path, collection=collection, split="train", dev_fraction=0.25)(nlp))
    dev = list(create_labelled_documents(path, collection=collection, split="dev", dev_fraction=0.25)(nlp))
    assert (len(train), len(dev)) == (9, 3)
