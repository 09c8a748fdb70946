"""spacy_siamese.teacher.pairs and .models, and `teacher-pairs`: silver pairs labelled by a
teacher, the teacher's vectors (cached), and its table for TeacherScores.v1."""

import json
import re

import numpy
import pytest
import srsly

from spacy_siamese.teacher import models, pairs
from spacy_siamese.teacher.loss import TeacherScoresLoss, load_teacher_table, text_key
from spacy_siamese.teacher.models import teacher_vectors
from spacy_siamese.teacher.pairs import nearest_neighbours

from ..cli.conftest import invoke
from ..conftest import PAIRS, FakeTeacher


def test_nearest_neighbours_match_brute_force():
    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(50, 6)).astype("f")
    queries = numpy.asarray([0, 7, 49])
    found = nearest_neighbours(vectors, queries, 5)
    for row, q in zip(found, queries):
        scores = vectors @ vectors[q]
        scores[q] = -numpy.inf
        assert list(row) == list(numpy.argsort(-scores, kind="stable")[:5])


TOPICS = ["cats", "dogs", "rain", "trains", "tea", "maps"]
SENTENCES = [f"{word} {topic} question {i}" for i, topic in enumerate(TOPICS) for word in ("why", "how", "where")]


def test_silver_pairs_are_each_texts_top_k_tfidf_neighbours_less_itself_and_gold():
    """Issue 76 (1): as AugSBERT samples them; no random pairs unless asked for."""
    gold = {frozenset(SENTENCES[:2]), frozenset((SENTENCES[3], SENTENCES[5]))}
    rows = pairs.sample_silver(SENTENCES, gold=gold, top_k=3)
    near = pairs.nearest_neighbours(pairs.tfidf_rows(SENTENCES), numpy.arange(len(SENTENCES)), 3)
    expected, seen = [], set()
    for a, neighbours in enumerate(near.tolist()):
        for b in neighbours:
            if frozenset((a, b)) not in seen and frozenset((SENTENCES[a], SENTENCES[b])) not in gold:
                seen.add(frozenset((a, b)))
                expected.append((a, b))
    assert rows == expected  # every pair a top-3 neighbour pair: none random
    assert all(a != b for a, b in rows) and len({frozenset(r) for r in rows}) == len(rows)
    assert not {frozenset((SENTENCES[a], SENTENCES[b])) for a, b in rows} & gold
    assert {t for row in rows for t in row} == set(range(len(SENTENCES)))  # every text is paired
    assert rows == pairs.sample_silver(SENTENCES, gold=gold, top_k=3, seed=5)  # nothing random: no seed


def test_random_pairs_and_a_sample_only_when_asked_for_and_seeded():
    plain = pairs.sample_silver(SENTENCES, top_k=2)
    more = pairs.sample_silver(SENTENCES, top_k=2, n_random=10, seed=1)
    assert more[: len(plain)] == plain and len(more) == len(plain) + 10
    assert more == pairs.sample_silver(SENTENCES, top_k=2, n_random=10, seed=1)
    assert more != pairs.sample_silver(SENTENCES, top_k=2, n_random=10, seed=2)
    assert len({frozenset(r) for r in more}) == len(more)
    sample = pairs.sample_silver(SENTENCES, top_k=2, max_pairs=7, seed=1)
    assert len(sample) == 7 and {frozenset(r) for r in sample} <= {frozenset(r) for r in plain}
    assert sample == pairs.sample_silver(SENTENCES, top_k=2, max_pairs=7, seed=1)
    assert sample != pairs.sample_silver(SENTENCES, top_k=2, max_pairs=7, seed=2)
    everything = pairs.sample_silver(SENTENCES[:4], n_random=100)  # no more pairs than there are
    assert len(everything) == 6
    with pytest.raises(ValueError, match="at least two distinct texts"):
        pairs.sample_silver(SENTENCES[:1])


def test_a_sample_searches_the_neighbours_of_a_sample_of_the_texts_first(monkeypatch):
    """Issue 76 (3): 30,000 silver pairs of Quora's 217,053 questions searched every question's
    neighbours (17 minutes on one core); twice the texts needed are enough."""
    searched = []
    search = pairs.nearest_neighbours
    monkeypatch.setattr(pairs, "nearest_neighbours", lambda v, q, k: searched.append(len(q)) or search(v, q, k))
    texts = [f"text {i} word{i % 7} word{i % 5}" for i in range(300)]
    every = {frozenset(r) for r in pairs.sample_silver(texts, top_k=3)}
    searched.clear()
    sample = pairs.sample_silver(texts, top_k=3, max_pairs=30, seed=1)
    assert searched == [20, 0] and len(sample) == 30 and {frozenset(r) for r in sample} <= every
    gold = {frozenset((texts[a], texts[b])) for a, b in pairs.sample_silver(texts, top_k=3)}
    gold -= set(list(gold)[:40])
    searched.clear()  # gold pairs leave the first texts too few pairs: the other texts are searched too
    sample = pairs.sample_silver(texts, gold=gold, top_k=3, max_pairs=30, seed=1)
    assert searched == [20, 280] and len(sample) == 30


def test_labels_are_the_teachers_cosine_clipped():
    vectors = FakeTeacher().encode(SENTENCES, 0, True, True, False)
    rows = pairs.sample_silver(SENTENCES, top_k=3)
    labelled = pairs.label_pairs("unused", SENTENCES, rows, vectors=vectors)
    for (a, b), row in zip(rows, labelled):
        assert (row["text1"], row["text2"]) == (SENTENCES[a], SENTENCES[b])
        assert row["label"] == pytest.approx(min(1.0, max(0.0, float(vectors[a] @ vectors[b]))), abs=1e-6)


@pytest.mark.parametrize("n_texts", [240, 12])
def test_no_pair_is_written_twice(n_texts):
    """Issue 75 (8): 240 texts gave 614 distinct pairs of 720."""
    texts = [f"text {i} word{i % 7} word{i % 5}" for i in range(n_texts)]
    rows = pairs.sample_silver(texts, top_k=3, n_random=n_texts)
    keys = [frozenset(r) for r in rows]
    assert len(set(keys)) == len(keys) and all(len(k) == 2 for k in keys)


def test_labelling_goes_on_where_a_killed_run_stopped(tmp_path, monkeypatch):
    """Issue 76 (1): resumable labelling; each finished chunk of the teacher's work is kept."""
    monkeypatch.setattr(models, "CHUNK", 4)
    texts = [f"text {i}" for i in range(10)]

    class Teacher(FakeTeacher):  # one name: the cache's key has the teacher's
        def __init__(self, killed_at=None):
            super().__init__()
            self.killed_at, self.seen = killed_at, []

        def encode(self, chunk, **settings):
            if self.calls == self.killed_at:
                raise KeyboardInterrupt  # killed while encoding this chunk
            self.seen.append(list(chunk))
            return super().encode(chunk, **settings)

    with pytest.raises(KeyboardInterrupt):
        teacher_vectors(Teacher(killed_at=2), texts, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("teacher-*.npy"))) == 2
    resumed = Teacher()
    vectors = teacher_vectors(resumed, texts, cache_dir=tmp_path)
    assert resumed.seen == [texts[8:]]  # only the chunk it had not finished
    numpy.testing.assert_allclose(vectors, FakeTeacher().encode(texts, 64, True, True, False), atol=1e-6)


def test_teacher_vectors_are_cached(tmp_path):
    teacher = FakeTeacher()
    texts = ["a b", "c d", "e f"]
    first = teacher_vectors(teacher, texts, cache_dir=tmp_path)
    again = teacher_vectors(teacher, texts, cache_dir=tmp_path)
    numpy.testing.assert_array_equal(first, again)
    assert teacher.calls == 1 and len(list(tmp_path.glob("teacher-*.npy"))) == 1
    teacher_vectors(teacher, texts[:2], cache_dir=tmp_path)  # other texts: another entry
    assert teacher.calls == 2


def test_a_cache_entry_is_checked_against_its_record(tmp_path):
    """Issue 75 (6): a (240, 7) array under the entry's name was used (its row count matched)."""
    teacher = FakeTeacher()
    texts = [f"text {i}" for i in range(240)]
    vectors = teacher_vectors(teacher, texts, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("teacher-*.npy")
    numpy.save(entry, numpy.ones((240, 7), dtype="float32"))
    message = f"The teacher cache file {entry} (float32 (240, 7)) does not match"
    with pytest.raises(ValueError, match=re.escape(message)):
        teacher_vectors(teacher, texts, cache_dir=tmp_path)
    vectors[3, 0] = numpy.nan  # NaN vectors made every label 0.0; even with a record that matches, refused
    numpy.save(entry, vectors)
    record = json.loads(entry.with_suffix(".json").read_text())
    entry.with_suffix(".json").write_text(json.dumps({**record, "sha256": models.sha256_file(entry)}))
    with pytest.raises(ValueError, match=re.escape(f"{entry}: NaN or infinite values in 1 of 240 rows")):
        teacher_vectors(teacher, texts, cache_dir=tmp_path)
    assert teacher.calls == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: entry.write_bytes(b""),  # numpy's EOFError: a bare "Aborted." on the command line
        lambda entry: entry.write_bytes(entry.read_bytes()[:60]),
        lambda entry: numpy.save(entry, numpy.array([{"a": 1}] * 3, dtype=object), allow_pickle=True),
        lambda entry: entry.with_suffix(".json").write_text("{bad"),
        lambda entry: entry.with_suffix(".json").write_text(""),
    ],
    ids=["empty", "truncated", "pickle", "bad-record", "empty-record"],
)
def test_a_damaged_cache_entry_is_named_with_the_fix(tmp_path, damage):
    teacher = FakeTeacher()
    teacher_vectors(teacher, ["a b", "c d", "e f"], cache_dir=tmp_path)
    (entry,) = tmp_path.glob("teacher-*.npy")
    damage(entry)
    with pytest.raises(ValueError, match=re.escape(f"The teacher cache file {entry} or its record")):
        teacher_vectors(teacher, ["a b", "c d", "e f"], cache_dir=tmp_path)


def test_a_cache_record_that_is_not_an_object_is_computed_again(tmp_path):
    teacher = FakeTeacher()
    first = teacher_vectors(teacher, ["a b", "c d"], cache_dir=tmp_path)
    (entry,) = tmp_path.glob("teacher-*.npy")
    entry.with_suffix(".json").write_text('["shape", "dtype", "sha256"]')  # a TypeError traceback
    numpy.testing.assert_array_equal(teacher_vectors(teacher, ["a b", "c d"], cache_dir=tmp_path), first)
    assert teacher.calls == 2


class NaNTeacher(FakeTeacher):
    def encode(self, texts, **settings):
        vectors = super().encode(texts, **settings)
        vectors[-1, :] = numpy.nan
        return vectors


def test_non_finite_vectors_of_a_teacher_are_refused_and_not_cached(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="The vectors of the teacher NaNTeacher: NaN or infinite values in 1 of 3"):
        teacher_vectors(NaNTeacher(), ["a", "b", "c"], cache_dir=tmp_path)
    assert not list(tmp_path.iterdir())
    monkeypatch.setattr(models, "load_teacher", lambda name: NaNTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    result = invoke("teacher-pairs", "nan-teacher", tmp_path / "pairs.jsonl", "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 1 and "teacher nan-teacher: NaN or infinite values" in result.output, result.output
    assert not (tmp_path / "out.jsonl").exists()


def test_the_cache_key_has_every_file_of_a_teacher_directory(tmp_path, monkeypatch):
    teacher = FakeTeacher()
    monkeypatch.setattr(models, "load_teacher", lambda name: teacher)
    directory = tmp_path / "teacher"
    (directory / "2_Dense").mkdir(parents=True)
    (directory / "model.safetensors").write_bytes(b"weights")
    (directory / "2_Dense/model.safetensors").write_bytes(b"dense")
    teacher_vectors(str(directory), ["a", "b"], cache_dir=tmp_path / "cache")
    teacher_vectors(str(directory), ["a", "b"], cache_dir=tmp_path / "cache")
    assert teacher.calls == 1
    (directory / "2_Dense/model.safetensors").write_bytes(b"trained again")
    teacher_vectors(str(directory), ["a", "b"], cache_dir=tmp_path / "cache")
    assert teacher.calls == 2
    (directory / "1_Pooling").mkdir()  # the pooling or normalisation changed in place: not the same teacher
    (directory / "1_Pooling/config.json").write_text('{"pooling_mode_mean_tokens": false}')
    teacher_vectors(str(directory), ["a", "b"], cache_dir=tmp_path / "cache")
    assert teacher.calls == 3


def test_teacher_pairs_checks_every_output_before_the_teacher_runs(tmp_path, monkeypatch):
    """Issue 75 (8): --vectors-output equal to -o and a --teacher-cache FILE failed after the work."""

    def no_teacher(name):
        raise RuntimeError("the teacher ran")

    monkeypatch.setattr(models, "load_teacher", no_teacher)
    pairs_file = tmp_path / "pairs.jsonl"
    srsly.write_jsonl(pairs_file, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    (tmp_path / "file").write_text("a user's file")
    out = tmp_path / "out"
    for args, message in [
        (["-o", out, "--vectors-output", out], "Two outputs are the same file"),
        (["-o", out, "--teacher-cache", out], "Two outputs are the same file"),
        (["-o", out, "--teacher-cache", tmp_path / "file"], "is a file: give a directory"),
        (["-o", out, "--vectors-output", tmp_path / "file"], "is a file: give a directory"),
        (["--max-pairs", 3], "Give --output FILE for the pairs, --vectors-output DIR"),
    ]:
        result = invoke("teacher-pairs", "teacher", pairs_file, *args)
        assert result.exit_code == 1 and message in result.output, (args, result.output)
        assert "the teacher ran" not in str(result.exception) and not out.exists()
    assert (tmp_path / "file").read_text() == "a user's file"


def test_missing_extra_names_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"pip install 'spacy-siamese\[teacher\]'"):
        models.load_teacher("any")


def test_teacher_pairs_cli(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "teacher.jsonl"
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "pairs.jsonl", "-o", out, "--max-pairs", 12,
                    "--teacher-cache", tmp_path / "cache", "--vectors-output", tmp_path / "table",
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = list(srsly.read_jsonl(out))
    assert len(rows) == 12 and "teacher-labelled pairs of 15 texts" in result.output
    texts = {t for a, b, _ in PAIRS for t in (a, b)}
    assert all(r["text1"] in texts and r["text2"] in texts for r in rows)
    gold = {frozenset((a, b)) for a, b, _ in PAIRS}
    assert not [r for r in rows if frozenset((r["text1"], r["text2"])) in gold]  # no gold pair
    # the table holds the teacher's vectors of every text read
    rows_of, vectors = load_teacher_table(tmp_path / "table")
    assert set(rows_of) == {text_key(t) for t in texts} and f"vectors of {len(texts)} texts" in result.output
    expected = FakeTeacher().encode(sorted(texts), 64, True, True, False)
    got = vectors[[rows_of[text_key(t)] for t in sorted(texts)]]
    numpy.testing.assert_allclose(got, expected, atol=1e-3)  # stored as float16


def test_teacher_pairs_cli_pairs_unlabelled_collections(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    domain = ["Where can I renew my visa?", "Any good dentist in town?", "Where can I renew my visa?"]
    srsly.write_jsonl(tmp_path / "domain.jsonl", [{"id": i, "body": t} for i, t in enumerate(domain)])
    (tmp_path / "more.txt").write_text("Best place for a weekend trip?\n\nAny good dentist in town?\n", encoding="utf8")
    out = tmp_path / "teacher.jsonl"
    # the pair files' texts are capped by --max-texts; every text of the collections is kept
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "pairs.jsonl", "--max-texts", 4,
                    "--texts", tmp_path / "domain.jsonl", "--texts-field", "body", "-o", out, "--max-pairs", 300,
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    first_four = list(dict.fromkeys(t for a, b, _ in PAIRS for t in (a, b)))[:4]
    paired = {t for r in srsly.read_jsonl(out) for t in (r["text1"], r["text2"])}
    assert paired == set(first_four) | set(domain) and "teacher-labelled pairs of 6 texts" in result.output
    result = invoke("teacher-pairs", "fake-teacher", "--texts", tmp_path / "more.txt", "--texts",
                    tmp_path / "domain.jsonl", "--texts-field", "body", "-o", out, "--max-pairs", 300,
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = list(srsly.read_jsonl(out))
    assert {t for r in rows for t in (r["text1"], r["text2"])} == set(domain) | {"Best place for a weekend trip?"}
    assert "teacher-labelled pairs of 3 texts" in result.output and "1 blank line" in result.output


def test_teacher_pairs_cli_needs_texts_and_names_bad_collection_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    result = invoke("teacher-pairs", "fake-teacher", "-o", tmp_path / "t.jsonl")
    assert result.exit_code == 1 and "no texts to pair" in result.output, result.output
    (tmp_path / "domain.jsonl").write_text('{"text": "fine"}\n{"body": "no text field"}\n', encoding="utf8")
    result = invoke("teacher-pairs", "fake-teacher", "--texts", tmp_path / "domain.jsonl", "-o", tmp_path / "t.jsonl")
    assert result.exit_code == 1 and "domain.jsonl:2: no 'text' field" in result.output, result.output
    assert not (tmp_path / "t.jsonl").exists()


def test_teacher_pairs_cli_writes_only_the_teachers_vectors_of_every_text(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    table = tmp_path / "table"
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "pairs.jsonl", "--vectors-output", table)
    assert result.exit_code == 0, result.output
    texts = sorted({t for a, b, _ in PAIRS for t in (a, b)})
    rows_of, vectors = load_teacher_table(tmp_path / "table")
    assert set(rows_of) == {text_key(t) for t in texts} and f"vectors of {len(texts)} texts" in result.output
    got = vectors[[rows_of[text_key(t)] for t in texts]]
    numpy.testing.assert_allclose(got, FakeTeacher().encode(texts, 64, True, True, False), atol=1e-3)
    # every text of a batch of those pairs has its row: TeacherScores.v1 trains on the file itself
    loss = TeacherScoresLoss(tmp_path / "table").for_texts([a for a, _, _ in PAIRS], [b for _, b, _ in PAIRS])
    assert callable(loss)


def test_teacher_pairs_cli_keeps_blank_texts_in_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    (tmp_path / "empty.jsonl").write_text("")
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "empty.jsonl", "--vectors-output", tmp_path / "table")
    assert result.exit_code == 1 and "no pairs found in" in result.output and "empty.jsonl" in result.output
    assert not (tmp_path / "table").exists()
    # a pair with an empty side trains like any other, so the table has the teacher's vector of it
    srsly.write_jsonl(tmp_path / "blank.jsonl", [{"text1": "", "text2": "Rain", "label": 0}])
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "blank.jsonl", "--vectors-output", tmp_path / "table")
    assert result.exit_code == 0 and "vectors of 2 texts" in result.output, result.output
    loss = TeacherScoresLoss(tmp_path / "table")
    numpy.testing.assert_allclose(loss.teacher([" "]), FakeTeacher().encode([""], 64, True, True, False), atol=1e-3)


def test_tfidf_neighbours_of_sparse_rows_match_brute_force():
    texts = [f"word{i % 7} word{i % 5} shared" for i in range(30)]
    rows = pairs.tfidf_rows(texts)
    queries = numpy.asarray([0, 3, 29])
    found = nearest_neighbours(rows, queries, 4)
    dense = rows.toarray()
    for row, q in zip(found, queries):
        scores = dense @ dense[q]
        scores[q] = -numpy.inf
        assert sorted(scores[list(row)]) == pytest.approx(sorted(numpy.sort(scores)[::-1][:4]))


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    from ..tiny_transformer import build_tiny_cross_encoder

    texts = [t for a, b, _ in PAIRS for t in (a, b)]
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("teacher") / "ce", texts)


def test_silver_pairs_from_a_cross_encoder_are_its_scores(cross_encoder, tmp_path):
    from spacy_siamese.teacher.models import cross_encoder_scores, load_scorer

    texts = sorted({t for a, b, _ in PAIRS for t in (a, b)})
    rows = pairs.sample_silver(texts, top_k=2)
    labelled = pairs.label_pairs(str(cross_encoder), texts, rows)
    expected = cross_encoder_scores(load_scorer(cross_encoder), [(texts[a], texts[b]) for a, b in rows])
    numpy.testing.assert_allclose([r["label"] for r in labelled], expected, atol=1e-5)
    cached = pairs.label_pairs(str(cross_encoder), texts, rows, cache_dir=tmp_path)
    assert cached == labelled and len(list(tmp_path.glob("scores-*.npy"))) == 1


def test_teacher_pairs_command_labels_silver_pairs_with_a_cross_encoder(cross_encoder, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": label} for a, b, label in PAIRS])
    outputs = []
    for name in ("a.jsonl", "b.jsonl"):
        out = tmp_path / name
        result = invoke("teacher-pairs", cross_encoder, pairs, "-o", out, "--max-pairs", 9, "--seed", 2)
        assert result.exit_code == 0, result.output
        assert "9 cross-encoder-labelled pairs" in result.output
        outputs.append(out.read_text(encoding="utf8"))
    assert outputs[0] == outputs[1]  # deterministic for a seed
    assert all(0.0 < r["label"] < 1.0 for r in srsly.read_jsonl(tmp_path / "a.jsonl"))
    result = invoke(
        "teacher-pairs", cross_encoder, pairs, "-o", tmp_path / "c.jsonl", "--vectors-output", tmp_path / "v"
    )
    assert result.exit_code == 1 and "is a CrossEncoder" in result.output and not (tmp_path / "c.jsonl").exists()


def test_teacher_pair_scores_of_either_kind(cross_encoder, monkeypatch):
    pairs = [(a, b) for a, b, _ in PAIRS[:4]]
    scores = models.teacher_pair_scores(str(cross_encoder), pairs)
    assert scores.shape == (4,) and ((scores > 0) & (scores < 1)).all()
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    cosines = models.teacher_pair_scores("any-bi-encoder", pairs)
    vectors = FakeTeacher().encode([t for p in pairs for t in p], 0, True, True, False)
    numpy.testing.assert_allclose(cosines, (vectors[0::2] * vectors[1::2]).sum(axis=1), atol=1e-5)
