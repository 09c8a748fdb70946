import numpy
import pytest
import spacy
from spacy.util import registry

from spacy_siamese.batching import configure_batch_by_labels
from spacy_siamese.corpora.readers import create_labelled_documents
from spacy_siamese.labelled import get_doc_labels, is_labelled_doc, labelled_doc_example, same_label_matrix
from spacy_siamese.layers import cosine_similarity
from spacy_siamese.layers.in_batch import with_in_batch_scores
from spacy_siamese.losses import TripletLoss, make_triplet_loss
from spacy_siamese.pairs import is_pair_example

from .conftest import make_nlp, pair_examples
from .corpora.test_newsgroups import newsgroups_archive
from .corpora.util import write
from .gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
LABELS = [["a"], ["a"], ["b"], ["b", "c"], ["c"], ["a"]]


@pytest.mark.parametrize("form", ["logistic", "margin"])
@pytest.mark.parametrize("mining", ["all", "hard"])
def test_triplet_loss_from_labels_gradient(form, mining):
    loss = TripletLoss(form=form, mining=mining, scale=3.0, margin=0.3, weight=2.0)
    M = rng.normal(size=(6, 6))
    M = (M + M.T) / 2
    same = same_label_matrix(LABELS)
    dM, value = loss.from_labels(M, same)
    assert value > 0
    assert_grad_close(dM, numeric_grad(lambda: loss.from_labels(M, same)[1], M, 1e-6), rtol=1e-4, atol=1e-8)
    assert not numpy.diag(dM).any()  # a doc is never its own positive or negative


def test_triplet_loss_values():
    M = numpy.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.1], [0.5, 0.1, 1.0]])
    same = same_label_matrix([["x"], ["x"], ["y"]])
    # anchor 0: p=1, q=2 -> x = 0.3; anchor 1: p=0, q=2 -> x = -0.1
    margin = TripletLoss(form="margin", margin=0.2).from_labels(M, same)[1]
    assert margin == pytest.approx((0.5 + 0.1) / 2)
    logistic = TripletLoss(scale=1.0).from_labels(M, same)[1]
    assert logistic == pytest.approx((numpy.log1p(numpy.exp(0.3)) + numpy.log1p(numpy.exp(-0.1))) / 2)


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_one_class_or_no_shared_label_has_no_triplets(mining):
    M = rng.normal(size=(4, 4))
    for labels in (["a"] * 4, ["a", "b", "c", "d"]):
        dM, value = TripletLoss(mining=mining).from_labels(M, same_label_matrix([[x] for x in labels]))
        assert value == 0.0 and not dM.any()


def test_same_label_matrix_is_multilabel():
    same = same_label_matrix(LABELS)
    assert same[2, 3] and same[3, 4] and not same[2, 4] and same.diagonal().all()


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_triplet_loss_from_labelled_pairs(mining):
    """The in-batch layout of WithInBatchScores: k pair columns, then M[i, j] = s(A_i, B_j)."""
    loss = TripletLoss(mining=mining, scale=2.0)
    n = 4
    scores = rng.normal(size=(n, 1 + n))
    truths = numpy.array([1.0, 0.0, 1.0, 1.0])
    d, value = loss(scores, truths)
    assert value > 0 and not d[:, 0].any()  # no pair loss by default
    assert_grad_close(d, numeric_grad(lambda: loss(scores, truths)[1], scores, 1e-6), rtol=1e-4, atol=1e-8)
    d, value = loss(scores, numpy.zeros(n))
    assert value == 0.0 and not d.any()
    with_pairs = TripletLoss(pair_loss=registry.losses.get("spacy-siamese.SquaredError.v1")())
    assert with_pairs(scores, truths)[0][:, 0].any()


def test_triplet_loss_bad_settings_and_input():
    assert registry.losses.get("spacy-siamese.TripletLoss.v1") is make_triplet_loss
    with pytest.raises(ValueError, match="form must be"):
        TripletLoss(form="hinge")
    with pytest.raises(ValueError, match="mining must be"):
        TripletLoss(mining="semi")
    with pytest.raises(ValueError, match="scale > 0"):
        TripletLoss(scale=0)
    with pytest.raises(ValueError, match="WithInBatchScores"):
        TripletLoss()(numpy.zeros((3, 1)), numpy.ones(3))
    with pytest.raises(ValueError, match=r"\(n, n\)"):
        TripletLoss().from_labels(numpy.zeros((3, 2)), numpy.zeros((3, 2), dtype=bool))


def test_pipe_trains_any_encoder_on_labelled_docs():
    """The MWE encoder with Cauchy similarity, from labelled docs; pair training is unchanged."""
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(loss={"@losses": "spacy-siamese.TripletLoss.v1", "form": "margin", "mining": "hard"})
    texts = [("the cat sat", "pets"), ("a cat and a dog", "pets"), ("stocks fell", "money"), ("markets rose", "money")]
    examples = [labelled_doc_example(nlp.make_doc(t), [label]) for t, label in texts]
    assert is_labelled_doc(examples[0]) and not is_pair_example(examples[0])
    assert get_doc_labels(examples[0]) == ["pets"]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first
    with pytest.raises(ValueError, match="mixes labelled docs and pairs"):
        nlp.update(examples[:2] + pair_examples(nlp)[:2], sgd=optimizer)
    log_loss = make_nlp()
    log_loss.initialize(lambda: pair_examples(log_loss))
    with pytest.raises(ValueError, match="need a loss that mines triplets"):
        log_loss.update(examples)


def test_triplet_loss_with_in_batch_scores_trains_pairs():
    spacy.util.fix_random_seed(0)
    comparison = {
        "@architectures": "spacy-siamese.WithInBatchScores.v1",
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    }
    nlp = make_nlp(comparison=comparison, loss={"@losses": "spacy-siamese.TripletLoss.v1", "scale": 5.0})
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    losses = [nlp.update(examples, sgd=optimizer)["siamese_similarity"] for _ in range(10)]
    assert losses[-1] < losses[0]
    assert isinstance(with_in_batch_scores(comparison=cosine_similarity()), object)


def test_labelled_doc_example_errors():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="non-empty string labels"):
        labelled_doc_example(nlp.make_doc("x"), [])
    with pytest.raises(ValueError, match="not a labelled doc"):
        get_doc_labels(pair_examples(nlp)[0])


def test_labelled_documents_reader(tmp_path):
    nlp = spacy.blank("en")
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


def test_batch_by_labels_groups_docs_of_one_label():
    nlp = spacy.blank("en")
    examples = [labelled_doc_example(nlp.make_doc(f"doc {i}"), [f"story{i % 5}"]) for i in range(40)]
    make = registry.batchers.get("spacy-siamese.batch_by_labels.v1")
    assert make is configure_batch_by_labels
    batches = list(make(size=8, per_label=4, seed=0)(examples))
    assert sorted(eg.predicted.text for b in batches for eg in b) == sorted(eg.predicted.text for eg in examples)
    assert all(len(b) == 8 for b in batches)
    for batch in batches:  # groups of 4 docs of one story
        labels = [get_doc_labels(eg)[0] for eg in batch]
        assert labels[:4] == [labels[0]] * 4 and labels[4:] == [labels[4]] * 4
    again = make(size=8, per_label=4, seed=0)
    assert [eg.predicted.text for eg in next(again(examples))] == [eg.predicted.text for eg in batches[0]]
    with pytest.raises(ValueError, match="per_label"):
        make(size=8, per_label=0)
