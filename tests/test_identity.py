"""The model id of a siamese_similarity pipe: renewed when the weights change (updates,
use_params), checked when loading; the thresholds: `score` stores none, `tune_thresholds` (callback) does."""

import io
import re
import subprocess
import sys

import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.training.initialize import init_nlp
from spacy.training.loop import create_evaluation_callback
from spacy.training.loop import train as spacy_train
from thinc.api import Adam

from spacy_siamese import hooks
from spacy_siamese.hooks import pipe_for
from spacy_siamese.metrics import best_threshold, pair_metrics, precision_threshold
from spacy_siamese.tuning import tuned_thresholds

from .conftest import SMALL_MODEL, cauchy_reference, make_nlp, pair_examples, set_random_vectors, train
from .test_component import TEXTS

MIXING = "two different siamese_similarity models"


# -- the model id follows the weights --------------------------------------------


def test_fine_tuning_a_loaded_pipe_gives_it_a_new_identity(nlp, tmp_path):
    nlp.to_disk(tmp_path / "m")
    tuned = spacy.load(tmp_path / "m")
    pipe = tuned.get_pipe("siamese_similarity")
    before = tuned(TEXTS[0])
    assert pipe.model_id == nlp.get_pipe("siamese_similarity").model_id
    tuned.update(pair_examples(tuned), sgd=tuned.resume_training())
    assert pipe.model_id != nlp.get_pipe("siamese_similarity").model_id
    with pytest.raises(ValueError, match="two different siamese_similarity models"):
        before.similarity(tuned(TEXTS[1]))


def test_checkpoints_of_one_run_have_their_own_ids(tmp_path):
    """model-best and model-last of one run: different weights, different ids; docs of the
    first keep their similarity when the second is loaded, and the two never mix."""
    nlp, _ = train(make_nlp(), n_iter=20)
    examples = pair_examples(nlp)
    nlp.to_disk(tmp_path / "best")
    optimizer = nlp.create_optimizer()
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "last")
    best = spacy.load(tmp_path / "best")
    a, b = best(TEXTS[0]), best(TEXTS[10])
    before = a.similarity(b)
    last = spacy.load(tmp_path / "last")
    assert best.get_pipe("siamese_similarity").model_id != last.get_pipe("siamese_similarity").model_id
    assert a.similarity(b) == before
    with pytest.raises(ValueError, match=MIXING):
        a.similarity(last(TEXTS[10]))
    with pytest.raises(ValueError, match=MIXING):
        last(TEXTS[10]).similarity(a)


def test_same_weights_saved_twice_keep_one_id(tmp_path):
    nlp, _ = train(make_nlp(), n_iter=5)
    nlp.to_disk(tmp_path / "a")
    nlp.to_disk(tmp_path / "b")
    ids = {spacy.load(tmp_path / name).get_pipe("siamese_similarity").model_id for name in "ab"}
    assert len(ids) == 1


def test_doc_made_before_an_update_is_not_read_through_the_new_weights():
    nlp, _ = train(make_nlp(), n_iter=5)
    doc = nlp(TEXTS[0])
    nlp.update(pair_examples(nlp), sgd=nlp.create_optimizer())
    with pytest.raises((ValueError, RuntimeError), match=r"two different|not loaded"):
        doc.similarity(nlp(TEXTS[10]))


def test_model_id_is_renewed_with_the_weights_and_the_registry_does_not_grow():
    nlp, _ = train(make_nlp(), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = pair_examples(nlp)
    optimizer = nlp.create_optimizer()
    nlp(TEXTS[0])
    size = len(hooks._PIPES)
    seen = []
    for _ in range(10):
        for _ in range(3):
            nlp.update(examples, sgd=optimizer)
        nlp(TEXTS[0])
        seen.append(pipe.model_id)
    assert len(set(seen)) == 10
    assert len(hooks._PIPES) <= size
    assert pipe_for(seen[-1]) is pipe
    with pytest.raises(RuntimeError, match="not loaded"):
        pipe_for(seen[0])


def test_model_not_loaded_in_process():
    with pytest.raises(RuntimeError, match="not loaded in this process"):
        pipe_for("no-such-model-id")


def test_averaged_weights_get_their_own_id():
    nlp, _ = train(make_nlp(), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    optimizer = Adam(0.001, use_averages=True)
    for _ in range(3):
        nlp.update(pair_examples(nlp), sgd=optimizer)
    doc = nlp(TEXTS[0])
    outside = pipe.model_id
    with nlp.use_params(optimizer.averages):
        inside = pipe.model_id
        averaged = nlp(TEXTS[10])
        assert inside != outside
        with pytest.raises(ValueError, match=MIXING):
            doc.similarity(averaged)
    assert pipe.model_id == outside
    assert pipe_for(outside) is pipe
    other = nlp(TEXTS[10])
    assert doc.similarity(other) == pytest.approx(cauchy_reference(nlp, doc, other), rel=1e-5)


# -- loading checks -----------------------------------------------------------------


def test_corrupt_model_directory(nlp, tmp_path):
    path = tmp_path / "model"
    nlp.to_disk(path)
    (path / "siamese_similarity" / "model").write_bytes(b"this is not a model")
    with pytest.raises(ValueError, match="Could not load the 'siamese_similarity' pipe"):
        spacy.load(path)


@pytest.mark.parametrize(
    "field,value",
    [
        ("threshold", 5),
        ("threshold", "high"),
        ("threshold", None),
        ("threshold", True),
        ("on_unknown", "explode"),
        ("tune_threshold", "yes"),
        ("model_id", 5),
        ("model_id", ""),
    ],
)
def test_load_rejects_bad_saved_settings(nlp, tmp_path, field, value):
    path = tmp_path / "model"
    nlp.to_disk(path)
    cfg_path = path / "siamese_similarity" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg[field] = value
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError) as error:
        spacy.load(path)
    assert str(cfg_path) in str(error.value) and f"'{field}'" in str(error.value)


COSINE = {"@architectures": "spacy-siamese.CosineSimilarity.v1"}


@pytest.mark.parametrize(
    "override,message",
    [
        ({"comparison": COSINE}, "'cauchy_similarity' there, 'cosine_similarity' here"),  # as many layers
        ({"encoder": {"width": 16}}, "another architecture or other sizes"),
    ],
)
def test_loading_into_another_architecture_is_refused(nlp, tmp_path, override, message):
    """A pipe saved with one config and loaded with another (spacy.load with config overrides,
    nlp.from_disk into another pipeline) is refused, not loaded into the wrong layers."""
    nlp.to_disk(tmp_path / "model")
    config = {"components": {"siamese_similarity": {"model": override}}}
    with pytest.raises(ValueError, match=message) as error:
        spacy.load(tmp_path / "model", config=config)
    assert str(tmp_path / "model" / "siamese_similarity") in str(error.value)
    assert "interrupted" not in str(error.value)  # the directory is fine
    data = nlp.get_pipe("siamese_similarity").to_bytes()
    with pytest.raises(ValueError, match="'cauchy_similarity' there, 'cosine_similarity' here"):
        make_nlp(comparison=COSINE).get_pipe("siamese_similarity").from_bytes(data)


def test_a_pipe_saved_untrained_is_reported_as_such_on_loading(tmp_path):
    make_nlp().to_disk(tmp_path / "model")  # saving works; the pipe has no weights worth loading
    with pytest.raises(ValueError, match="saved before it was initialized. Train it"):
        spacy.load(tmp_path / "model")


def test_missing_cfg_is_reported_as_missing(nlp, tmp_path):
    path = tmp_path / "model"
    nlp.to_disk(path)
    (path / "siamese_similarity" / "cfg").unlink()
    with pytest.raises(ValueError, match=r"cfg.*missing"):
        spacy.load(path)


@pytest.mark.parametrize(
    "part,damage",
    [
        ("model", lambda data: b""),
        ("model", lambda data: data[: len(data) // 2]),  # truncated
        ("model", lambda data: b"\x00garbage" * 10),
        ("cfg", lambda data: b"{not json"),
        ("cfg", lambda data: b"[1, 2]"),
    ],
)
def test_a_damaged_file_is_named_with_what_to_do(nlp, tmp_path, part, damage):
    path = tmp_path / "model"
    nlp.to_disk(path)
    damaged = path / "siamese_similarity" / part
    damaged.write_bytes(damage(damaged.read_bytes()))
    with pytest.raises(ValueError) as error:
        spacy.load(path)
    message = str(error.value)
    assert f"from {damaged} (" in message and "interrupted" in message


@pytest.mark.parametrize("part,damage", [("model", b"\x93\x01"), ("cfg", b"{not json")])
def test_a_pipe_stays_as_it_was_after_a_damaged_file(nlp, tmp_path, part, damage):
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    pipe = loaded.get_pipe("siamese_similarity")
    cfg, weights, score = dict(pipe.cfg), pipe.model.to_bytes(), loaded(TEXTS[0]).similarity(loaded(TEXTS[10]))
    (tmp_path / "m" / "siamese_similarity" / part).write_bytes(damage)
    with pytest.raises(ValueError, match=f"from {re.escape(str(tmp_path / 'm' / 'siamese_similarity' / part))} "):
        pipe.from_disk(tmp_path / "m" / "siamese_similarity", exclude=["vocab"])
    assert pipe.cfg == cfg and pipe.model.to_bytes() == weights
    assert loaded(TEXTS[0]).similarity(loaded(TEXTS[10])) == score


def unloadable_pipes():
    """(what, pipe) of pipes that cannot be loaded into the trained test pipe; each has other
    settings and a vocab with word vectors, so that any part of them that is taken shows."""
    width_16 = {"encoder": {**SMALL_MODEL["model"]["encoder"], "width": 16}}
    cases = {
        "another comparison": make_nlp(comparison=COSINE),  # as many layers: Thinc loads it all
        "other sizes": make_nlp(model=width_16),  # Thinc stops half way
        "a bad setting": make_nlp(),  # loads in full, then the setting is refused
        "damaged weights": make_nlp(),
    }
    return [(what, other_pipe(nlp, 2.0 if what == "a bad setting" else 0.25)) for what, nlp in cases.items()]


def other_pipe(nlp, threshold):
    """The initialized pipe of `nlp`, with word vectors and `threshold`."""
    set_random_vectors(nlp, ["python", "love"], 8)
    nlp.initialize(lambda: pair_examples(nlp))
    pipe = nlp.get_pipe("siamese_similarity")
    pipe.cfg["threshold"] = threshold
    return pipe


def test_a_load_that_fails_leaves_the_pipe_as_it_was(nlp, tmp_path):
    """A user who catches the error keeps a working pipe with its own weights, settings and
    vocab, not a mix of the two pipes."""
    nlp.to_disk(tmp_path / "good")
    loaded = spacy.load(tmp_path / "good")
    pipe = loaded.get_pipe("siamese_similarity")
    a, b = loaded(TEXTS[0]), loaded(TEXTS[10])
    cfg, score, vectors = dict(pipe.cfg), a.similarity(b), loaded.vocab.vectors.shape
    for what, other in unloadable_pipes():
        data = other.to_bytes()
        other.to_disk(tmp_path / what)
        if what == "damaged weights":
            msg = srsly.msgpack_loads(data)
            data = srsly.msgpack_dumps({**msg, "model": msg["model"][: len(msg["model"]) // 2]})
            (tmp_path / what / "model").write_bytes(srsly.msgpack_loads(data)["model"])
        for load, source in ((pipe.from_disk, tmp_path / what), (pipe.from_bytes, data)):
            with pytest.raises(ValueError):
                load(source)
            assert pipe.cfg == cfg, what
            assert loaded.vocab.vectors.shape == vectors, what
            assert a.similarity(b) == score, what
            assert loaded(TEXTS[0]).similarity(loaded(TEXTS[10])) == score, what
    pipe.from_disk(tmp_path / "good" / "siamese_similarity", exclude=["vocab"])  # and it still loads
    assert loaded(TEXTS[0]).similarity(b) == score


# -- thresholds: `score` changes nothing; `tune_thresholds` (and its training callback) stores them ------


def _state(pipe):
    return dict(pipe.cfg), pipe.model.to_bytes(), pipe._trained


def test_reading_the_model_id_after_an_update_changes_nothing():
    nlp, _ = train(make_nlp(), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    cfg = dict(pipe.cfg)
    assert pipe.model_id == cfg["model_id"] and pipe.cfg == cfg


def test_score_changes_nothing_in_spacys_evaluation_step_too():
    """A pipe in training reports its figures at the thresholds tuned on the pairs, storing none."""
    nlp, _ = train(make_nlp(), n_iter=30)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = pair_examples(nlp)
    before = _state(pipe)
    evaluate = create_evaluation_callback(nlp, lambda _: examples, {"sim_acc": 1.0})
    first, second = evaluate()[1], evaluate()[1]
    tuned = pipe.score(examples, tune_threshold=True)
    assert _state(pipe) == before and pipe.threshold == 0.5 and pipe.dedupe_threshold is None
    assert first["sim_threshold"] == second["sim_threshold"] == tuned["sim_threshold"] != 0.5
    assert first["sim_acc"] == second["sim_acc"] == tuned["sim_acc"]
    assert nlp.evaluate(examples, scorer_cfg={"tune_threshold": False})["sim_threshold"] == 0.5


def test_tune_thresholds_stores_what_the_evaluation_reported(tmp_path):
    nlp, _ = train(make_nlp(), n_iter=30)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = pair_examples(nlp)
    reported = nlp.evaluate(examples)
    figures = pipe.tune_thresholds(examples)
    sims, labels = pipe.pair_scores(examples)
    assert pipe.threshold == reported["sim_threshold"] == figures["sim_threshold"] != 0.5
    assert figures["sim_acc"] == reported["sim_acc"]
    assert pipe.threshold == pytest.approx(best_threshold(sims, labels), abs=1e-6)
    assert pipe.dedupe_threshold == pytest.approx(precision_threshold(sims, labels, 0.9), abs=1e-6)
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    lpipe = loaded.get_pipe("siamese_similarity")
    assert (lpipe.threshold, lpipe.dedupe_threshold) == (pipe.threshold, pipe.dedupe_threshold)
    lpipe.cfg["threshold"] = 0.123  # a loaded pipe is not in training: its stored threshold
    _, scores = create_evaluation_callback(loaded, lambda _: pair_examples(loaded), {"sim_acc": 1.0})()
    assert lpipe.threshold == 0.123 == scores["sim_threshold"]


def tiny_training(tmp_path, **training):
    """A config of `make_nlp()` that trains on the tiny pairs (dev = train) with `training` settings."""
    nlp = make_nlp()
    examples = pair_examples(nlp)
    DocBin(docs=[eg.reference for eg in examples], store_user_data=True).to_disk(tmp_path / "pairs.spacy")
    config = nlp.config.copy()
    config["paths"]["train"] = config["paths"]["dev"] = str(tmp_path / "pairs.spacy")
    config["training"].update({"max_steps": 40, "eval_frequency": 10, "patience": 0, "seed": 0, **training})
    config["training"]["batcher"]["size"] = 10
    config["training"]["optimizer"]["learn_rate"] = 0.01
    return config


@pytest.mark.slow
def test_the_training_callback_saves_the_thresholds_of_each_checkpoints_evaluation(tmp_path):
    """The thresholds saved are the tuned ones of the scores the checkpoint's evaluation reported, as
    before `score` stopped storing them: `tuning.tuned_thresholds` of the saved weights' dev scores."""
    config = tiny_training(tmp_path, before_to_disk={"@callbacks": "spacy-siamese.tune_thresholds.v1"})
    (tmp_path / "out").mkdir()
    spacy_train(init_nlp(config), tmp_path / "out", stdout=io.StringIO(), stderr=io.StringIO())
    for name in ("model-best", "model-last"):
        nlp = spacy.load(tmp_path / "out" / name)
        pipe = nlp.get_pipe("siamese_similarity")
        scores, labels = pipe.pair_scores(pair_examples(nlp))
        assert pipe.threshold != 0.5
        assert (pipe.threshold, pipe.dedupe_threshold) == tuned_thresholds(pipe, scores, labels), name
        assert srsly.read_json(tmp_path / "out" / name / "meta.json")["performance"]["sim_acc"] == pytest.approx(
            pair_metrics(scores, labels, pipe.threshold)["acc"]
        )


@pytest.mark.slow
def test_spacy_train_stores_a_dev_tuned_threshold_and_checkpoint_ids(tmp_path):
    config = tiny_training(tmp_path, before_to_disk={"@callbacks": "spacy-siamese.tune_thresholds.v1"})
    config.to_disk(tmp_path / "config.cfg")
    subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(tmp_path / "config.cfg"), "--output", str(tmp_path / "out")],
        check=True,
        capture_output=True,
    )
    best_nlp = spacy.load(tmp_path / "out" / "model-best")
    best = best_nlp.get_pipe("siamese_similarity")
    last = spacy.load(tmp_path / "out" / "model-last").get_pipe("siamese_similarity")
    scores, labels = best.pair_scores(pair_examples(best_nlp))
    assert best.threshold != 0.5
    assert best.threshold == pytest.approx(best_threshold(scores, labels), abs=1e-6)
    assert best.dedupe_threshold == pytest.approx(precision_threshold(scores, labels, 0.9), abs=1e-6)
    same_weights = best.model.to_bytes() == last.model.to_bytes()
    assert (best.model_id == last.model_id) == same_weights
