"""spacy-siamese.DAEEncoder.v1 in the pipe (the layers: tests/layers/test_dae.py)."""

import numpy
import spacy

from spacy_siamese.labelled import labelled_doc_example


def dae_nlp(comparison="spacy-siamese.DotSimilarity.v1"):
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "siamese_similarity",
        config={
            "model": {
                "@architectures": "spacy-siamese.Siamese.v1",
                "encoder": {"@architectures": "spacy-siamese.DAEEncoder.v1", "width": 4, "min_df": 1},
                "comparison": {"@architectures": comparison},
            },
            "loss": {"@losses": "spacy-siamese.TripletLoss.v1", "weight": 10.0},
        },
    )
    return nlp


LABELLED = [
    ("the cat sat on the mat", "pets"),
    ("a cat and a dog", "pets"),
    ("dogs chase cats", "pets"),
    ("stock markets fell", "money"),
    ("the market rose", "money"),
    ("shares and stocks fell", "money"),
]


def test_dae_pipe_trains_on_labelled_docs_and_round_trips(tmp_path):
    spacy.util.fix_random_seed(0)
    nlp = dae_nlp()
    examples = [labelled_doc_example(nlp.make_doc(t), [label]) for t, label in LABELLED]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.05
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first / 1.5
    docs = [nlp(t) for t, _ in LABELLED]
    same = numpy.array([[x == y for _, y in LABELLED] for _, x in LABELLED])
    matrix = numpy.array([[a.similarity(b) for b in docs] for a in docs])
    assert matrix[same & ~numpy.eye(len(docs), dtype=bool)].min() > matrix[~same].max()  # same label ranks higher
    texts = ["cat mat", "stocks fell", "", "unknown words only"]
    before = [doc.vector for doc in nlp.pipe(texts)]
    assert not before[2].any() and not before[3].any()  # no known term: the zero vector
    a, b = nlp("cat mat"), nlp("zebra")
    assert a.similarity(b) == 0.0  # the zero vector is similar to nothing
    nlp.to_disk(tmp_path / "dae")
    loaded = spacy.load(tmp_path / "dae")
    encoder = loaded.get_pipe("siamese_similarity").encoder
    assert (
        encoder.layers[0].attrs["table"].terms
        == nlp.get_pipe("siamese_similarity").encoder.layers[0].attrs["table"].terms
    )
    for doc, vector in zip(loaded.pipe(texts), before):
        numpy.testing.assert_array_equal(doc.vector, vector)
