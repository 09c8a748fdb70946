import itertools
import math

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese.component import PREDICT_TOKENS
from spacy_siamese.explain import EXACT_SHAPLEY_TOKENS, explain_pair, shapley_values, subset_scores, tweak_weights

from .cli.conftest import invoke
from .conftest import CONFIGS, PAIRS, config_pipeline, make_nlp, pair_examples, train

ENCODERS = {
    "tweak": {"@architectures": "spacy-siamese.TweakEncoder.v1", "width": 4096, "min_df": 1},
    "s2net": {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 8, "min_df": 1},
}


def _trained(kind: str, rescale: bool = False, calibrated: bool = False):
    nlp = spacy.blank("en")
    comparison = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": rescale}
    if calibrated:
        comparison = {"@architectures": "spacy-siamese.TrainCalibrated.v1", "comparison": comparison}
    config = {
        "model": {"@architectures": "spacy-siamese.Siamese.v1", "encoder": ENCODERS[kind], "comparison": comparison}
    }
    nlp.add_pipe("siamese_similarity", config=config)
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    return nlp


def check_complete(ex, nlp, a, b):
    """The explanation's score is doc.similarity, and each text's token values add up."""
    assert ex.score == pytest.approx(float(nlp(a).similarity(nlp(b))), abs=1e-6)
    assert [t.text for t in ex.tokens_a] == [t.text for t in nlp(a)]
    assert "".join(t.text + t.ws for t in ex.tokens_b) == nlp(b).text
    rest = ex.rest if ex.method == "exact" else 0.0
    # exact terms come from float32 vectors; Shapley values add up to float64 rounding, because the
    # reference is the very score they were computed from
    tolerance = 1e-5 if ex.method == "exact" else 1e-9
    for tokens, reference in ((ex.tokens_a, ex.reference_a), (ex.tokens_b, ex.reference_b)):
        assert sum(t.contribution for t in tokens) + rest == pytest.approx(ex.score - reference, abs=tolerance)


@pytest.fixture(scope="module")
def tweak_nlp():
    return _trained("tweak")


@pytest.mark.parametrize(
    "kind,rescale,calibrated",
    [("tweak", False, False), ("tweak", True, False), ("tweak", False, True), ("s2net", False, False)],
)
def test_exact_terms_sum_to_the_score(kind, rescale, calibrated, tweak_nlp):
    nlp = tweak_nlp if (kind, rescale, calibrated) == ("tweak", False, False) else _trained(kind, rescale, calibrated)
    for a, b, _ in PAIRS[:6] + [("learn python learn", "Python, learn!", 1), ("", "python", 0)]:
        ex = explain_pair(nlp, a, b)
        assert ex.method == "exact"
        total = ex.offset + sum(v for _, v in ex.terms) + ex.rest
        assert total == pytest.approx(ex.score, abs=1e-5)
        check_complete(ex, nlp, a, b)
        if kind == "tweak":
            shared = {t.lower_ for t in nlp(a) if not t.is_punct} & {t.lower_ for t in nlp(b) if not t.is_punct}
            assert {term for term, _ in ex.terms} == shared
            assert all(v >= 0 for _, v in ex.terms)
            assert abs(ex.rest) < 1e-6  # no two of these terms share a column at width 4096


def test_exact_tokens_share_their_term(tweak_nlp):
    ex = explain_pair(tweak_nlp, "learn python learn", "Python, learn!")
    by_term = dict(ex.terms)
    learn = [t.contribution for t in ex.tokens_a if t.text == "learn"]
    assert learn == pytest.approx([by_term["learn"] / 2] * 2)
    assert [t.contribution for t in ex.tokens_b if t.text == ","] == [0.0]


def test_tweak_weights_and_errors(tweak_nlp):
    weights = tweak_weights(tweak_nlp)
    assert list(weights)[:3] == ["bias", "log_tf", "log_df"]
    cauchy = make_nlp()
    with pytest.raises(ValueError, match="method='shapley'"):
        explain_pair(cauchy, "a", "b", method="exact")
    with pytest.raises(ValueError, match="method must be one of"):
        explain_pair(tweak_nlp, "a", "b", method="gradients")
    with pytest.raises(ValueError, match="feature weights exist only"):
        tweak_weights(cauchy)


def test_a_pipe_of_another_name_is_named_as_in_search(tweak_nlp):
    """`pipe_name`, the keyword of `find_duplicates`, `SimilarityIndex` and the evaluations."""
    nlp = tweak_nlp
    nlp.rename_pipe("siamese_similarity", "questions")
    try:
        assert tweak_weights(nlp, pipe_name="questions") == tweak_weights(nlp, "questions")
        assert explain_pair(nlp, "a b", "a c", pipe_name="questions").score == nlp("a b").similarity(nlp("a c"))
        with pytest.raises(ValueError, match="no 'siamese_similarity' component"):
            explain_pair(nlp, "a b", "a c")
    finally:
        nlp.rename_pipe("questions", "siamese_similarity")


@pytest.mark.parametrize("path", CONFIGS, ids=[c.name for c in CONFIGS])
def test_every_shipped_config_explains(path, data_files, tmp_path):
    nlp = config_pipeline(path, data_files)
    for a, b, _ in PAIRS[:2]:
        ex = explain_pair(nlp, a, b)
        check_complete(ex, nlp, a, b)
        assert ex.method == ("exact" if ex.kind in ("tweak", "s2net") else "shapley")
        if ex.kind == "hybrid":  # the lexical part's exact terms: only terms found in both texts
            assert {term for term, _ in ex.terms} <= {t.lower_ for t in nlp(a)} & {t.lower_ for t in nlp(b)}
    nlp.to_disk(tmp_path / "model")
    result = invoke("explain", tmp_path / "model", PAIRS[0][0], PAIRS[0][1])
    assert result.exit_code == 0, result.output
    assert "text a: How[" in result.output and "score without text b:" in result.output


def test_hybrid_lexical_terms_sum_to_its_part(data_files):
    nlp = config_pipeline(CONFIGS[[c.name for c in CONFIGS].index("quora_hybrid.cfg")], data_files)
    pipe = nlp.get_pipe("siamese_similarity")
    head = pipe.comparison
    a, b = "How do I learn Python fast?", "learn python quickly"
    ex = explain_pair(nlp, a, b)
    va, vb = pipe.vector_of(nlp(a)), pipe.vector_of(nlp(b))
    width = head.attrs["lexical_width"]
    part = head.attrs["weight"] * min(max(float(va[-width:] @ vb[-width:]), 0.0), 1.0)
    assert sum(v for _, v in ex.terms) + ex.rest == pytest.approx(part, abs=1e-5)
    assert {term for term, _ in ex.terms} == {"learn", "python"}


@pytest.mark.parametrize("method", ["shapley", "occlusion"])
def test_edges(nlp, method):
    """An empty text has nothing to explain, a whitespace-only one is a token like any other;
    long texts are sampled and still add up; repeated calls agree (seeded)."""
    long = " ".join(["how do I learn python fast"] * 6)
    for a, b in [("", "learn python"), ("   ", "learn python"), (long, "learn python"), ("python", "")]:
        ex = explain_pair(nlp, a, b, method=method, samples=8)
        assert len(ex.tokens_a) == len(nlp(a))
        if method == "shapley":
            check_complete(ex, nlp, a, b)
        if not a:
            assert ex.tokens_a == [] and ex.reference_a == ex.score
        assert ex.to_dict() == explain_pair(nlp, a, b, method=method, samples=8).to_dict()
    assert explain_pair(nlp, long, "learn python", samples=8).samples == 8


def test_subset_scores_full_mask_is_the_similarity(nlp):
    a, b = nlp(PAIRS[0][0]), nlp(PAIRS[0][1])
    masks = numpy.ones((2, len(a)), dtype=bool)
    masks[1, 0] = False
    scores = subset_scores(nlp.get_pipe("siamese_similarity"), a, b, masks)
    assert scores[0] == pytest.approx(a.similarity(b), abs=0)
    assert scores[1] == pytest.approx(a[1:].similarity(b), abs=1e-6)  # a shorter text is scored as a span


def test_subsets_of_a_long_text_are_encoded_in_batches_of_bounded_tokens(nlp, monkeypatch):
    pipe = nlp.get_pipe("siamese_similarity")
    a, b = nlp(" ".join(["learn python quickly"] * 400)), nlp(PAIRS[0][1])
    masks = numpy.random.default_rng(0).random((300, len(a))) < 0.9
    tokens = []
    encode = pipe._encode
    monkeypatch.setattr(pipe, "_encode", lambda docs: tokens.append(sum(map(len, docs))) or encode(docs))
    scores = subset_scores(pipe, a, b, masks)
    assert len(tokens) > 1 and max(tokens) <= PREDICT_TOKENS
    monkeypatch.setattr(pipe, "_encode", encode)
    for row in (0, 150, 299):  # each subset scores as it does alone
        assert scores[row] == pytest.approx(subset_scores(pipe, a, b, masks[row : row + 1])[0], abs=1e-6)


def brute_force_shapley(table, n):
    """The definition: the mean marginal gain of each player over all n! orders."""
    phi = numpy.zeros(n)
    orders = list(itertools.permutations(range(n)))
    for order in orders:
        mask = 0
        for player in order:
            phi[player] += table[mask | (1 << player)] - table[mask]
            mask |= 1 << player
    return phi / len(orders)


def table_value(table, n):
    return lambda masks: numpy.asarray([table[int((m * (1 << numpy.arange(n))).sum())] for m in masks])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.lists(st.floats(-5, 5), min_size=2**n, max_size=2**n)))
def test_exact_shapley_matches_the_definition(table):
    n = int(math.log2(len(table)))
    phi = shapley_values(table_value(table, n), n)
    assert phi == pytest.approx(brute_force_shapley(table, n), abs=1e-9)
    assert phi.sum() == pytest.approx(table[-1] - table[0], abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(EXACT_SHAPLEY_TOKENS + 1, 20).flatmap(lambda n: st.lists(st.floats(-3, 3), min_size=n, max_size=n)),
    st.integers(1, 9),
    st.integers(0, 2**16),
)
def test_sampled_shapley_adds_up(weights, samples, seed):
    """Sampled permutations: the values sum exactly; an additive game gives each player its weight."""
    n = len(weights)
    w = numpy.asarray(weights)

    def additive(masks):
        return masks @ w

    def interacting(masks):
        return (masks @ w) ** 2

    assert shapley_values(additive, n, samples=samples, seed=seed) == pytest.approx(w, abs=1e-9)
    phi = shapley_values(interacting, n, samples=samples, seed=seed)
    assert phi.sum() == pytest.approx(w.sum() ** 2, abs=1e-6)


def faithfulness(nlp, method: str, k: int):
    """(mean score fall when deleting each text's k top tokens, the mean fall over every
    k-token deletion: what random deletion falls in expectation), over both texts of PAIRS."""
    pipe = nlp.get_pipe("siamese_similarity")
    top, rand = [], []
    for a, b, _ in PAIRS:
        ex = explain_pair(nlp, a, b, method=method)
        for doc, other, tokens in ((nlp(a), nlp(b), ex.tokens_a), (nlp(b), nlp(a), ex.tokens_b)):
            values = numpy.asarray([t.contribution for t in tokens])
            subsets = list(itertools.combinations(range(len(doc)), k))
            masks = numpy.ones((len(subsets) + 1, len(doc)), dtype=bool)
            for row, subset in enumerate(subsets):
                masks[row, list(subset)] = False
            masks[-1, numpy.argsort(-values, kind="stable")[:k]] = False
            falls = ex.score - subset_scores(pipe, doc, other, masks)
            top.append(falls[-1])
            rand.append(falls[:-1].mean())
    return float(numpy.mean(top)), float(numpy.mean(rand))


FAMILIES = {
    "lstm_cauchy": (
        {
            "@architectures": "spacy-siamese.LSTMEncoder.v1",
            "width": 32,
            "hidden_width": 32,
            "rows": [500, 200, 200, 200],
            "include_static_vectors": False,
        },
        {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
    ),
    "dae_cosine": (
        {"@architectures": "spacy-siamese.DAEEncoder.v1", "width": 16, "min_df": 1},
        {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    ),
}


@pytest.fixture(scope="module")
def family_nlps(nlp):
    """The small MWE CNN Cauchy pipeline and an LSTM and a DAE one, each trained to fit PAIRS."""
    out = {"mwe_cauchy": nlp}
    for name, (encoder, comparison) in FAMILIES.items():
        family = spacy.blank("en")
        config = {"@architectures": "spacy-siamese.Siamese.v1", "encoder": encoder, "comparison": comparison}
        family.add_pipe("siamese_similarity", config={"model": config})
        out[name] = train(family, n_iter=100)[0]
    return out


@pytest.mark.parametrize("family", ["mwe_cauchy", *FAMILIES])
@pytest.mark.parametrize("k", [1, 2])
def test_deleting_top_tokens_moves_the_score_more_than_random(family, k, family_nlps):
    top, rand = faithfulness(family_nlps[family], "shapley", k)
    assert top > max(1.2 * rand, rand + 0.02)


@pytest.mark.parametrize("method,samples", [("shapley", 2), ("occlusion", 1)])
def test_a_long_text_is_explained_from_blocks_of_subsets(nlp, method, samples, monkeypatch):
    """The subsets of a long text are built and scored MASK_ROWS at a time: memory grows with
    its length, not its square (as the README says), and the values still add up."""
    import spacy_siamese.explain as explain

    rows = []
    scores = explain.subset_scores

    def recording(pipe, doc, other, masks):
        rows.append(len(masks))
        return scores(pipe, doc, other, masks)

    monkeypatch.setattr(explain, "subset_scores", recording)
    a, b = " ".join(["learn python quickly"] * 200), PAIRS[0][1]
    ex = explain_pair(nlp, a, b, method=method, samples=samples)
    assert len(ex.tokens_a) == 600 and max(rows) <= explain.MASK_ROWS < 600
    if method == "shapley":
        check_complete(ex, nlp, a, b)


@pytest.mark.parametrize("a", ["how do I learn python", "how do I learn python " * 4])
def test_shapley_values_add_up_to_the_reference_they_were_computed_from(nlp, a, monkeypatch):
    """A pipe's float32 score moves a little with what a doc is batched with; the reference is
    the empty text's score from the values' own batches, so they still add up exactly (exact
    and sampled Shapley values)."""
    pipe = nlp.get_pipe("siamese_similarity")
    encode = pipe._encode
    monkeypatch.setattr(pipe, "_encode", lambda docs: encode(docs) + 1e-3 * len(docs))  # exaggerated
    b = "what is the best way to learn python"
    assert (len(nlp(a)) <= EXACT_SHAPLEY_TOKENS) == (a == "how do I learn python")
    check_complete(explain_pair(nlp, a, b, method="shapley"), nlp, a, b)


def test_a_deadline_scales_the_sampled_permutations_down(nlp, monkeypatch):
    """With a deadline, each long text gets the permutations scored in its share of the time (a
    clock that moves a second a block of subsets here), and the values still add up; a text of
    which not one is scored in time raises ExplainTimeout."""
    import spacy_siamese.explain as explain

    clock = [0.0]
    scores = explain.subset_scores

    def slow(pipe, doc, other, masks):
        clock[0] += 1.0
        return scores(pipe, doc, other, masks)

    monkeypatch.setattr(explain, "subset_scores", slow)
    monkeypatch.setattr(explain.time, "monotonic", lambda: clock[0])
    a, b = " ".join(["learn python quickly"] * 30), " ".join(["what is the best way to learn python"] * 10)
    ex = explain_pair(nlp, a, b, method="shapley", deadline=40.0)
    assert 1 <= ex.samples < explain.SAMPLES and clock[0] < 40.0 + 2  # one block past the deadline at most
    check_complete(ex, nlp, a, b)
    clock[0] = 0.0
    with pytest.raises(explain.ExplainTimeout, match="not one of 32 Shapley permutations of a text of 90 tokens"):
        explain_pair(nlp, a, b, method="shapley", deadline=0.5)
