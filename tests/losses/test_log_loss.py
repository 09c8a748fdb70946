import inspect
from pathlib import Path

import numpy
import pytest
from spacy.util import load_config, registry

from spacy_siamese.losses import PairLogLoss, make_log_loss, make_log_loss_v1

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TRUTHS = numpy.array([0, 1, 1, 0, 1, 0], dtype="f8")
V1_PIPELINE = Path(__file__).parent.parent / "data" / "v1_pipeline"


def reference_log_loss(scores, truths, eps=1e-5, label_smoothing=0.0, distill=0.0):
    """The loss by hand, one score at a time."""
    n, k = scores.shape
    total = 0.0
    for i in range(n):
        for c in range(k):
            p = min(max(scores[i, c], eps), 1 - eps)
            t = truths[i] * (1 - label_smoothing) + label_smoothing / 2
            if c == 0 and k > 1 and distill > 0:
                t = (1 - distill) * t + distill * min(max(scores[i, 1], eps), 1 - eps)
            total -= t * numpy.log(p) + (1 - t) * numpy.log(1 - p)
    return total / n


def original_v1(scores, truths, eps=1e-5):
    """LogLoss.v1 as first registered: one score column, no smoothing, no distillation."""
    p = numpy.clip(scores[:, 0], eps, 1.0 - eps)
    y = numpy.asarray(truths, dtype=p.dtype)
    n = max(len(y), 1)
    loss = -(y * numpy.log(p) + (1 - y) * numpy.log(1 - p)).sum() / n
    d = (p - y) / (p * (1 - p)) / n
    return d[:, None].astype(scores.dtype), float(loss)


@pytest.mark.parametrize(
    "settings", [{}, {"label_smoothing": 0.1}, {"distill": 0.3}, {"eps": 1e-3, "label_smoothing": 0.2, "distill": 0.5}]
)
@pytest.mark.parametrize("n_heads", [1, 2])
def test_loss_value_and_gradient(settings, n_heads):
    loss_fn = PairLogLoss(**settings)
    scores = rng.uniform(0.05, 0.95, size=(6, n_heads))
    d, loss = loss_fn(scores, TRUTHS)
    assert loss == pytest.approx(reference_log_loss(scores, TRUTHS, **settings), rel=1e-12)
    if not settings.get("distill") or n_heads == 1:  # distillation holds the target constant
        numeric = numeric_grad(lambda: loss_fn(scores, TRUTHS)[1], scores, 1e-7)
        assert_grad_close(d, numeric, rtol=1e-4)


def test_log_loss_value():
    scores = numpy.array([[0.9], [0.2]])
    _, loss = PairLogLoss()(scores, numpy.array([1.0, 0.0]))
    assert loss == pytest.approx(-(numpy.log(0.9) + numpy.log(0.8)) / 2)


def test_log_loss_is_finite_at_the_edges():
    scores = numpy.array([[1.0], [0.0]], dtype="f")
    d, loss = PairLogLoss()(scores, numpy.array([0.0, 1.0], dtype="f"))
    assert numpy.isfinite(loss) and numpy.all(numpy.isfinite(d))
    assert loss == pytest.approx(-numpy.log(1e-5), rel=1e-3)  # both scores clipped to eps from the wrong end


def test_loss_falls_as_scores_move_toward_the_labels():
    scores = rng.uniform(0.05, 0.95, size=(6, 2))
    losses = [PairLogLoss()(scores + t * (TRUTHS[:, None] - scores), TRUTHS)[1] for t in (0.0, 0.3, 0.6, 0.9)]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0]


def test_label_smoothing_moves_the_optimum_off_0_and_1():
    d, _ = PairLogLoss(label_smoothing=0.1)(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    numpy.testing.assert_allclose(d, 0.0, atol=1e-12)
    d, _ = PairLogLoss()(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    assert d[0, 0] > 0 and d[1, 0] < 0
    with pytest.raises(ValueError, match="label_smoothing"):
        PairLogLoss(label_smoothing=1.0)


@pytest.mark.parametrize("eps", [0.0, -1.0, 0.5, 0.6])
def test_log_loss_refuses_an_eps_outside_0_half(eps):
    """eps 0 let a score of 0 or 1 make the loss infinite; eps >= 0.5 silently clipped every score to one value."""
    with pytest.raises(ValueError, match=f"LogLoss: eps must be in \\(0, 0.5\\), got {eps}"):
        PairLogLoss(eps=eps)


def test_distill_targets_the_main_head_at_the_auxiliary_score():
    scores = rng.uniform(0.05, 0.95, size=(6, 2))
    d, _ = PairLogLoss(distill=0.5)(scores, TRUTHS)
    d_plain, _ = PairLogLoss()(scores, TRUTHS)
    numpy.testing.assert_allclose(d[:, 1], d_plain[:, 1])  # the auxiliary head learns from the labels
    target = 0.5 * TRUTHS + 0.5 * scores[:, 1]  # held constant: no gradient into the auxiliary head
    main_scores = scores[:, :1].copy()
    main = lambda: PairLogLoss()(main_scores, target)[1]  # noqa: E731
    assert_grad_close(d[:, :1], numeric_grad(main, main_scores, 1e-7), rtol=1e-4)
    with pytest.raises(ValueError, match="distill"):
        PairLogLoss(distill=1.5)


@pytest.mark.parametrize("eps", [1e-5, 1e-3])
def test_log_loss_v1_is_the_original_loss(eps):
    assert registry.losses.get("spacy-siamese.LogLoss.v1") is make_log_loss_v1
    scores = numpy.vstack([rng.uniform(0.05, 0.95, size=(6, 1)), [[0.0], [1.0]]]).astype("f")
    truths = numpy.concatenate([TRUTHS, [1.0, 1.0]])
    d, loss = make_log_loss_v1(eps=eps)(scores, truths)
    d_original, loss_original = original_v1(scores, truths, eps=eps)
    assert d.dtype == d_original.dtype and d.shape == d_original.shape
    numpy.testing.assert_allclose(d, d_original, rtol=1e-6)
    assert loss == pytest.approx(loss_original, rel=1e-6)


@pytest.mark.parametrize("n_heads", [1, 2])
def test_log_loss_v2_without_smoothing_or_distill_is_v1_on_one_head(n_heads):
    scores = rng.uniform(0.05, 0.95, size=(6, n_heads))
    d1, loss1 = make_log_loss_v1(eps=1e-4)(scores, TRUTHS)
    d2, loss2 = make_log_loss(eps=1e-4, label_smoothing=0.0, distill=0.0)(scores, TRUTHS)
    numpy.testing.assert_allclose(d1[:, 0], d2[:, 0], rtol=1e-12)
    assert d1.shape == (6, 1)
    assert loss1 == pytest.approx(reference_log_loss(scores[:, :1], TRUTHS, eps=1e-4), rel=1e-12)
    if n_heads == 1:
        assert loss1 == pytest.approx(loss2, rel=1e-12)


def test_log_loss_v1_has_its_original_signature_and_saved_pipelines_resolve():
    params = inspect.signature(make_log_loss_v1).parameters
    assert list(params) == ["eps"] and params["eps"].kind == params["eps"].KEYWORD_ONLY
    with pytest.raises(TypeError):
        make_log_loss_v1(eps=1e-5, label_smoothing=0.1)  # type: ignore[call-arg]
    section = load_config(V1_PIPELINE / "config.cfg")["components"]["siamese_similarity"]["loss"]
    assert section["@losses"] == "spacy-siamese.LogLoss.v1"
    loss_fn = registry.resolve({"loss": section}, validate=True)["loss"]
    scores = rng.uniform(0.05, 0.95, size=(6, 1))
    assert loss_fn(scores, TRUTHS)[1] == pytest.approx(original_v1(scores, TRUTHS)[1], rel=1e-12)


@pytest.mark.parametrize("make,name", [(PairLogLoss, "LogLoss"), (lambda: make_log_loss_v1(), "LogLoss.v1")])
def test_bad_labels_are_named(make, name):
    """A nan label made the loss nan, a label of 2 a negative loss, and one label for three
    pairs was silently given to all three."""
    scores = rng.uniform(0.05, 0.95, size=(3, 1))
    with pytest.raises(ValueError, match=f"{name}: a pair label must be a finite number in \\[0, 1\\], got nan"):
        make()(scores, numpy.array([1.0, numpy.nan, 0.0]))
    with pytest.raises(ValueError, match=f"{name}: .* got 2.0 \\(label 2\\)"):
        make()(scores, numpy.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match=f"{name}: need one label for each of the 3 pairs"):
        make()(scores, numpy.array([1.0]))


def test_log_loss_v1_gradient():
    loss_fn = make_log_loss_v1()
    scores = rng.uniform(0.05, 0.95, size=(6, 1))
    d, _ = loss_fn(scores, TRUTHS)
    assert_grad_close(d, numeric_grad(lambda: loss_fn(scores, TRUTHS)[1], scores, 1e-7), rtol=1e-4)
