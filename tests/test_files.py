import os

import pytest

from spacy_siamese.files import PathConflictError, atomic_directory, atomic_write, check_outputs, sha256_file


def test_atomic_write_leaves_no_partial_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as file:
            file.write(b"half")
            raise RuntimeError("killed")
    assert path.read_bytes() == b"old"
    assert not (tmp_path / "out.bin.tmp").exists()
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
    assert not (tmp_path / "model.tmp").exists() and not (tmp_path / "model.old").exists()


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


def test_atomic_directory_restores_a_directory_left_between_renames(tmp_path):
    target = tmp_path / "model"
    old = tmp_path / "model.old"
    old.mkdir()
    (old / "a").write_text("whole")
    with pytest.raises(RuntimeError):
        with atomic_directory(target):
            raise RuntimeError("killed again")
    assert (target / "a").read_text() == "whole"
