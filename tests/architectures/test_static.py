"""spacy-siamese.StaticEncoder.v1/v2 and TableCNNEncoder.v1 in the pipe: they train, score and
round-trip (the layers themselves: tests/layers/test_hashed_mean.py, test_table_mean.py, test_table_embed.py)."""

import shutil

import pytest
import spacy

from spacy_siamese.architectures import build_static_encoder, build_static_encoder_v2, build_table_cnn_encoder
from spacy_siamese.layers import table_mean

from ..conftest import PAIRS, pair_examples
from ..tiny_transformer import build_tiny_static

STATIC_CONFIG = {
    "model": {
        "@architectures": "spacy-siamese.Siamese.v1",
        "encoder": {"@architectures": "spacy-siamese.StaticEncoder.v1", "width": 32, "rows": 2000, "proj_width": 16},
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    },
    "loss": {"@losses": "spacy-siamese.LogLoss.v2"},
}


def test_the_static_encoder_trains_in_the_pipe_and_round_trips(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config=STATIC_CONFIG)
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.05
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < 0.6 * first
    scores = {(a, b): nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS}
    pos = [scores[(a, b)] for a, b, y in PAIRS if y == 1]
    neg = [scores[(a, b)] for a, b, y in PAIRS if y == 0]
    assert min(pos) > max(neg)
    nlp.to_disk(tmp_path / "static")
    reloaded = spacy.load(tmp_path / "static")
    for (a, b), score in scores.items():
        assert reloaded(a).similarity(reloaded(b)) == pytest.approx(score, abs=1e-6)


def test_widths():
    assert build_static_encoder(width=8, rows=10).get_dim("nO") == 8
    assert build_static_encoder(width=8, rows=10, proj_width=4).get_dim("nO") == 4
    with pytest.raises(ValueError, match="proj_width >= 0"):
        build_static_encoder(proj_width=-1)


def test_started_from_a_model2vec_table_it_trains_and_loads_without_the_table(tmp_path):
    table = build_tiny_static(tmp_path / "m2v", dims=8)
    config = {
        "model": {
            "@architectures": "spacy-siamese.Siamese.v1",
            "encoder": {"@architectures": "spacy-siamese.StaticEncoder.v2", "width": None, "table": str(table)},
            "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
        },
        "loss": {"@losses": "spacy-siamese.CoSENTLoss.v1", "scale": 40.0},
    }
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config=config)
    pairs = [("the cat", "the cats", 1.0), ("the dog", "dogs", 0.9), ("the cat", "the dog barks", 0.1)]
    examples = pair_examples(nlp, pairs)  # texts of the tiny table's vocabulary
    optimizer = nlp.initialize(lambda: examples)
    encoder = nlp.get_pipe("siamese_similarity").model.get_ref("encoder")
    assert encoder.get_dim("nO") == 8  # the table's width
    losses = [nlp.update(examples, sgd=optimizer)["siamese_similarity"] for _ in range(30)]
    assert losses[-1] < losses[0]
    scores = [nlp(a).similarity(nlp(b)) for a, b in [("the cat", "the cats"), ("the cat", "the dog barks")]]
    assert scores[0] > scores[1] and all(0.0 <= s <= 1.0 for s in scores)
    nlp.to_disk(tmp_path / "pipe")
    shutil.rmtree(table)  # a loaded pipeline keeps the table and the tokenizer
    reloaded = spacy.load(tmp_path / "pipe")
    again = [reloaded(a).similarity(reloaded(b)) for a, b in [("the cat", "the cats"), ("the cat", "the dog barks")]]
    assert again == pytest.approx(scores, abs=1e-6)


def test_hashed_embeddings_need_a_width():
    with pytest.raises(ValueError, match="need a width"):
        build_static_encoder_v2(width=None)


@pytest.mark.parametrize("proj_width", [0, 4])
def test_a_table_encoder_encodes_texts_without_making_docs(tmp_path, proj_width):
    table = build_tiny_static(tmp_path / "m2v", dims=8)
    encoder = {"@architectures": "spacy-siamese.StaticEncoder.v2", "width": None, "table": str(table)}
    config = {
        "model": {
            "@architectures": "spacy-siamese.Siamese.v1",
            "encoder": {**encoder, "proj_width": proj_width},
            "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
        },
    }
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("siamese_similarity", config=config)
    nlp.initialize(lambda: pair_examples(nlp, [("the cat", "the dog", 1.0)]))
    texts = ["the cat", "", "  the   dogs ", "unknown words only", "the cat"] * 60
    from_docs = pipe.encode([nlp(text) for text in texts])
    nlp.to_disk(tmp_path / "pipe")
    reloaded = spacy.load(tmp_path / "pipe")
    reloaded_pipe = reloaded.get_pipe("siamese_similarity")
    assert pipe.reads_text and reloaded_pipe.reads_text
    reloaded.tokenizer = None  # never called: no doc is made
    assert reloaded_pipe.encode(texts, batch_size=7) == pytest.approx(from_docs, abs=1e-6)
    assert reloaded_pipe.encode([]).shape == (0, from_docs.shape[1])
    with pytest.raises(ValueError, match="batch_size"):
        reloaded_pipe.encode(texts, batch_size=0)
    nlp.max_length = 5  # a longer text goes through the pipeline, which refuses it as spaCy does
    with pytest.raises(ValueError, match="max_length"):
        pipe.encode(["the cat and the dog"])


def test_a_hashed_encoder_reads_docs():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("siamese_similarity", config=STATIC_CONFIG)
    nlp.initialize(lambda: pair_examples(nlp))
    assert not pipe.reads_text


def cnn_config(table, **encoder):
    return {
        "model": {
            "@architectures": "spacy-siamese.Siamese.v1",
            "encoder": {"@architectures": "spacy-siamese.TableCNNEncoder.v1", "table": str(table), "width": 6}
            | encoder,
            "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
        },
        "loss": {"@losses": "spacy-siamese.CoSENTLoss.v1", "scale": 40.0},
    }


CNN_PAIRS = [("the cat", "the cats", 1.0), ("the dog", "dogs", 0.9), ("the cat", "the dog barks", 0.1)]
CNN_TEXTS = ["the cat", "", "the dog barks", "zebra", "barks the dog", "the cats sat on the mat"]


@pytest.mark.parametrize("depth,window_size", [(1, 1), (2, 2)])
def test_the_table_cnn_starts_as_the_table_mean(tmp_path, depth, window_size):
    table = build_tiny_static(tmp_path / "m2v", dims=8)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("siamese_similarity", config=cnn_config(table, depth=depth, window_size=window_size))
    nlp.initialize(lambda: pair_examples(nlp, CNN_PAIRS))
    assert pipe.model.get_ref("encoder").get_dim("nO") == 8  # the table's width
    mean = table_mean(path=str(table))
    mean.initialize()
    expected = mean([nlp.make_doc(t) for t in CNN_TEXTS], is_train=False)[0]
    assert pipe.encode(CNN_TEXTS) == pytest.approx(expected, abs=1e-6)


def test_the_table_cnn_trains_sees_word_order_and_loads_without_the_table(tmp_path):
    table = build_tiny_static(tmp_path / "m2v", dims=8)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("siamese_similarity", config=cnn_config(table))
    examples = pair_examples(nlp, CNN_PAIRS)
    optimizer = nlp.initialize(lambda: examples)
    losses = [nlp.update(examples, sgd=optimizer)["siamese_similarity"] for _ in range(30)]
    assert losses[-1] < losses[0]
    a, b = nlp("the dog barks"), nlp("barks the dog")  # the same subwords in another order
    assert a.similarity(b) < 1.0 - 1e-4 and a.similarity(b) == pytest.approx(b.similarity(a), abs=1e-6)
    vectors = pipe.encode([nlp(text) for text in CNN_TEXTS])
    assert vectors[1] == pytest.approx(vectors[3], abs=1e-6)  # no known subword: one vector, the CNN's bias
    assert pipe.encode(["", "zebra"]) == pytest.approx(vectors[[1, 3]], abs=1e-6)  # a batch with no subword at all
    nlp.to_disk(tmp_path / "pipe")
    shutil.rmtree(table)
    reloaded = spacy.load(tmp_path / "pipe")
    reloaded_pipe = reloaded.get_pipe("siamese_similarity")
    assert reloaded_pipe.reads_text
    assert reloaded_pipe.encode(CNN_TEXTS, batch_size=2) == pytest.approx(vectors, abs=1e-6)
    assert reloaded("the cat").similarity(reloaded("the dog barks")) == pytest.approx(
        nlp("the cat").similarity(nlp("the dog barks")), abs=1e-6
    )


def test_table_cnn_settings_are_checked():
    for bad in [{"width": 0}, {"depth": 0}, {"window_size": -1}]:
        with pytest.raises(ValueError, match="TableCNNEncoder: need width >= 1"):
            build_table_cnn_encoder(table="unused", **bad)
