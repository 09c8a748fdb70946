import itertools

import pytest

from spacy_siamese.pairwise import vector_similarity_matrix

from ..conftest import PAIRS, SMALL_MODEL, make_nlp, train

CAUCHY = None
COSINE = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True}
COSINE_RAW = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": False}
FEATURE = {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 16}
CALIBRATED = {
    "@architectures": "spacy-siamese.WithAuxiliary.v1",
    "main": {
        "@architectures": "spacy-siamese.TrainCalibrated.v1",
        "comparison": {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
    },
    "auxiliary": FEATURE,
}
EXP_L1 = {"@architectures": "spacy-siamese.ExpL1Similarity.v1", "norm": "l1", "scale": 0.1}
EXP_L2 = {"@architectures": "spacy-siamese.ExpL1Similarity.v1", "norm": "l2", "scale": 0.5}
IN_BATCH = {"@architectures": "spacy-siamese.WithInBatchScores.v1", "comparison": CALIBRATED}
LEXICAL_WIDTH = 64


def hybrid(inner):
    return {
        "@architectures": "spacy-siamese.HybridSimilarity.v1",
        "comparison": inner,
        "lexical_width": LEXICAL_WIDTH,
        "weight": 0.3,
    }


HYBRID_CAUCHY = hybrid({"@architectures": "spacy-siamese.CauchySimilarity.v1"})
HYBRID_COSINE = hybrid(COSINE)
COMPARISONS = {
    "cauchy": CAUCHY,
    "cosine": COSINE,
    "cosine_raw": COSINE_RAW,
    "feature": FEATURE,
    "calibrated": CALIBRATED,
    "exp_l1": EXP_L1,
    "exp_l2": EXP_L2,
    "in_batch": IN_BATCH,
    "hybrid_cauchy": HYBRID_CAUCHY,
    "hybrid_cosine": HYBRID_COSINE,
}

SUBJECTS = ["Python", "French", "guitar", "chess", "cooking", "math", "swimming", "drawing"]
FRAMES = [
    "How do I learn {} fast?",
    "What is the best way to learn {}?",
    "Is {} hard to learn?",
    "Why do people like {}?",
    "Where can I find {} lessons?",
]
# Texts with exact duplicates (ties) and a doc-free empty string.
CORPUS = [f.format(s) for f, s in itertools.product(FRAMES, SUBJECTS)]
CORPUS += [p[0] for p in PAIRS] + [p[1] for p in PAIRS] + [CORPUS[0], CORPUS[3], ""]


@pytest.fixture(scope="session")
def models():
    """One small trained pipeline per comparison."""
    # the in-batch wrapper trains with its own loss: initialized only, it predicts like any other
    return {name: train(build_nlp(name), n_iter=0 if name == "in_batch" else 15)[0] for name in COMPARISONS}


def build_nlp(name):
    """An untrained pipeline with the named comparison (hybrids with a HybridEncoder)."""
    if not name.startswith("hybrid"):
        return make_nlp(COMPARISONS[name])
    return hybrid_nlp(COMPARISONS[name])


def hybrid_nlp(comparison):
    """An untrained pipeline with a HybridEncoder and the given HybridSimilarity comparison."""
    encoder = {
        "@architectures": "spacy-siamese.HybridEncoder.v1",
        "encoder": {"@architectures": "spacy-siamese.MWEEncoder.v2", **SMALL_MODEL["model"]["encoder"]},
        "lexical_width": LEXICAL_WIDTH,
        "min_df": 1,
    }
    return make_nlp(comparison, model={"encoder": encoder})


@pytest.fixture(params=sorted(COMPARISONS))
def model(request, models):
    return request.param, models[request.param]


def exact_matrix(nlp, docs_a, docs_b=None):
    """Every pair's `doc.similarity`, exactly: scored pair by pair with the pipe's `compare`
    (`similarity_matrix` may round otherwise)."""
    pipe = nlp.get_pipe("siamese_similarity")
    vectors_b = None if docs_b is None else pipe.encode(docs_b)
    return vector_similarity_matrix(pipe.compare, pipe.encode(docs_a), vectors_b)
