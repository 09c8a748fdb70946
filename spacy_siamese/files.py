"""Files and directories written whole or not at all, outputs that are not inputs, and checksums."""

import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import sys
import uuid
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

PathLike = Union[str, Path]
# What a command writes to an output directory: a name for messages, and whether the names in an
# existing directory (this library's scratch entries left out) make it one, to be replaced whole.
DirKind = Tuple[str, Callable[[List[str]], bool]]
PIPELINE: DirKind = ("a pipeline directory", lambda names: {"config.cfg", "meta.json"} <= set(names))
# This library's scratch entries beside a path NAME (a directory one holds _MARK), and the run's process id.
SCRATCH = re.compile(r"\.(.+)\.(\d+)-[0-9a-f]{32}\.siamese-tmp")
_MARK = "siamese-scratch"


class PathConflictError(ValueError):
    """An output path is one of the command's inputs, another of its outputs, or a directory not of its kind."""


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


def _scratch(path: Path) -> Path:
    """A name beside `path` unique to this run: never a user's NAME.tmp or NAME.old."""
    return path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex}.siamese-tmp")


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":  # elsewhere os.kill would end the process
        return pid == os.getpid()
    try:
        os.kill(pid, 0)
        return True
    except OSError as err:
        return not isinstance(err, ProcessLookupError)  # PermissionError: another user's


def recover(path: PathLike) -> None:
    """Clean up after saves of `path` that were killed: move back the directory a save left between
    its two renames (where `path` is missing), and remove the scratch entries of runs that ended."""
    path = Path(path).absolute()
    entries = list(path.parent.iterdir()) if path.parent.is_dir() else []
    for entry in entries:
        match = SCRATCH.fullmatch(entry.name)
        if match is None or match[1] != path.name or _alive(int(match[2])) or entry.is_symlink():
            continue
        if entry.is_dir() and (entry / _MARK).is_file():
            if (entry / "old").is_dir() and not path.exists():
                os.replace(entry / "old", path)
            shutil.rmtree(entry)
        elif entry.is_file():
            entry.unlink()


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux's renameat2 with RENAME_EXCHANGE); False where it is not offered."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None) if sys.platform == "linux" else None
    if renameat2 is None:
        return False
    if renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # a kernel or file system without it
        return False
    raise OSError(code, os.strerror(code), str(b))


@contextmanager
def atomic_write(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to write `path` through: a scratch file beside it, renamed into place when
    the block ends without an error (a stream such as /dev/stdout is written in place)."""
    path = Path(path)
    if path.absolute().parts[1:2] in (("dev",), ("proc",)) or (path.exists() and not path.is_file()):
        with open(path, "wb") as stream:
            yield stream
        return
    recover(path)
    tmp = _scratch(path)
    try:
        with open(tmp, "xb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


@contextmanager
def atomic_directory(path: PathLike, *, kind: Optional[DirKind] = None) -> Iterator[Path]:
    """A scratch directory that replaces `path` only when the block ends without an error (on
    Linux in one atomic swap; elsewhere `recover` undoes a kill between two renames). With a
    `kind`, an existing directory not of that kind is refused (`check_outputs`)."""
    path = Path(path).absolute()
    check_outputs([], [], output_dirs=[path], kind=kind)
    recover(path)
    scratch = _scratch(path)
    new, old = scratch / "new", scratch / "old"
    scratch.mkdir(parents=True)
    (scratch / _MARK).touch()
    new.mkdir()
    try:
        yield new
        for root, _, names in os.walk(new):
            for name in names:
                with open(os.path.join(root, name), "rb") as file:
                    os.fsync(file.fileno())
        if not (path.exists() and _exchange(new, path)):
            if path.exists():
                os.replace(path, old)
            os.replace(new, path)
    except BaseException:
        if old.exists() and not path.exists():
            os.replace(old, path)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    shutil.rmtree(scratch, ignore_errors=True)
    _fsync_dir(path.parent)


def _same(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _inside(out: Path, directory: Path) -> bool:
    """Whether the existing `out` lies in `directory`, by its path or (a file) a hard link: the
    directory is walked only for a file with several links."""
    if not (out.exists() and directory.is_dir()):
        return False
    if out.resolve().is_relative_to(directory.resolve()):
        return True
    return (
        out.is_file()
        and out.stat().st_nlink > 1
        and any(_same(out, Path(root, name)) for root, _, names in os.walk(directory) for name in names)
    )


def _check_kind(path: Path, kind: DirKind) -> None:
    """Refuse an existing `path` neither empty nor a directory of `kind`: replacing it would delete the user's files."""
    name, holds = kind
    if not path.exists():
        return
    if not path.is_dir():
        raise PathConflictError(f"{path} is not a directory: {name} needs a directory of its own.")
    names = sorted(p.name for p in path.iterdir() if not SCRATCH.fullmatch(p.name))
    if names and not holds(names):
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise PathConflictError(
            f"{path} exists and is not {name} (it holds {shown}), and would be replaced whole: "
            "give a new or empty directory."
        )


def check_outputs(
    inputs: Iterable[Optional[PathLike]],
    outputs: Iterable[Optional[PathLike]],
    *,
    output_dirs: Iterable[PathLike] = (),
    kind: Optional[DirKind] = None,
) -> None:
    """Refuse, before any work, an output file that is one of the inputs (resolved paths and hard links
    included), a file of an input directory or another output; an output directory that is, holds or
    lies in an input; and, given the `kind` of directory a command writes, an output directory that
    exists and is neither empty nor of that kind. Raises PathConflictError."""
    ins = [Path(p) for p in inputs if p is not None]
    outs = [Path(p) for p in outputs if p is not None]
    for i, out in enumerate(outs):
        for src in ins:
            if _same(out, src) or _inside(out, src):
                raise PathConflictError(f"Output {out} is also an input ({src}): choose another output path.")
        for other in outs[i + 1 :]:
            if _same(out, other):
                raise PathConflictError(f"Two outputs are the same file ({out} and {other}): choose distinct paths.")
    for directory in map(Path, output_dirs):
        for src in ins:
            if _same(directory, src) or src.resolve().is_relative_to(directory.resolve()) or _inside(directory, src):
                raise PathConflictError(
                    f"Output directory {directory} would replace the input {src}: choose another output directory."
                )
        if kind is not None:
            _check_kind(directory, kind)


def write_jsonl(path: Path, rows: Iterable[Dict[str, Any]]) -> None:
    """JSONL with floats written in full (srsly rounds them), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        for row in rows:
            file.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf8"))


def sha256_file(path: PathLike, *, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()
