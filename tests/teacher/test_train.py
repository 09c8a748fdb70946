"""spacy_siamese.teacher.train: a teacher fine-tuned on pairs with sentence-transformers' trainer, on a
tiny BERT built in the test (tests/tiny_transformer.py)."""

import json

import numpy
import pytest

from spacy_siamese.corpora import PairRecord
from spacy_siamese.teacher import models, train

from ..conftest import PAIRS
from ..tiny_transformer import build_tiny_bert, require_teacher

RECORDS = [PairRecord(a, b, float(label), i + 1) for i, (a, b, label) in enumerate(PAIRS)]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert", [t for a, b, _ in PAIRS for t in (a, b)])


def test_sample_records_is_seeded_and_keeps_file_order():
    first = train.sample_records(RECORDS, 4, seed=1)
    assert first == train.sample_records(RECORDS, 4, seed=1)
    assert len(first) == 4 and [r.line for r in first] == sorted(r.line for r in first)
    assert first != train.sample_records(RECORDS, 4, seed=2)
    assert train.sample_records(RECORDS, 0, seed=1) == RECORDS == train.sample_records(RECORDS, 99, seed=1)


def test_a_cross_encoder_teacher_trains_and_loads_as_a_cross_encoder(base, tmp_path):
    st = require_teacher()
    out = tmp_path / "ce"
    info = train.train_teacher(RECORDS, out, base=str(base), kind="cross-encoder", batch_size=4, max_pairs=8)
    assert info["n_pairs"] == 8 and info["device"] in ("cpu", "cuda")
    assert json.loads((out / train.META).read_text())["kind"] == "cross-encoder"
    assert models.is_cross_encoder(out) and not models.is_cross_encoder(base)
    model = models.load_scorer(out)
    assert isinstance(model, st.CrossEncoder)
    scores = models.cross_encoder_scores(model, [(a, b) for a, b, _ in PAIRS])
    assert scores.shape == (len(PAIRS),) and ((scores > 0) & (scores < 1)).all()
    reloaded = st.CrossEncoder(str(out)).predict([(PAIRS[0][0], PAIRS[0][1])])
    numpy.testing.assert_allclose(reloaded, scores[:1], atol=1e-5)


def test_training_changes_the_weights_and_is_seeded(base, tmp_path):
    st = require_teacher()
    pairs = [(a, b) for a, b, _ in PAIRS]
    runs = [
        models.cross_encoder_scores(st.CrossEncoder(str(teacher_dir)), pairs)
        for teacher_dir in [
            _train(base, tmp_path / "a", epochs=2),
            _train(base, tmp_path / "b", epochs=2),
            _train(base, tmp_path / "c", epochs=2, learning_rate=1e-2),
        ]
    ]
    numpy.testing.assert_allclose(runs[0], runs[1], atol=1e-6)
    assert numpy.abs(runs[0] - runs[2]).max() > 1e-3


@pytest.mark.parametrize("kind", ["mnrl", "cosent"])
def test_a_bi_encoder_teacher_trains_and_loads_as_a_sentence_transformer(base, tmp_path, kind):
    st = require_teacher()
    out = tmp_path / kind
    info = train.train_teacher(RECORDS, out, base=str(base), kind=kind, batch_size=4)
    assert info["n_pairs"] == (5 if kind == "mnrl" else 10)  # mnrl: the positives
    assert not models.is_cross_encoder(out)
    vectors = st.SentenceTransformer(str(out)).encode(["Why is the sky blue?"])
    assert vectors.shape == (1, 16)


def test_bad_settings_are_refused_before_training(base, tmp_path):
    with pytest.raises(ValueError, match="Unknown teacher kind 'bm25'"):
        train.train_teacher(RECORDS, tmp_path / "x", base=str(base), kind="bm25")
    with pytest.raises(ValueError, match="batch_size >= 1"):
        train.train_teacher(RECORDS, tmp_path / "x", base=str(base), batch_size=0)
    require_teacher()
    negatives = [r for r in RECORDS if r.label < 0.5]
    with pytest.raises(ValueError, match="it needs positives"):
        train.train_teacher(negatives, tmp_path / "x", base=str(base), kind="mnrl")
    assert not (tmp_path / "x").exists()


def test_a_missing_extra_names_it(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"spacy-siamese\[teacher\]"):
        train.train_teacher(RECORDS, tmp_path / "x", base="any")


def test_a_base_whose_weights_are_a_pickle_is_refused_naming_the_file(tmp_path):
    """Issue 75 (7): torch's refusal of a pickle with code in it was a raw UnpicklingError."""
    require_teacher()
    import torch

    base = build_tiny_bert(tmp_path / "bert", ["a b"])
    (base / "model.safetensors").unlink()
    torch.save({"weights": Payload()}, base / "pytorch_model.bin")
    for kind in ("cross-encoder", "cosent"):
        with pytest.raises(ValueError, match=r"pytorch_model\.bin: torch refuses to load this pickle.*safetensors"):
            train.train_teacher(RECORDS, tmp_path / "out", base=str(base), kind=kind)
    assert not (tmp_path / "out").exists()


def test_a_teacher_with_damaged_weights_or_config_is_named(tmp_path):
    """Random bytes in model.safetensors, or a config.json that is a JSON list, were raw tracebacks."""
    require_teacher()
    base = build_tiny_bert(tmp_path / "bert", ["a b"])
    (base / "model.safetensors").write_bytes(b"\x00" * 7)
    with pytest.raises(ValueError, match=r"bert/model\.safetensors: not a whole safetensors file"):
        models.load_teacher(str(base))
    (base / "config.json").write_text("[]")
    with pytest.raises(ValueError, match=r"bert/config\.json: a JSON list, not an object"):
        models.is_cross_encoder(base)


class Payload:
    """What a malicious pickle holds: code that would run on loading (torch refuses it)."""

    def __reduce__(self):
        return (print, ("the payload ran",))


def _train(base, out, **settings):
    train.train_teacher(RECORDS, out, base=str(base), batch_size=4, seed=3, **settings)
    return out


def test_a_teacher_resumed_from_a_checkpoint_equals_one_trained_in_one_go(base, tmp_path, monkeypatch):
    """Issue 76 (3): a killed training continues from its last checkpoint (here step 6 of 10, in the
    second epoch) and ends with the weights of one run straight through."""
    require_teacher()
    import transformers
    from safetensors.numpy import load_file

    settings = dict(base=str(base), batch_size=2, epochs=2, seed=3, learning_rate=1e-3, checkpoint_steps=3)
    train.train_teacher(RECORDS, tmp_path / "whole", **settings)
    checkpoints = tmp_path / ".pieces.siamese-checkpoints"
    save, steps = transformers.Trainer._save_checkpoint, []

    def save_then_die(trainer, *args):
        save(trainer, *args)
        if trainer.state.global_step == 6 and not steps:
            raise KeyboardInterrupt("killed")

    step = transformers.Trainer.training_step
    monkeypatch.setattr(transformers.Trainer, "_save_checkpoint", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        train.train_teacher(RECORDS, tmp_path / "pieces", **settings)
    assert not (tmp_path / "pieces").exists() and (checkpoints / "checkpoint-6").is_dir()
    (checkpoints / "checkpoint-9").mkdir()  # what a kill while saving leaves: no trainer_state.json yet
    (checkpoints / "checkpoint-9" / "model.safetensors").write_bytes(b"\x00")
    monkeypatch.setattr(transformers.Trainer, "training_step", lambda *a, **k: steps.append(1) or step(*a, **k))
    info = train.train_teacher(RECORDS, tmp_path / "pieces", resume=True, **settings)
    assert len(steps) == 4 and info["n_pairs"] == 10  # steps 7 to 10 only
    assert not checkpoints.exists()  # removed once the teacher is saved
    whole, pieces = (load_file(str(tmp_path / name / "model.safetensors")) for name in ("whole", "pieces"))
    assert whole.keys() == pieces.keys()
    for name in whole:
        numpy.testing.assert_allclose(pieces[name], whole[name], atol=1e-7, err_msg=name)


def test_resume_is_refused_without_a_checkpoint_of_the_same_settings(base, tmp_path, monkeypatch):
    require_teacher()
    import transformers

    out, checkpoints = tmp_path / "t", tmp_path / ".t.siamese-checkpoints"
    settings = dict(base=str(base), batch_size=2, checkpoint_steps=2)
    with pytest.raises(ValueError, match=r"No checkpoint to resume from in .*\.t\.siamese-checkpoints"):
        train.train_teacher(RECORDS, out, resume=True, **settings)

    def die(*args):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(transformers.Trainer, "training_step", die)
    with pytest.raises(KeyboardInterrupt):  # killed before its first checkpoint
        train.train_teacher(RECORDS, out, **settings)
    with pytest.raises(ValueError, match="No checkpoint to resume from"):
        train.train_teacher(RECORDS, out, resume=True, **settings)
    monkeypatch.undo()
    save = transformers.Trainer._save_checkpoint
    monkeypatch.setattr(transformers.Trainer, "_save_checkpoint", lambda *a: save(*a) or die())
    with pytest.raises(KeyboardInterrupt):
        train.train_teacher(RECORDS, out, **settings)
    with pytest.raises(ValueError, match=r"other settings: learning_rate 2e-05 \(now 0.001\)"):
        train.train_teacher(RECORDS, out, resume=True, learning_rate=1e-3, **settings)
    with pytest.raises(ValueError, match="other settings: pairs_sha256"):
        train.train_teacher(RECORDS[:-1], out, resume=True, **settings)
    assert (checkpoints / "checkpoint-2").is_dir() and not out.exists()


def test_a_folder_of_the_users_where_the_checkpoints_go_is_never_touched(base, tmp_path):
    require_teacher()
    mine = tmp_path / ".t.siamese-checkpoints"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    for resume in (False, True):
        with pytest.raises(ValueError, match="is not a teacher's checkpoint directory"):
            train.train_teacher(RECORDS, tmp_path / "t", base=str(base), resume=resume)
    assert (mine / "notes.txt").read_text() == "mine" and not (tmp_path / "t").exists()


@pytest.mark.parametrize("kind", ["cross-encoder", "cosent"])
def test_max_length_zero_is_the_99th_percentile_of_the_token_counts(base, tmp_path, kind):
    """A cross-encoder reads both texts together (one [CLS] and two [SEP]), a bi-encoder each text alone;
    one long pair in 201 does not set the length."""
    st = require_teacher()
    records = RECORDS * 20 + [PairRecord("why " * 100, "how " * 100, 1.0, 201)]
    tokenizer = st.SentenceTransformer(str(base)).tokenizer
    one, two = [r.text1 for r in records], [r.text2 for r in records]
    counts = [len(i) for i in (tokenizer(one, two) if kind == "cross-encoder" else tokenizer(one + two))["input_ids"]]
    expected = int(numpy.ceil(numpy.percentile(counts, 99)))
    assert 8 < expected < 100 < max(counts)
    out = tmp_path / "t"
    info = train.train_teacher(records, out, base=str(base), kind=kind, max_length=0, batch_size=64)
    assert info["max_length"] == expected == json.loads((out / train.META).read_text())["max_length"]
    loaded = st.CrossEncoder(str(out)) if kind == "cross-encoder" else st.SentenceTransformer(str(out))
    assert loaded.max_seq_length == expected
    capped = st.CrossEncoder(str(base), num_labels=1)
    capped.max_seq_length = 9  # the model's own maximum
    assert train._length_from_data(capped, RECORDS, together=True) == 9


@pytest.mark.parametrize("kind", ["cross-encoder", "cosent"])
def test_batches_are_of_similar_length(base, tmp_path, monkeypatch, kind):
    """sentence-transformers' trainers ignored `train_sampling_strategy="group_by_length"`: batches
    mixed pairs of 1 and 64 words. Transformers groups by length within megabatches (here of 16 pairs)."""
    require_teacher()
    import transformers

    records = [
        PairRecord("why " * n, "how " * n, float(n % 2), n) for n in numpy.random.default_rng(0).permutation(64) + 1
    ]
    step, spans = transformers.Trainer.training_step, []

    def record(trainer, model, inputs, *args, **kwargs):
        if kind == "cross-encoder":
            words = [len(text.split()) for text in inputs["sentence1"]]
        else:  # tokenised: [CLS], a token a word, [SEP]
            words = inputs["sentence1_attention_mask"].sum(1).tolist()
        spans.append((len(words), max(words) - min(words)))
        return step(trainer, model, inputs, *args, **kwargs)

    monkeypatch.setattr(transformers.Trainer, "training_step", record)
    train.train_teacher(records, tmp_path / "t", base=str(base), kind=kind, batch_size=2)
    assert len(spans) == 32 and numpy.mean([span for _, span in spans]) < 8  # random pairs: about 21 apart


def test_bf16_is_native_on_a_gpu_or_a_cpu_that_has_it():
    assert train.native_bf16("cuda", cpuinfo="flags : fpu sse2")
    assert train.native_bf16("cpu", cpuinfo="flags : fpu avx512f avx512_bf16 avx2")
    assert train.native_bf16("cpu", cpuinfo="flags : fpu amx_bf16 amx_tile")
    assert not train.native_bf16("cpu", cpuinfo="flags : fpu avx2 avx512f avx512bw")


def test_bf16_on_a_cpu_without_it_trains_in_float32_with_a_warning(base, tmp_path, monkeypatch):
    monkeypatch.setattr(train, "native_bf16", lambda device, cpuinfo=None: device != "cpu")
    monkeypatch.setattr(train, "device_name", lambda: "cpu")
    with pytest.warns(UserWarning, match="bf16 is off: this CPU has neither AVX512-BF16 nor AMX"):
        info = train.train_teacher(RECORDS, tmp_path / "t", base=str(base), batch_size=4, max_pairs=8, bf16=True)
    assert info["bf16"] is False
