import numpy
import pytest
import srsly

from spacy_siamese import distill
from spacy_siamese.distill import nearest_neighbours, teacher_pairs, teacher_vectors
from spacy_siamese.losses.teacher_scores import TeacherScoresLoss, load_teacher_table, text_key

from .cli.conftest import invoke
from .conftest import PAIRS, FakeTeacher


def test_nearest_neighbours_match_brute_force():
    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(50, 6)).astype("f")
    queries = numpy.asarray([0, 7, 49])
    found = nearest_neighbours(vectors, queries, 5)
    for row, q in zip(found, queries):
        scores = vectors @ vectors[q]
        scores[q] = -numpy.inf
        assert list(row) == list(numpy.argsort(-scores, kind="stable")[:5])


def test_teacher_pairs_are_labelled_with_the_teachers_cosine():
    texts = [f"text {i}" for i in range(40)]
    vectors = FakeTeacher().encode(texts, 0, True, True, False)
    rows = teacher_pairs(texts, vectors, n_pairs=30, neighbours=5, seed=1)
    assert len(rows) == 30
    index = {t: i for i, t in enumerate(texts)}
    for row in rows:
        a, b = index[row["text1"]], index[row["text2"]]
        assert a != b and 0.0 <= row["label"] <= 1.0
        assert row["label"] == pytest.approx(max(0.0, float(vectors[a] @ vectors[b])), abs=1e-6)
    for nearest, ranked, random in zip(rows[0::3], rows[1::3], rows[2::3]):  # 10 anchors, three pairs each
        # each anchor's first pair is its nearest neighbour: the highest label of the three, and of all its pairs
        anchor = index[nearest["text1"]]
        assert ranked["text1"] == random["text1"] == nearest["text1"]
        best = max(max(0.0, float(vectors[anchor] @ vectors[j])) for j in range(len(texts)) if j != anchor)
        assert nearest["label"] == pytest.approx(best, abs=1e-6)
        assert nearest["label"] >= ranked["label"] and nearest["label"] >= random["label"]
    assert rows == teacher_pairs(texts, vectors, n_pairs=30, neighbours=5, seed=1)  # seeded
    with pytest.raises(ValueError, match="texts but"):
        teacher_pairs(texts, vectors[:3], n_pairs=3)


def test_teacher_vectors_are_cached(tmp_path):
    teacher = FakeTeacher()
    texts = ["a b", "c d", "e f"]
    first = teacher_vectors(teacher, texts, cache_dir=tmp_path)
    again = teacher_vectors(teacher, texts, cache_dir=tmp_path)
    numpy.testing.assert_array_equal(first, again)
    assert teacher.calls == 1 and len(list(tmp_path.glob("teacher-*.npy"))) == 1
    teacher_vectors(teacher, texts[:2], cache_dir=tmp_path)  # other texts: another entry
    assert teacher.calls == 2


def test_missing_extra_names_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"pip install 'spacy-siamese\[distill\]'"):
        distill.load_teacher("any")


def test_teacher_pairs_cli(tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "teacher.jsonl"
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "pairs.jsonl", "-o", out, "--n-pairs", 12,
                    "--teacher-cache", tmp_path / "cache", "--vectors-output", tmp_path / "table",
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = list(srsly.read_jsonl(out))
    assert len(rows) == 12 and "teacher-labelled pairs of 15 texts" in result.output
    texts = {t for a, b, _ in PAIRS for t in (a, b)}
    assert all(r["text1"] in texts and r["text2"] in texts for r in rows)
    # the table holds the teacher's vectors of exactly the paired texts
    rows_of, vectors = load_teacher_table(tmp_path / "table")
    paired = {t for r in rows for t in (r["text1"], r["text2"])}
    assert set(rows_of) == {text_key(t) for t in paired} and f"vectors of {len(paired)} texts" in result.output
    expected = FakeTeacher().encode(sorted(paired), 64, True, True, False)
    got = vectors[[rows_of[text_key(t)] for t in sorted(paired)]]
    numpy.testing.assert_allclose(got, expected, atol=1e-3)  # stored as float16


def test_teacher_pairs_cli_pairs_unlabelled_collections(tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    domain = ["Where can I renew my visa?", "Any good dentist in town?", "Where can I renew my visa?"]
    srsly.write_jsonl(tmp_path / "domain.jsonl", [{"id": i, "body": t} for i, t in enumerate(domain)])
    (tmp_path / "more.txt").write_text("Best place for a weekend trip?\n\nAny good dentist in town?\n", encoding="utf8")
    out = tmp_path / "teacher.jsonl"
    # the pair files' texts are capped by --max-texts; every text of the collections is kept
    result = invoke("teacher-pairs", "fake-teacher", tmp_path / "pairs.jsonl", "--max-texts", 4,
                    "--texts", tmp_path / "domain.jsonl", "--texts-field", "body", "-o", out, "--n-pairs", 300,
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    first_four = list(dict.fromkeys(t for a, b, _ in PAIRS for t in (a, b)))[:4]
    paired = {t for r in srsly.read_jsonl(out) for t in (r["text1"], r["text2"])}
    assert paired == set(first_four) | set(domain) and "teacher-labelled pairs of 6 texts" in result.output
    result = invoke("teacher-pairs", "fake-teacher", "--texts", tmp_path / "more.txt", "--texts",
                    tmp_path / "domain.jsonl", "--texts-field", "body", "-o", out, "--n-pairs", 300,
                    "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = list(srsly.read_jsonl(out))
    assert {t for r in rows for t in (r["text1"], r["text2"])} == set(domain) | {"Best place for a weekend trip?"}
    assert "teacher-labelled pairs of 3 texts" in result.output and "1 blank line" in result.output


def test_teacher_pairs_cli_needs_texts_and_names_bad_collection_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    result = invoke("teacher-pairs", "fake-teacher", "-o", tmp_path / "t.jsonl")
    assert result.exit_code == 1 and "no texts to pair" in result.output, result.output
    (tmp_path / "domain.jsonl").write_text('{"text": "fine"}\n{"body": "no text field"}\n', encoding="utf8")
    result = invoke("teacher-pairs", "fake-teacher", "--texts", tmp_path / "domain.jsonl", "-o", tmp_path / "t.jsonl")
    assert result.exit_code == 1 and "domain.jsonl:2: no 'text' field" in result.output, result.output
    assert not (tmp_path / "t.jsonl").exists()


def test_teacher_vectors_cli_writes_every_text(tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    table = tmp_path / "table"
    result = invoke("teacher-vectors", "fake-teacher", tmp_path / "pairs.jsonl", "-o", table, "--no-progress")
    assert result.exit_code == 0, result.output
    texts = sorted({t for a, b, _ in PAIRS for t in (a, b)})
    rows_of, vectors = load_teacher_table(tmp_path / "table")
    assert set(rows_of) == {text_key(t) for t in texts} and f"vectors of {len(texts)} texts" in result.output
    got = vectors[[rows_of[text_key(t)] for t in texts]]
    numpy.testing.assert_allclose(got, FakeTeacher().encode(texts, 64, True, True, False), atol=1e-3)
    # every text of a batch of those pairs has its row: TeacherScores.v1 trains on the file itself
    loss = TeacherScoresLoss(tmp_path / "table").for_texts([a for a, _, _ in PAIRS], [b for _, b, _ in PAIRS])
    assert callable(loss)


def test_teacher_vectors_cli_keeps_blank_texts(tmp_path, monkeypatch):
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    (tmp_path / "empty.jsonl").write_text("")
    result = invoke("teacher-vectors", "fake-teacher", tmp_path / "empty.jsonl", "-o", tmp_path / "table")
    assert result.exit_code == 1 and "no pairs found in" in result.output and "empty.jsonl" in result.output
    assert not (tmp_path / "table").exists()
    # a pair with an empty side trains like any other, so the table has the teacher's vector of it
    srsly.write_jsonl(tmp_path / "blank.jsonl", [{"text1": "", "text2": "Rain", "label": 0}])
    result = invoke("teacher-vectors", "fake-teacher", tmp_path / "blank.jsonl", "-o", tmp_path / "table")
    assert result.exit_code == 0 and "vectors of 2 texts" in result.output, result.output
    loss = TeacherScoresLoss(tmp_path / "table")
    numpy.testing.assert_allclose(loss.teacher([" "]), FakeTeacher().encode([""], 64, True, True, False), atol=1e-3)


def test_tfidf_neighbours_of_sparse_rows_match_brute_force():
    texts = [f"word{i % 7} word{i % 5} shared" for i in range(30)]
    rows = distill.tfidf_rows(texts)
    queries = numpy.asarray([0, 3, 29])
    found = nearest_neighbours(rows, queries, 4)
    dense = rows.toarray()
    for row, q in zip(found, queries):
        scores = dense @ dense[q]
        scores[q] = -numpy.inf
        assert sorted(scores[list(row)]) == pytest.approx(sorted(numpy.sort(scores)[::-1][:4]))


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    from .tiny_transformer import build_tiny_cross_encoder

    texts = [t for a, b, _ in PAIRS for t in (a, b)]
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("teacher") / "ce", texts)


def test_silver_pairs_from_a_cross_encoder_are_its_scores_and_seeded(cross_encoder, tmp_path):
    from spacy_siamese.teacher import cross_encoder_scores, load_scorer

    texts = sorted({t for a, b, _ in PAIRS for t in (a, b)})
    rows = distill.cross_encoder_pairs(str(cross_encoder), texts, n_pairs=12, neighbours=3, seed=4)
    assert len(rows) == 12 and all(r["text1"] != r["text2"] for r in rows)
    expected = cross_encoder_scores(load_scorer(cross_encoder), [(r["text1"], r["text2"]) for r in rows])
    numpy.testing.assert_allclose([r["label"] for r in rows], expected, atol=1e-5)
    assert rows == distill.cross_encoder_pairs(str(cross_encoder), texts, n_pairs=12, neighbours=3, seed=4)
    other = distill.cross_encoder_pairs(str(cross_encoder), texts, n_pairs=12, neighbours=3, seed=5)
    assert [(r["text1"], r["text2"]) for r in other] != [(r["text1"], r["text2"]) for r in rows]
    cached = distill.cross_encoder_pairs(
        str(cross_encoder), texts, n_pairs=12, neighbours=3, seed=4, cache_dir=tmp_path
    )
    assert cached == rows and len(list(tmp_path.glob("scores-*.npy"))) == 1


def test_teacher_pairs_command_labels_silver_pairs_with_a_cross_encoder(cross_encoder, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": label} for a, b, label in PAIRS])
    outputs = []
    for name in ("a.jsonl", "b.jsonl"):
        out = tmp_path / name
        result = invoke("teacher-pairs", cross_encoder, pairs, "-o", out, "--n-pairs", 9, "--seed", 2)
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
    scores = distill.teacher_pair_scores(str(cross_encoder), pairs)
    assert scores.shape == (4,) and ((scores > 0) & (scores < 1)).all()
    monkeypatch.setattr(distill, "load_teacher", lambda name: FakeTeacher())
    cosines = distill.teacher_pair_scores("any-bi-encoder", pairs)
    vectors = FakeTeacher().encode([t for p in pairs for t in p], 0, True, True, False)
    numpy.testing.assert_allclose(cosines, (vectors[0::2] * vectors[1::2]).sum(axis=1), atol=1e-5)
