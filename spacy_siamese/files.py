"""Files and directories written whole or not at all, outputs that are not inputs, and checksums."""

import hashlib
import os
import shutil
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Optional, Union

PathLike = Union[str, Path]


class PathConflictError(ValueError):
    """An output path is one of the command's inputs, or another of its outputs."""


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # not every platform opens directories
        return
    try:
        with suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_write(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: written beside it under a temporary name, flushed to disk
    and renamed into place when the block ends, so a process killed (or a disk filled) while writing
    leaves no partial file at `path`; on an error the temporary file is removed."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


@contextmanager
def atomic_directory(path: PathLike) -> Iterator[Path]:
    """A fresh directory to fill in place of `path`: the block writes into a sibling directory, which
    replaces `path` (if any) only when the block ends without an error. A kill at any moment leaves
    either the old directory or the new one at `path` (or, between the two renames, the old one under
    `<name>.old`, which the next call moves back before it starts)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    old = path.with_name(path.name + ".old")
    if old.exists() and not path.exists():
        os.replace(old, path)  # a kill between the two renames: the old directory is the whole one
    for stale in (tmp, old):
        if stale.exists():
            shutil.rmtree(stale)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        for root, _, names in os.walk(tmp):
            for name in names:
                with open(os.path.join(root, name), "rb") as file:
                    os.fsync(file.fileno())
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not path.exists():
            os.replace(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(path.parent)


def _same(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def check_outputs(
    inputs: Iterable[Optional[PathLike]], outputs: Iterable[Optional[PathLike]], *, output_dirs: Iterable[PathLike] = ()
) -> None:
    """Refuse, before any work, an output file that is one of the inputs (resolved paths and hard links
    included) or another output, and an output directory that is or holds an input."""
    ins = [Path(p) for p in inputs if p is not None]
    outs = [Path(p) for p in outputs if p is not None]
    dirs = [Path(p) for p in output_dirs]
    for i, out in enumerate(outs):
        for src in ins:
            if _same(out, src):
                raise PathConflictError(f"Output {out} is also an input ({src}): choose another output path.")
        for other in outs[i + 1 :]:
            if _same(out, other):
                raise PathConflictError(f"Two outputs are the same file ({out} and {other}): choose distinct paths.")
    for directory in dirs:
        for src in ins:
            if _same(directory, src) or src.resolve().is_relative_to(directory.resolve()):
                raise PathConflictError(
                    f"Output directory {directory} would replace the input {src}: choose another output directory."
                )


def sha256_file(path: PathLike, *, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()
