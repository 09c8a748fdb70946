"""spacy-siamese.CrossLingualS2NetEncoder.v1: one pipe that scores texts of two languages."""

import numpy
import pytest
import spacy
from scipy.sparse import csr_matrix
from sklearn.decomposition import TruncatedSVD

from spacy_siamese import make_pair_example
from spacy_siamese.architectures.crosslingual import build_crosslingual_s2net_encoder, pair_rows

PAIRS = [
    ("The cat sleeps.", "El gato duerme."),
    ("The dog runs in the park.", "El perro corre en el parque."),
    ("I drink coffee every morning.", "Bebo café cada mañana."),
    ("The president visited Berlin in 2012.", "El presidente visitó Berlín en 2012."),
    ("The bank raised interest rates.", "El banco subió los tipos de interés."),
    ("My sister plays the guitar.", "Mi hermana toca la guitarra."),
    ("The train to Madrid is late.", "El tren a Madrid llega tarde."),
    ("We ate pizza for dinner.", "Cenamos pizza."),
]
PIPE = {
    "model": {
        "encoder": {"@architectures": "spacy-siamese.CrossLingualS2NetEncoder.v1", "width": 6, "min_df": 1},
        "comparison": {
            "@architectures": "spacy-siamese.WithInBatchScores.v1",
            "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": False},
        },
    },
    "loss": {"@losses": "spacy-siamese.InBatchNegatives.v1", "scale": 20.0},
}


def _train(n_iter=40):
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("xx")
    nlp.add_pipe("siamese_similarity", config=PIPE)
    examples = [make_pair_example(nlp, a, b, 1.0) for a, b in PAIRS]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(n_iter):
        nlp.update(examples, sgd=optimizer)
    return nlp


def _accuracy(nlp) -> float:
    S = nlp.get_pipe("siamese_similarity").similarity_matrix([a for a, _ in PAIRS], [b for _, b in PAIRS])
    return float((S.argmax(axis=1) == numpy.arange(len(PAIRS))).mean())


def test_init_is_cl_lsi_of_the_pairs():
    nlp = spacy.blank("xx")
    docs = [nlp(a) for a, _ in PAIRS] + [nlp(b) for _, b in PAIRS]
    model = build_crosslingual_s2net_encoder(width=3, min_df=1)
    model.initialize(X=docs)
    terms, project = model.layers
    F = terms.predict(docs)
    svd = TruncatedSVD(n_components=3, random_state=0).fit(csr_matrix(F[: len(PAIRS)] + F[len(PAIRS) :]))
    numpy.testing.assert_allclose(project.get_param("W"), svd.components_.T, atol=1e-5)
    with pytest.raises(ValueError, match="odd number"):
        pair_rows(F[:3])
    with pytest.raises(ValueError, match="init must be"):
        build_crosslingual_s2net_encoder(init="opca")


def test_training_finds_translations_and_round_trips(tmp_path):
    nlp = _train()
    assert _accuracy(nlp) == 1.0
    en, es = nlp(PAIRS[3][0]), nlp(PAIRS[3][1])
    assert en.similarity(es) == es.similarity(en)  # symmetric, exactly
    assert en.similarity(es) > en.similarity(nlp(PAIRS[0][1]))
    nlp.to_disk(tmp_path / "xling")
    loaded = spacy.load(tmp_path / "xling")
    assert loaded.lang == "xx"
    pipe, original = loaded.get_pipe("siamese_similarity"), nlp.get_pipe("siamese_similarity")
    texts_a, texts_b = [a for a, _ in PAIRS], [b for _, b in PAIRS]
    numpy.testing.assert_allclose(
        pipe.similarity_matrix(texts_a, texts_b), original.similarity_matrix(texts_a, texts_b)
    )
    assert loaded(PAIRS[3][0]).similarity(loaded(PAIRS[3][1])) == pytest.approx(en.similarity(es))


def test_explain_splits_a_crosslingual_score_over_both_texts():
    from spacy_siamese.explain import explain_pair

    nlp = _train(n_iter=10)
    explanation = explain_pair(nlp, PAIRS[3][0], PAIRS[3][1])
    assert explanation.kind == "encoder" and explanation.method == "shapley"  # exact Shapley values (<= 8 tokens)
    assert [t.text for t in explanation.tokens_b][:3] == ["El", "presidente", "visitó"]
    total_b = sum(t.contribution for t in explanation.tokens_b)
    assert total_b == pytest.approx(explanation.score - explanation.reference_b, abs=1e-5)
