import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_siamese.classifier import SimilarityClassifier

from .conftest import make_nlp, pair_examples, train

EXEMPLARS = {
    "python": ["How do I learn Python fast?", "What is the quickest way to learn Python?"],
    "sky": ["Why is the sky blue?", "What makes the sky look blue?"],
    "weight": ["How can I lose weight quickly?"],
}


@pytest.fixture(scope="module")
def base_nlp():
    nlp, _ = train(make_nlp(), n_iter=30)
    return nlp


@pytest.fixture()
def nlp(base_nlp):
    """A fresh copy of the small trained pipeline with a classifier holding EXEMPLARS."""
    copy = make_nlp()
    copy.get_pipe("siamese_similarity").from_bytes(base_nlp.get_pipe("siamese_similarity").to_bytes())
    copy.add_pipe("similarity_classifier", config={"exemplars": EXEMPLARS})
    return copy


def test_cats_hold_every_label(nlp):
    doc = nlp("How do you learn Python quickly?")
    assert set(doc.cats) == set(EXEMPLARS)
    assert max(doc.cats, key=doc.cats.get) == "python"  # the label of its paraphrases scores highest
    assert nlp.get_pipe("similarity_classifier").labels == tuple(EXEMPLARS)


def test_mean_rule_is_the_mean_similarity_to_the_exemplars(nlp):
    doc = nlp("How do you learn Python quickly?")
    for label, texts in EXEMPLARS.items():
        expected = numpy.mean([doc.similarity(nlp(text)) for text in texts])
        assert doc.cats[label] == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("rule", ["max", "centroid"])
def test_other_rules(nlp, rule):
    clf = nlp.get_pipe("similarity_classifier")
    nlp("A first doc, scored with the mean rule.")  # fills the exemplar cache before the rule changes
    clf.cfg["rule"] = rule
    doc = nlp("How do you learn Python quickly?")
    sim = nlp.get_pipe("siamese_similarity")
    texts = EXEMPLARS["python"]
    vectors = sim.vectors([nlp(t) for t in texts])
    if rule == "max":
        expected = max(doc.similarity(nlp(t)) for t in texts)
    else:
        expected = sim.compare(sim.vectors([doc]), vectors.mean(axis=0, keepdims=True))[0]
    assert doc.cats["python"] == pytest.approx(expected, abs=1e-5)


def test_normalized_cats_sum_to_one(nlp):
    texts = ["Why is the sky so blue?", "Learn Python", ""]
    raw = [doc.cats for doc in nlp.pipe(texts)]
    nlp.get_pipe("similarity_classifier").cfg["normalize"] = True
    low = nlp.get_pipe("siamese_similarity").score_range[0]
    for doc, cats in zip(nlp.pipe(texts), raw):
        assert sum(doc.cats.values()) == pytest.approx(1.0, abs=1e-5)
        total = sum(score - low for score in cats.values())  # the mean similarities, shifted to start at 0
        assert doc.cats == pytest.approx({label: (score - low) / total for label, score in cats.items()}, abs=1e-5)


def test_add_exemplars_and_round_trips(nlp, tmp_path):
    clf = nlp.get_pipe("similarity_classifier")
    clf.add_exemplars("books", ["What are good books to read?"])
    clf.add_exemplars("sky", ["Is the sky blue at night?"])
    text = "Which books should everyone read?"
    cats = nlp(text).cats
    assert set(cats) == {*EXEMPLARS, "books"}
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("similarity_classifier").exemplars == clf.exemplars
    assert loaded(text).cats == pytest.approx(cats, abs=1e-6)
    data = clf.to_bytes()
    other = SimilarityClassifier(nlp, "other").from_bytes(data)
    assert other.exemplars == clf.exemplars and other.cfg == clf.cfg


@pytest.mark.parametrize(
    "part,text,problem",
    [
        ("cfg", "{not json", "not valid JSON"),
        ("cfg", '{"rule": "median"}', "no valid rule"),
        ("exemplars.json", "", "not valid JSON"),
        ("exemplars.json", '["a"]', "not a mapping"),
        ("exemplars.json", '{"sky": [1]}', "needs one or more exemplar texts"),
        ("exemplars.json", '{"ok": ["a"], "sky": "one text"}', "not one string"),
    ],
)
def test_a_damaged_saved_file_is_named_and_the_pipe_stays_as_it_was(nlp, tmp_path, part, text, problem):
    clf = nlp.get_pipe("similarity_classifier")
    clf.to_disk(tmp_path / "clf")
    (tmp_path / "clf" / part).write_text(text, encoding="utf8")
    clf.cfg["rule"] = "max"
    cfg, exemplars = dict(clf.cfg), {label: list(texts) for label, texts in clf.exemplars.items()}
    with pytest.raises(ValueError) as error:
        clf.from_disk(tmp_path / "clf")
    message = str(error.value)
    assert str(tmp_path / "clf" / part) in message and "damaged" in message and problem in message, message
    assert clf.cfg == cfg and clf.exemplars == exemplars


def test_damaged_bytes_are_reported_as_such(nlp):
    clf = nlp.get_pipe("similarity_classifier")
    for data in (b"garbage", b"", b"\x93\x01"):
        with pytest.raises(ValueError, match="saved bytes are damaged"):
            clf.from_bytes(data)
    assert clf.exemplars == EXEMPLARS


def test_exemplars_follow_the_similarity_weights(nlp, base_nlp):
    """Exemplar vectors are cached per model id: new weights, new exemplar vectors."""
    doc_text = "Why is the sky blue?"
    before = nlp(doc_text).cats
    sim = nlp.get_pipe("siamese_similarity")
    optimizer = sim.create_optimizer()
    for _ in range(5):
        sim.update(pair_examples(nlp), sgd=optimizer)
    after = nlp(doc_text).cats
    direct = numpy.mean([nlp(doc_text).similarity(nlp(t)) for t in EXEMPLARS["sky"]])
    assert after["sky"] == pytest.approx(direct, abs=1e-5)
    assert after != before


def test_evaluate_reports_textcat_keys(nlp):
    examples = []
    for text, label in [
        ("Learn Python fast", "python"),
        ("Why is the sky blue today?", "sky"),
        ("Lose weight", "weight"),
    ]:
        ref = nlp.make_doc(text)
        ref.cats = {lab: float(lab == label) for lab in EXEMPLARS}
        examples.append(Example(nlp.make_doc(text), ref))
    # The siamese pipe scores labelled pairs only; with it disabled, the classifier encodes the
    # docs itself (on_unknown = "encode").
    with nlp.select_pipes(disable=["siamese_similarity"]):
        scores = nlp.evaluate(examples)
    for key in ("cats_score", "cats_macro_auc", "cats_micro_f", "cats_macro_f", "cats_f_per_type"):
        assert key in scores
    assert set(scores["cats_f_per_type"]) == set(EXEMPLARS)


def test_an_exemplar_is_encoded_as_the_same_text_processed(nlp):
    """Exemplars keep the token norms of tokenizer exceptions ("n't" -> "not"), which the encoder reads."""
    text = "I don't know, can't you?"
    nlp.get_pipe("similarity_classifier").add_exemplars("doubt", [text])
    doc = nlp(text)
    assert doc.cats["doubt"] == pytest.approx(doc.similarity(nlp(text)), abs=1e-6)


def test_a_text_is_not_split_into_exemplar_characters(nlp):
    clf = nlp.get_pipe("similarity_classifier")
    with pytest.raises(ValueError, match="a list of texts, not one string"):
        clf.add_exemplars("books", "What are good books to read?")
    with pytest.raises(ValueError, match="a list of texts, not one string"):
        clf.initialize(exemplars={"books": "What are good books to read?"})
    assert "books" not in clf.labels


def test_no_exemplars_is_a_clear_error(base_nlp):
    nlp = make_nlp()
    nlp.get_pipe("siamese_similarity").from_bytes(base_nlp.get_pipe("siamese_similarity").to_bytes())
    nlp.add_pipe("similarity_classifier")
    with pytest.raises(ValueError, match="has no exemplars"):
        nlp("Hello")


def test_no_similarity_pipe_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("similarity_classifier", config={"exemplars": EXEMPLARS, "similarity_pipe": "sim"})
    with pytest.raises(ValueError, match="similarity_pipe: The pipeline has no 'sim' component"):
        nlp("Hello")
    nlp.add_pipe("sentencizer", name="sim", first=True)
    with pytest.raises(ValueError, match="'sim' component is a Sentencizer, not a siamese_similarity pipe"):
        nlp("Hello")


def test_bad_settings_are_refused():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="rule must be one of"):
        nlp.add_pipe("similarity_classifier", config={"rule": "median"})
    with pytest.raises(ValueError, match="needs one or more exemplar texts"):
        nlp.add_pipe("similarity_classifier", config={"exemplars": {"a": []}})


def test_spacy_evaluate_on_a_saved_classifier_pipeline(nlp, tmp_path):
    """`spacy evaluate` on .spacy docs with gold cats. The siamese pipe is disabled in the saved
    pipeline (it scores labelled pairs only); the classifier then encodes the docs itself."""
    from spacy.cli.evaluate import evaluate
    from spacy.tokens import DocBin

    nlp.disable_pipe("siamese_similarity")
    nlp.to_disk(tmp_path / "model")
    gold = DocBin()
    for text, label in [("Learn Python fast", "python"), ("Why is the sky blue today?", "sky")]:
        doc = nlp.make_doc(text)
        doc.cats = {lab: float(lab == label) for lab in EXEMPLARS}
        gold.add(doc)
    gold.to_disk(tmp_path / "dev.spacy")
    scores = evaluate(str(tmp_path / "model"), tmp_path / "dev.spacy", silent=True)
    assert {"cats_score", "cats_macro_auc", "cats_f_per_type"} <= set(scores)
