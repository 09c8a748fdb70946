"""The Ray Data engine in local mode: the same duplicate pairs as the single-process path. The
tests that start Ray are slow; those of the checks on the driver are not."""

import gzip
from pathlib import Path

import numpy
import pytest
import srsly

from spacy_siamese import find_duplicates
from spacy_siamese.distributed import engine as distributed
from spacy_siamese.search.dedupe import dedupe_threshold
from spacy_siamese.search.store import MemoryStore

from ..search.conftest import CORPUS

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_dedupe_equals_single_process(local_ray, models, tmp_path):
    nlp = models["cauchy"]
    nlp.to_disk(tmp_path / "model")
    texts = CORPUS * 2  # exact duplicates across the two halves
    rows = [{"id": i, "text": t} for i, t in enumerate(texts)]
    dataset = ray.data.from_items(rows[::-1], override_num_blocks=4)  # the order on Ray does not matter
    files = distributed.write_encoded(dataset, str(tmp_path / "model"), str(tmp_path / "vectors"), block_size=7)
    assert sorted(p.name for p in (tmp_path / "vectors").glob("*.parquet")) == files and len(files) > 2
    stored = distributed.read_vectors(str(tmp_path / "vectors"))
    ids, store = distributed.collect_vectors(stored)
    assert ids == list(range(len(texts)))
    assert store.model_id == nlp.get_pipe("siamese_similarity").model_id
    expected_vectors = nlp.get_pipe("siamese_similarity").vectors(list(nlp.pipe(texts)))
    numpy.testing.assert_array_equal(store.rows(numpy.arange(len(texts))), expected_vectors)
    for k in (3, 10):
        pairs = distributed.find_duplicates_dataset(stored, str(tmp_path / "model"), k=k, threshold=0.5, batch_size=25)
        assert pairs == find_duplicates(nlp, texts, k=k, threshold=0.5, progress=False)
        assert pairs


@pytest.mark.slow
def test_vectors_read_back_from_parquet_directly_equal_the_dataset(local_ray, models, tmp_path):
    nlp = models["hybrid_cauchy"]
    nlp.to_disk(tmp_path / "model")
    rows = [{"id": f"t{i:03d}", "text": t} for i, t in enumerate(CORPUS)]
    dataset = ray.data.from_items(rows)
    distributed.write_encoded(dataset, str(tmp_path / "model"), str(tmp_path / "vectors"), batch_size=16, workers=1)
    through_ray = distributed.collect_vectors(distributed.read_vectors(str(tmp_path / "vectors")))
    direct = distributed.collect_vectors(str(tmp_path / "vectors"))
    assert direct[0] == through_ray[0] == [r["id"] for r in rows]
    assert direct[1].model_id == through_ray[1].model_id == nlp.get_pipe("siamese_similarity").model_id
    everything = numpy.arange(len(rows))
    numpy.testing.assert_array_equal(direct[1].rows(everything), through_ray[1].rows(everything))
    assert direct[1].lexical is not None and direct[1].lexical.nnz < direct[1].lexical.shape[0] * 64  # sparse
    expected = nlp.get_pipe("siamese_similarity").vectors(list(nlp.pipe(CORPUS)))
    numpy.testing.assert_array_equal(direct[1].rows(everything), expected)


@pytest.mark.slow
def test_a_block_written_again_replaces_its_file_and_only_listed_files_are_read(local_ray, models, tmp_path):
    """A block Ray runs again (its actor died) writes the file of the same name; files of an
    earlier run in the same directory are left out when the run's own files are named."""
    nlp = models["hybrid_cauchy"]
    nlp.to_disk(tmp_path / "model")
    rows = [{"id": i, "text": t} for i, t in enumerate(CORPUS)]
    encoded = distributed.encode_dataset(ray.data.from_items(rows), str(tmp_path / "model"), workers=1)
    ids, store = distributed.collect_vectors(encoded)
    assert ids == list(range(len(CORPUS)))
    table = distributed.encoded_table(numpy.asarray(ids), store.rows(numpy.arange(len(ids))), 64, store.model_id)
    first = distributed.write_part(table.slice(0, 5), str(tmp_path / "vectors"))
    assert distributed.write_part(table.slice(0, 5), str(tmp_path / "vectors")) == first  # the retry
    rest = distributed.write_part(table.slice(5), str(tmp_path / "vectors"))
    assert sorted(p.name for p in (tmp_path / "vectors").iterdir()) == sorted([first, rest])  # no temporary left
    old = distributed.write_part(table.slice(0, 3), str(tmp_path / "vectors"))  # an earlier run's file
    with pytest.raises(ValueError, match="not unique"):
        distributed.collect_vectors(str(tmp_path / "vectors"))
    got_ids, got = distributed.collect_vectors(str(tmp_path / "vectors"), files=[rest, first])
    assert got_ids == ids and old not in (first, rest)
    everything = numpy.arange(len(ids))
    numpy.testing.assert_array_equal(got.rows(everything), store.rows(everything))


@pytest.mark.slow
def test_vectors_of_another_model_are_refused(local_ray, models, tmp_path):
    models["cauchy"].to_disk(tmp_path / "cauchy")
    models["cosine"].to_disk(tmp_path / "cosine")
    rows = [{"id": i, "text": t} for i, t in enumerate(CORPUS)]
    files = distributed.write_encoded(ray.data.from_items(rows), str(tmp_path / "cauchy"), str(tmp_path / "v"))
    with pytest.raises(ValueError, match="encoded by model"):
        distributed.find_duplicates_dataset(str(tmp_path / "v"), str(tmp_path / "cosine"), files=files)


@pytest.mark.slow
def test_rows_without_a_text_or_an_id_are_refused_in_the_actors(local_ray, models, tmp_path):
    """A remote input is not read on the driver: the actors refuse a null text (Ray Data's reading
    of a missing field) instead of encoding the text "None", and the driver raises their error."""
    models["cauchy"].to_disk(tmp_path / "model")
    dataset = ray.data.from_items([{"id": 1, "text": "a"}, {"id": 2, "text": None}, {"id": 3, "text": "c"}])
    with pytest.raises(ValueError) as info:
        distributed.write_encoded(dataset, str(tmp_path / "model"), str(tmp_path / "vectors"))
    assert str(info.value) == "1 record(s) without a string 'text' field (ids 2)"


@pytest.mark.parametrize(
    "batch,message",
    [
        (
            {"id": numpy.array([1]), "body": numpy.array(["a"])},
            "The records have no 'text' field (fields: 'id', 'body')",
        ),
        ({"text": numpy.array(["a"])}, "The records have no 'id' field (fields: 'text')"),
        (
            {"id": numpy.array([1, None]), "text": numpy.array(["a", "b"])},
            "1 record(s) without an 'id' in a block of 2",
        ),
        (
            {"id": numpy.arange(7), "text": numpy.array([None] * 7)},
            "7 record(s) without a string 'text' field (ids 0, 1, 2, 3, 4, ...)",
        ),
    ],
)
def test_batch_problem(batch, message):
    assert distributed.batch_problem(batch, "text", "id") == message
    assert (
        distributed.batch_problem({"id": numpy.array([1]), "text": numpy.array(["a"], dtype=object)}, "text", "id")
        is None
    )


def test_check_jsonl_reads_a_file_or_a_directory(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": 1, "text": "a"}\n\n{"id": 2, "text": "b"}\n', encoding="utf8")
    (tmp_path / "b.json").write_text('{"id": 3, "text": "c"}\n', encoding="utf8")
    (tmp_path / "notes.txt").write_text("not read\n", encoding="utf8")
    assert distributed.check_jsonl(tmp_path / "a.jsonl") == 2
    assert distributed.check_jsonl(tmp_path) == 3
    (tmp_path / "c.jsonl").write_text('{"id": 4, "text": "d"}\n{"id": 5}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"c.jsonl:2: no 'text' field"):
        distributed.check_jsonl(tmp_path)


def test_jsonl_files_are_a_directorys_top_level_jsonl_files(tmp_path):
    for name in ["b.ndjson", "a.jsonl", "c.JSON", "d.jsonl.gz", "e.json.zst", "notes.txt", "map.geojson"]:
        (tmp_path / name).write_text("", encoding="utf8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.jsonl").write_text("", encoding="utf8")
    (tmp_path / "g.jsonl").mkdir()  # a directory, named like a file
    names = ["a.jsonl", "b.ndjson", "c.JSON", "d.jsonl.gz", "e.json.zst"]
    assert distributed.jsonl_files(tmp_path) == [tmp_path / name for name in names]
    assert distributed.jsonl_files(tmp_path / "notes.txt") == [tmp_path / "notes.txt"]  # a file, as given


def test_check_jsonl_checks_a_directorys_top_level_and_leaves_compressed_files_to_ray(tmp_path):
    """Files in subdirectories were left unchecked, yet Ray read them; a compressed file given
    alone was checked as text (invalid UTF-8), though Ray reads it."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl").write_text('{"id": 1, "text": "a"}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"no .jsonl, .ndjson or .json files .* subdirectories are not read"):
        distributed.check_jsonl(tmp_path)
    with gzip.open(tmp_path / "b.jsonl.gz", "wt", encoding="utf8") as file:
        file.write('{"id": 2, "text": "b"}\n')
    assert distributed.check_jsonl(tmp_path / "b.jsonl.gz") == distributed.check_jsonl(tmp_path) == 0


class _Stop(Exception):
    """Raised where Ray would search."""


@pytest.fixture
def no_ray_run(models, monkeypatch):
    """`dedupe_jsonl` up to the search, without Ray: it records what it gives `read_json` and each
    threshold it resolves; the collection "encoded" is CORPUS[:6], and the search raises _Stop."""

    nlp = models["cauchy"]
    pipe = nlp.get_pipe("siamese_similarity")
    store = MemoryStore(pipe.vectors(list(nlp.pipe(CORPUS[:6]))), None, pipe.model_id)
    seen = {"thresholds": []}

    def read_json(paths, **kwargs):
        seen.update(paths=paths, **kwargs)
        return "dataset"

    def resolve(pipe, threshold):
        seen["thresholds"].append(threshold)
        return dedupe_threshold(pipe, threshold)

    def search(*args, **kwargs):
        raise _Stop

    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "put", lambda value: "state")
    monkeypatch.setattr(ray.data, "read_json", read_json)
    monkeypatch.setattr(ray.data, "from_numpy", search)
    monkeypatch.setattr(distributed, "dedupe_threshold", resolve)
    monkeypatch.setattr(distributed, "write_encoded", lambda *args, **kwargs: ["part.parquet"])
    monkeypatch.setattr(distributed, "collect_vectors", lambda *args, **kwargs: (list(range(6)), store))
    return seen


def test_dedupe_jsonl_gives_ray_the_files_it_checked(no_ray_run, models, tmp_path):
    """Ray read the directory, its subdirectories included, and so files that were never checked."""
    srsly.write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "a"}])
    (tmp_path / "b.ndjson.gz").write_bytes(gzip.compress(b'{"id": 2, "text": "b"}\n'))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "a.jsonl").write_text("not JSON\n", encoding="utf8")
    with pytest.raises(_Stop):
        distributed.dedupe_jsonl("model", str(tmp_path), str(tmp_path / "v"), threshold=0.5, nlp=models["cauchy"])
    assert no_ray_run["paths"] == [str(tmp_path / "a.jsonl"), str(tmp_path / "b.ndjson.gz")]
    assert no_ray_run["file_extensions"] is None  # Ray reads every listed file


@pytest.mark.filterwarnings("ignore:The 'siamese_similarity' pipe has no dedupe threshold")
@pytest.mark.parametrize("threshold", [None, 0.5])
def test_dedupe_jsonl_resolves_the_threshold_once(no_ray_run, models, tmp_path, threshold):
    """The threshold is resolved before Ray starts, and the search gets that value (a missing one is
    not looked up, and warned about, again)."""
    srsly.write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "a"}])
    with pytest.raises(_Stop):
        distributed.dedupe_jsonl(
            "model", str(tmp_path / "a.jsonl"), str(tmp_path / "v"), threshold=threshold, nlp=models["cauchy"]
        )
    resolved = dedupe_threshold(models["cauchy"].get_pipe("siamese_similarity"), threshold)
    assert no_ray_run["thresholds"] == [threshold, resolved]
    assert no_ray_run["paths"] == [str(tmp_path / "a.jsonl")]


def test_find_duplicates_dataset_checks_the_threshold_before_reading_vectors(models, tmp_path):
    """A bad threshold was found only after the vectors were read and the index built."""
    with pytest.raises(ValueError, match="The dedupe threshold 2 is outside the range"):
        distributed.find_duplicates_dataset(str(tmp_path / "missing"), "model", threshold=2, nlp=models["cauchy"])


def test_ray_error_cause_unwraps_chains_and_stops_on_a_cycle():
    inner = ValueError("bad")
    outer = RuntimeError("wrapped")
    outer.__cause__ = inner
    assert distributed.ray_error_cause(outer) is inner
    loop = RuntimeError("loop")
    loop.__cause__ = loop
    assert distributed.ray_error_cause(loop) is loop


@pytest.mark.slow
def test_dedupe_jsonl_reports_a_bad_row_of_an_unchecked_input_with_the_input(local_ray, models, tmp_path):
    """A compressed file is not read on the driver: the actors' error comes back naming the input."""
    import gzip

    models["cauchy"].to_disk(tmp_path / "model")
    (tmp_path / "input").mkdir()
    with gzip.open(tmp_path / "input" / "part.jsonl.gz", "wt", encoding="utf8") as file:
        file.write('{"id": 1, "text": "a"}\n{"id": 2, "body": "x"}\n')
    with pytest.raises(ValueError) as info:
        distributed.dedupe_jsonl(str(tmp_path / "model"), str(tmp_path / "input"), str(tmp_path / "v"), progress=False)
    assert str(info.value) == f"{tmp_path / 'input'}: 1 record(s) without a string 'text' field (ids 2)"


@pytest.mark.slow
def test_dedupe_jsonl_reads_the_ndjson_files_of_a_directory(local_ray, models, tmp_path):
    """A directory's .ndjson files are checked as part of the collection and encoded too (Ray Data
    reads only .json and .jsonl by default: they were left out without a word); a compressed file
    is read too, a subdirectory's files are not (Ray read them: here, ids seen twice)."""
    nlp = models["cauchy"]
    nlp.to_disk(tmp_path / "model")
    rows = [{"id": i, "text": t} for i, t in enumerate(CORPUS)]
    (tmp_path / "input" / "old").mkdir(parents=True)
    srsly.write_jsonl(tmp_path / "input" / "a.jsonl", rows[:20])
    srsly.write_jsonl(tmp_path / "input" / "b.ndjson", rows[20:30])
    srsly.write_gzip_jsonl(tmp_path / "input" / "c.jsonl.gz", rows[30:])
    srsly.write_jsonl(tmp_path / "input" / "old" / "a.jsonl", rows[:20])
    assert distributed.check_jsonl(tmp_path / "input") == 30
    pairs = distributed.dedupe_jsonl(
        str(tmp_path / "model"), str(tmp_path / "input"), str(tmp_path / "v"), k=3, threshold=0.5, progress=False
    )
    assert distributed.collect_vectors(str(tmp_path / "v"))[0] == list(range(len(rows)))
    assert pairs == find_duplicates(nlp, CORPUS, k=3, threshold=0.5, progress=False) and pairs


def test_a_killed_runs_vectors_are_not_mixed_into_a_rerun(no_ray_run, models, monkeypatch, tmp_path):
    """A run writes its Parquet files beside --vectors and puts them in its place when encoding is
    done: the files a killed run left (in the directory beside, or an earlier run's in --vectors)
    are gone, and a directory holding anything else is refused before Ray starts."""
    srsly.write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "text": "a"}])
    vectors, beside = tmp_path / "v", tmp_path / f".v.999999999-{'0' * 32}.siamese-tmp" / "new"  # a killed run's
    for directory, name in ((vectors, "part-" + "0" * 24 + ".parquet"), (beside, "part-" + "1" * 24 + ".parquet")):
        directory.mkdir(parents=True)
        (directory / name).write_bytes(b"stale")
    (beside.parent / "siamese-scratch").touch()  # the mark of the library's scratch directories
    written, NEW = [], "part-" + "2" * 24 + ".parquet"

    def write_encoded(dataset, model, path, **settings):
        written.append(path)
        (Path(path) / NEW).write_bytes(b"new")
        return [NEW]

    monkeypatch.setattr(distributed, "write_encoded", write_encoded)
    run = (str(tmp_path / "a.jsonl"), str(vectors))
    with pytest.raises(_Stop):
        distributed.dedupe_jsonl("model", *run, threshold=0.5, nlp=models["cauchy"])
    assert written[0].endswith(".siamese-tmp/new") and sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "v"]
    assert [p.name for p in vectors.iterdir()] == [NEW]
    (vectors / "notes.txt").write_text("mine", encoding="utf8")
    with pytest.raises(ValueError, match="holds other files than the Parquet vectors of a run \\(notes.txt\\)"):
        distributed.dedupe_jsonl("model", *run, threshold=0.5, nlp=models["cauchy"])
    assert (vectors / "notes.txt").read_text(encoding="utf8") == "mine" and len(written) == 1
