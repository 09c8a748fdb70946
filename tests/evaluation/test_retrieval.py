import random

import pytest
import spacy

from spacy_siamese.corpora import DocRecord, DocumentPairs, doc_pair_examples, sample_pairs, write_documents
from spacy_siamese.evaluation import evaluate_retrieval, heldout_documents, retrieval_markdown, summary_markdown
from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF
from spacy_siamese.evaluation.retrieval import LSA

TOPICS = {
    "space": "rocket orbit planet moon launch astronaut",
    "food": "recipe cook bake flour oven dinner",
    "cars": "engine wheel drive brake fuel garage",
    "music": "guitar song band concert drum melody",
}


def make_documents(n=60, seed=0):
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        topic = list(TOPICS)[i % len(TOPICS)]
        words = rng.sample(TOPICS[topic].split(), 4) + rng.sample("the a of and with for".split(), 2)
        docs.append(DocRecord(" ".join(words), (topic,), "", f"d{i}"))
    return docs


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "documents.jsonl"
    write_documents(make_documents(), path)
    return path


def test_heldout_documents_is_the_reader_split(collection):
    train, held = heldout_documents("jsonl", collection, dev_fraction=0.25, seed=3)
    reader_dev = DocumentPairs(collection, collection="jsonl", split="dev", dev_fraction=0.25, seed=3)
    reader_train = DocumentPairs(collection, collection="jsonl", split="train", dev_fraction=0.25, seed=3)
    assert held == reader_dev.documents() and train == reader_train.documents()
    assert len(held) == 15


def test_heldout_sample_keeps_collection_order(collection):
    _, held = heldout_documents("jsonl", collection, max_docs=0)
    _, sample = heldout_documents("jsonl", collection, max_docs=5)
    assert len(sample) == 5
    positions = [held.index(doc) for doc in sample]
    assert positions == sorted(positions)
    assert heldout_documents("jsonl", collection, max_docs=5)[1] == sample  # seeded


def test_heldout_errors(collection, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf8")
    with pytest.raises(ValueError, match=f"{empty}: no documents found"):
        heldout_documents("jsonl", empty)
    with pytest.raises(ValueError, match="no test part"):
        heldout_documents("jsonl", collection, split="test")
    with pytest.raises(ValueError, match="split must be"):
        heldout_documents("jsonl", collection, split="train")


@pytest.mark.parametrize("ks", [(0,), (1, -10), (1.5,)])
def test_evaluate_retrieval_refuses_cut_offs_that_are_not_positive_integers(nlp, ks):
    """Refused before encoding, not a ZeroDivisionError (k=0) or figures at a fractional cut-off."""
    docs = make_documents(8)
    with pytest.raises(ValueError, match=f"ks: each k must be an integer of at least 1, got {ks[-1]}"):
        evaluate_retrieval(nlp, docs, docs, ks=ks)


def test_evaluate_retrieval_with_baselines(nlp, collection):
    train, held = heldout_documents("jsonl", collection)
    report = evaluate_retrieval(nlp, train, held, baselines=True, n_eval_pairs=100)
    results = report["results"]
    assert list(results) == [MODEL, TFIDF, LSA]
    width = nlp.get_pipe("siamese_similarity").encoder.get_dim("nO")
    assert results[MODEL]["width"] == width and 1 <= results[LSA]["width"] <= width
    for m in results.values():
        assert 0 < m["mrr"] <= 1 and 0 < m["map"] <= 1 and 0 <= m["auc"] <= 1
        assert 0 < m["n_queries"] <= len(held)
    assert results[TFIDF]["mrr"] > 0.9  # topic words make the TF-IDF cosine work
    assert report["tfidf"]["source"].startswith("the `tfidf` layer fitted")
    assert report["n_eval_pairs"] == 100 and report["task"] == "retrieval"
    without = evaluate_retrieval(nlp, train, held, n_eval_pairs=0)
    assert list(without["results"]) == [MODEL] and without["results"][MODEL]["auc"] is None
    assert without["results"][MODEL]["mrr"] == results[MODEL]["mrr"]


def test_evaluate_retrieval_counts_a_repeated_text_once(nlp):
    """Issue 75, defect 6: a held-out copy of a text ranked first for it, relevant or not."""
    held = make_documents(12)
    copies = [held[0]._replace(labels=("music",), id="copy"), held[5]._replace(id="same")]
    report = evaluate_retrieval(nlp, held, held + copies, baselines=True, n_eval_pairs=0)
    merged = [held[0]._replace(labels=("space", "music"))] + held[1:]
    assert report["repeated_texts"] == {"n_dropped": 2, "ids": ["copy", "same"]}
    assert report["n_heldout_docs"] == 12
    assert report["results"] == evaluate_retrieval(nlp, held, merged, baselines=True, n_eval_pairs=0)["results"]
    with pytest.raises(ValueError, match="at least 2 held-out documents with different texts, got 1"):
        evaluate_retrieval(nlp, held, [held[0], held[0]])


@pytest.fixture(scope="module")
def s2net_report(collection):
    """The retrieval report, with baselines, of an S2Net pipe of width 4."""
    train, held = heldout_documents("jsonl", collection)
    nlp = spacy.blank("en")
    encoder = {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 4, "min_df": 1}
    comparison = {"@architectures": "spacy-siamese.CosineSimilarity.v1"}
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder, "comparison": comparison}})
    docs = [nlp.make_doc(d.text) for d in train]
    examples = list(doc_pair_examples(docs, sample_pairs(train, n_pairs=50)))
    nlp.initialize(lambda: examples)
    return evaluate_retrieval(nlp, train, held, baselines=True, n_eval_pairs=50)


def test_s2net_pipe_is_compared_with_its_own_featuriser(s2net_report):
    report = s2net_report
    assert report["tfidf"]["source"] == "the pipe's own featuriser"
    assert report["results"][LSA]["width"] == 4
    # S2Net starts as LSA of the same TF-IDF (fitted on the documents of the training pairs)
    assert report["results"][MODEL]["mrr"] == pytest.approx(report["results"][LSA]["mrr"], abs=0.1)


def test_retrieval_report_calls_the_vector_width_width(s2net_report):
    """The vector size is "width", as in the encoders; "k" is kept for top-k cut-offs (P@k, --k)."""
    results = s2net_report["results"]
    assert results[MODEL]["width"] == results[LSA]["width"] == 4 and "width" not in results[TFIDF]
    assert not any("k" in m for m in results.values())
    md = retrieval_markdown(dict(s2net_report, name="docs", split="dev"))
    assert "| method | width | MRR | P@1 | P@10 | MAP | pair AUC |" in md
    assert f"| {MODEL} | 4 |" in md and f"| {LSA} | 4 |" in md and f"| {TFIDF} | - |" in md
    summary = summary_markdown({"docs": dict(s2net_report, name="docs", split="dev")})
    assert "| evaluation | model | width | query docs | MRR |" in summary
    assert "| docs | S2NetEncoder.v1 + CosineSimilarity.v1 | 4 |" in summary
