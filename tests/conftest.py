import pytest
import spacy

from spacy_siamese import make_pair_example

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


@pytest.fixture(scope="session")
def trained():
    """A small Cauchy model trained to fit PAIRS, plus its last loss."""
    return train(make_nlp(), n_iter=100)


@pytest.fixture(scope="session")
def nlp(trained):
    return trained[0]
