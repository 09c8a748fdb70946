import os
import subprocess
import sys

import pytest
import spacy

from spacy_siamese import files
from spacy_siamese.files import (
    PIPELINE,
    PathConflictError,
    atomic_directory,
    atomic_write,
    check_outputs,
    recover,
    sha256_file,
)

# A save of a blank pipeline to argv[1], killed (os._exit) at argv[2]: "write" inside an atomic_write's
# block, "swap" at the first step after the old directory left argv[1], "between" there with the two
# renames of the fallback. files.py imports no package module, so it runs alone (and quickly).
KILLED = """
import os, shutil, sys
sys.path.insert(0, {here!r})
import files
target, point, source = sys.argv[1:]
if point == "write":
    with files.atomic_write(target) as file:
        file.write(b"half")
        os._exit(9)
replace = os.replace
def moved(src, dst):
    replace(src, dst)
    if str(src) == target:
        os._exit(9)
def killed(*args, **kwargs):
    os._exit(9)
if point == "between":
    files._exchange = lambda a, b: False
with files.atomic_directory(target) as tmp:
    shutil.copytree(source, tmp, dirs_exist_ok=True)
    os.replace, shutil.rmtree = moved, killed
"""


def _kill(target, point, source=""):
    script = KILLED.format(here=os.path.dirname(files.__file__))
    result = subprocess.run([sys.executable, "-c", script, str(target), point, str(source)], capture_output=True)
    assert result.returncode == 9, result.stderr.decode()


def _scratch(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".siamese-tmp"))


def test_atomic_write_leaves_no_partial_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as file:
            file.write(b"half")
            raise RuntimeError("killed")
    assert path.read_bytes() == b"old"
    assert _scratch(tmp_path) == []
    with atomic_write(path) as file:
        file.write(b"new")
    assert path.read_bytes() == b"new"


def test_atomic_directory_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "a").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as tmp:
            (tmp / "a").write_text("half")
            raise RuntimeError("killed")
    assert (target / "a").read_text() == "old"
    with atomic_directory(target) as tmp:
        (tmp / "b").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_check_outputs_refuses_inputs_links_and_repeats(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("x\n")
    link = tmp_path / "link.jsonl"
    os.link(src, link)
    with pytest.raises(PathConflictError, match="also an input"):
        check_outputs([src], [tmp_path / "." / "in.jsonl"])
    with pytest.raises(PathConflictError, match="also an input"):
        check_outputs([src], [link])
    with pytest.raises(PathConflictError, match="same file"):
        check_outputs([src], [tmp_path / "a", tmp_path / "a"])
    with pytest.raises(PathConflictError, match="would replace the input"):
        check_outputs([src], [], output_dirs=[tmp_path])
    check_outputs([src], [tmp_path / "out.jsonl"], output_dirs=[tmp_path / "index"])


def test_sha256_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_saves_never_touch_a_users_tmp_and_old(tmp_path):
    """Issue 75, defect 3: a directory save deleted a user's NAME.tmp and NAME.old beside it."""
    for name in ("model.tmp", "model.old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "backup.txt").write_text("mine")
    for name in ("out.bin.tmp", "out.bin.old"):
        (tmp_path / name).write_text("mine")
    with atomic_directory(tmp_path / "model") as tmp:
        (tmp / "a").write_text("new")
    with pytest.raises(RuntimeError):
        with atomic_directory(tmp_path / "model"):
            raise RuntimeError("failed")
    with atomic_write(tmp_path / "out.bin") as file:
        file.write(b"new")
    assert [(tmp_path / name / "backup.txt").read_text() for name in ("model.tmp", "model.old")] == ["mine"] * 2
    assert [(tmp_path / name).read_text() for name in ("out.bin.tmp", "out.bin.old")] == ["mine"] * 2
    assert (tmp_path / "model" / "a").read_text() == "new" and _scratch(tmp_path) == []


def test_a_save_killed_at_its_swap_leaves_a_loadable_pipeline(tmp_path):
    """Issue 75, defect 8: a kill between the two renames left only MODEL.old (spaCy's E050); the
    directories are swapped in one step, and the next save removes what the killed one left."""
    spacy.blank("en").to_disk(tmp_path / "source")
    model = tmp_path / "model"
    spacy.blank("de").to_disk(model)
    _kill(model, "swap", tmp_path / "source")
    assert spacy.load(model).lang == "en"  # the new pipeline, whole
    with atomic_directory(model) as tmp:
        spacy.blank("fr").to_disk(tmp)
    assert spacy.load(model).lang == "fr" and sorted(p.name for p in tmp_path.iterdir()) == ["model", "source"]


def test_a_directory_left_between_the_fallbacks_renames_is_moved_back(tmp_path):
    """Where the swap is missing, a kill between the two renames leaves the old directory in this
    run's scratch directory: `recover` (which load_pipeline calls) and the next save move it back."""
    spacy.blank("en").to_disk(tmp_path / "source")
    model = tmp_path / "model"
    spacy.blank("de").to_disk(model)
    _kill(model, "between", tmp_path / "source")
    assert not model.exists() and len(_scratch(tmp_path)) == 1
    recover(model)
    assert spacy.load(model).lang == "de" and _scratch(tmp_path) == []
    _kill(model, "between", tmp_path / "source")
    with pytest.raises(RuntimeError):
        with atomic_directory(model):
            assert spacy.load(model).lang == "de"  # moved back before the save starts
            raise RuntimeError("failed")
    assert spacy.load(model).lang == "de" and sorted(p.name for p in tmp_path.iterdir()) == ["model", "source"]


def test_scratch_files_of_killed_writes_do_not_accumulate(tmp_path):
    """Issue 75, defect 8: `*.tmp` files were left after kills; the next write of the path removes
    this library's (never a user's `NAME.tmp`), not those of a run still going."""
    out = tmp_path / "out.bin"
    (tmp_path / "out.bin.tmp").write_text("mine")
    _kill(out, "write")
    _kill(out, "write")  # which removes the first one's
    assert len(_scratch(tmp_path)) == 1
    running = tmp_path / f".out.bin.{os.getpid()}-{'0' * 32}.siamese-tmp"  # this process: still going
    running.write_bytes(b"")
    with atomic_write(out) as file:
        file.write(b"new")
    assert out.read_bytes() == b"new" and (tmp_path / "out.bin.tmp").read_text() == "mine"
    assert _scratch(tmp_path) == [running.name]


def test_an_output_directory_not_of_the_commands_kind_is_refused(tmp_path):
    """Issue 75, defect 1: a directory holding the user's files is never replaced by a pipeline (or
    an index, a teacher); an empty one, one of the kind, or one with only scratch entries is."""
    (tmp_path / "notes" / "sub").mkdir(parents=True)
    (tmp_path / "notes" / "notes.txt").write_text("mine")
    with pytest.raises(
        PathConflictError, match="notes exists and is not a pipeline directory \\(it holds notes.txt, sub\\)"
    ):
        check_outputs([], [], output_dirs=[tmp_path / "notes"], kind=PIPELINE)
    with pytest.raises(PathConflictError, match="is not a pipeline directory"):
        with atomic_directory(tmp_path / "notes", kind=PIPELINE) as tmp:  # a library save
            spacy.blank("en").to_disk(tmp)
    assert sorted(p.name for p in (tmp_path / "notes").rglob("*")) == ["notes.txt", "sub"]
    with pytest.raises(PathConflictError, match="is not a directory"):
        check_outputs([], [], output_dirs=[tmp_path / "notes" / "notes.txt"], kind=PIPELINE)
    # a spaCy project folder: a training config beside the user's files is no pipeline
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "config.cfg").write_text("[nlp]")
    (tmp_path / "project" / "notes.txt").write_text("mine")
    with pytest.raises(PathConflictError, match="project exists and is not a pipeline directory"):
        check_outputs([], [], output_dirs=[tmp_path / "project"], kind=PIPELINE)
    spacy.blank("en").to_disk(tmp_path / "model")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / f".x.1-{'0' * 32}.siamese-tmp").write_bytes(b"")
    for fine in ("model", "empty", "new"):
        check_outputs([], [], output_dirs=[tmp_path / fine], kind=PIPELINE)


def test_a_file_of_an_input_directory_is_an_input(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.cfg").write_text("[nlp]")
    os.link(tmp_path / "model" / "config.cfg", tmp_path / "link.cfg")
    for out in (tmp_path / "model" / "config.cfg", tmp_path / "link.cfg"):
        with pytest.raises(PathConflictError, match="also an input"):
            check_outputs([tmp_path / "model"], [out])
    (tmp_path / "model" / "vocab").mkdir()
    with pytest.raises(PathConflictError, match="would replace the input"):
        check_outputs([tmp_path / "model"], [], output_dirs=[tmp_path / "model" / "vocab"])
    check_outputs([tmp_path / "model"], [tmp_path / "model" / "new.json", tmp_path / "out.json"])


def test_a_stream_output_is_written_in_place_not_replaced(tmp_path):
    """`--output-json /dev/stdout` (or a FIFO) is written into, never renamed over: a save used to
    replace the FIFO (and, as root, /dev/stdout or /dev/null) with a regular file."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    read = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        with atomic_write(fifo) as file:
            file.write(b"streamed")
        assert read.communicate(timeout=10)[0] == b"streamed"
    finally:
        read.kill()
    assert not fifo.is_file() and fifo.exists() and _scratch(tmp_path) == []
