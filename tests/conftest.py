import importlib.util
import os
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Token
from spacy.util import load_config, load_model_from_config, registry, resolve_dot_names

from spacy_siamese import make_pair_example

CONFIGS = sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.cfg"))

PAIRS = [
    ("How do I learn Python fast?", "What is the quickest way to learn Python?", 1),
    ("How do I learn Python fast?", "Where can I buy a cheap used car?", 0),
    ("What is the meaning of love?", "How do you define love?", 1),
    ("What is the meaning of love?", "How tall is Mount Everest?", 0),
    ("How can I lose weight quickly?", "What is the fastest way to lose weight?", 1),
    ("How can I lose weight quickly?", "Which programming language should I learn first?", 0),
    ("Why is the sky blue?", "What makes the sky look blue?", 1),
    ("Why is the sky blue?", "How do I reset my router password?", 0),
    ("What are good books to read?", "Which books should everyone read?", 1),
    ("What are good books to read?", "How do airplanes stay in the air?", 0),
]

# Graded pairs (labels in [0, 1]): each sentence with a closer and a farther one.
GRADED = [
    ("A man is playing a guitar.", "A man plays the guitar.", 0.95),
    ("A man is playing a guitar.", "A woman is slicing an onion.", 0.0),
    ("A dog runs in the park.", "A dog is running on the grass.", 0.75),
    ("A dog runs in the park.", "A cat sleeps on the sofa.", 0.2),
    ("Two kids are swimming.", "Children are swimming in a pool.", 0.8),
    ("Two kids are swimming.", "A man is riding a horse.", 0.05),
    ("The woman is cooking dinner.", "A woman cooks a meal.", 0.9),
    ("The woman is cooking dinner.", "A woman is reading a book.", 0.35),
]

SMALL_MODEL = {
    "model": {
        "encoder": {
            "width": 32,
            "depth": 1,
            "rows": [500, 200, 200, 200],
            "include_static_vectors": False,
            "post_depth": 1,
        },
    }
}


class FakeTeacher:
    """A stand-in for a SentenceTransformer: a seeded random unit vector per distinct text."""

    def __init__(self):
        self.calls = 0

    def encode(self, texts, batch_size, normalize_embeddings, convert_to_numpy, show_progress_bar):
        self.calls += 1
        vectors = numpy.stack([numpy.random.default_rng(sum(map(ord, t))).normal(size=8) for t in texts])
        return vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)


def make_nlp(comparison=None, **cfg):
    nlp = spacy.blank("en")
    config = {"model": {"encoder": dict(SMALL_MODEL["model"]["encoder"])}, **cfg}
    if comparison is not None:
        config["model"]["comparison"] = comparison
    nlp.add_pipe("siamese_similarity", config=config)
    return nlp


def pair_examples(nlp, pairs=PAIRS):
    return [make_pair_example(nlp, a, b, y) for a, b, y in pairs]


def train(nlp, n_iter=40, pairs=PAIRS, seed=0):
    spacy.util.fix_random_seed(seed)
    examples = pair_examples(nlp, pairs)
    optimizer = nlp.initialize(lambda: examples)
    losses = {}
    for _ in range(n_iter):
        losses = nlp.update(examples, sgd=optimizer)
    return nlp, losses


def fine_tune(parent_bytes, seed, n_iter=10):
    """A copy of a pipeline of `make_nlp()` (as bytes) trained `n_iter` more steps with its own seed
    and pairs: pipelines trained further from one parent, as `average_pipelines` expects."""
    nlp = make_nlp()
    nlp.initialize(lambda: pair_examples(nlp))
    nlp.from_bytes(parent_bytes)
    spacy.util.fix_random_seed(seed)
    optimizer = nlp.resume_training()
    examples = pair_examples(nlp, PAIRS[seed % 4 :])
    for _ in range(n_iter):
        nlp.update(examples, sgd=optimizer, drop=0.2)
    return nlp


@pytest.fixture(scope="session")
def trained():
    """A small Cauchy model trained to fit PAIRS, plus its last loss."""
    return train(make_nlp(), n_iter=100)


@pytest.fixture(scope="session")
def nlp(trained):
    return trained[0]


def cauchy_reference(nlp, x, y) -> float:
    """The Cauchy similarity of two docs, spans or tokens, computed in float64 from their
    learned vectors and the predicting head's weights, 1 / (1 + sum_i softplus(v_i) (a_i - b_i)^2):
    an independent check of what the pipe and the hooks return."""
    from spacy_siamese.layers.heads import predicting_head

    pipe = nlp.get_pipe("siamese_similarity")
    head = predicting_head(pipe.comparison)
    assert head.name == "cauchy_similarity", head.name
    w = numpy.logaddexp(0.0, numpy.asarray(head.get_param("v"), dtype="f8"))
    a, b = (pipe.vector_of(t) if isinstance(t, Token) else t.vector for t in (x, y))  # token.vector is spaCy's
    d = numpy.asarray(a, dtype="f8") - numpy.asarray(b, dtype="f8")
    return float(1.0 / (1.0 + (w * d * d).sum()))


def exp_l1_reference(x, y) -> float:
    """exp(-||a - b||_1) of two docs' vectors, in float64."""
    return float(numpy.exp(-numpy.abs(numpy.asarray(x.vector, "f8") - numpy.asarray(y.vector, "f8")).sum()))


def set_random_vectors(nlp, words, width):
    """Give each of `words`, in order, a seeded random static vector of `width`; return `nlp`."""
    rng = numpy.random.default_rng(0)
    for word in words:
        nlp.vocab.set_vector(word, rng.normal(size=(width,)).astype("f"))
    return nlp


@pytest.fixture(scope="session")
def data_files(tmp_path_factory, trained):
    """Small inputs for every path a project config can ask for (`paths.*` overrides)."""
    root = tmp_path_factory.mktemp("configs")
    pairs = [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS]
    srsly.write_jsonl(root / "train.jsonl", pairs)
    srsly.write_jsonl(root / "dev.jsonl", pairs)
    texts = [text for a, b, _ in PAIRS for text in (a, b)]
    docs = [{"text": text, "labels": [f"topic{i % 3}"], "group": "", "id": str(i)} for i, text in enumerate(texts)]
    srsly.write_jsonl(root / "documents.jsonl", docs)
    trained[0].to_disk(root / "source")
    # the datasets of general.cfg's corpus, quora_silver.cfg's and graded_distilled.cfg's
    for dataset in ("quora", "stackexchange", "sts", "sick", "mrpc", "twitter_url", "quora_silver"):
        for part in ("train", "dev"):
            (root / "general" / dataset).mkdir(parents=True, exist_ok=True)
            srsly.write_jsonl(root / "general" / dataset / f"{part}.jsonl", pairs)
    for name in ("gold", "silver"):
        srsly.write_jsonl(root / "general" / f"{name}.jsonl", pairs)
    files = {
        "paths.train": str(root / "train.jsonl"),
        "paths.dev": str(root / "dev.jsonl"),
        "paths.collection": str(root / "documents.jsonl"),
        "paths.source": str(root / "source"),
        "paths.corpus": str(root / "general"),
    }
    if importlib.util.find_spec("model2vec") or os.environ.get("CI"):  # graded_distilled.cfg's table
        from .tiny_transformer import build_tiny_static

        # the real tables' width, which quora_static_matryoshka.cfg's cuts (up to 128 columns) need
        files["paths.table"] = str(build_tiny_static(root / "table", dims=256))
    return files


WORDS = sorted({w for a, b, _ in PAIRS for w in (a + " " + b).replace("?", " ?").split()})


def config_pipeline(path, data_files, n_updates: int = 0):
    """The pipeline of a project config, initialized (and trained `n_updates` times) on the
    config's own training corpus read from the small data files."""
    paths = load_config(path, interpolate=False)["paths"]
    overrides = {key: value for key, value in data_files.items() if paths.get(key.split(".")[1], "") is None}
    nlp = load_model_from_config(load_config(path, overrides=overrides), auto_fill=True, validate=True)
    set_random_vectors(nlp, WORDS, 8)
    filled = nlp.config.interpolate()
    training = registry.resolve(filled["training"], validate=True)
    (corpus,) = resolve_dot_names(filled, [training["train_corpus"]])
    examples = list(corpus(nlp))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(n_updates):
        nlp.update(examples, sgd=optimizer)
    return nlp
