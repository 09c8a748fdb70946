"""Helpers shared by the corpus tests."""

import io
import re
import tarfile
import warnings
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple, Union

import pytest

from spacy_siamese.corpora import EmptyTextWarning, PairFormatError, PairRecord, read_pairs


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf8", newline="")
    return path


def error_for(path: Path, **kwargs) -> PairFormatError:
    with pytest.raises(PairFormatError) as excinfo:
        list(read_pairs(path, **kwargs))
    return excinfo.value


def read_lenient(path: Path, **kwargs) -> Tuple[List[PairRecord], int]:
    """(records, number of skipped lines) of a lenient read."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(read_pairs(path, lenient=True, **kwargs))
    return records, skipped_count(caught)


def skipped_count(caught: Iterable[warnings.WarningMessage]) -> int:
    counts = [re.match(r"Skipped (\d+) malformed", str(w.message)) for w in caught]
    return sum(int(m.group(1)) for m in counts if m)


def read_warned(path: Path, **kwargs) -> Tuple[List[PairRecord], List[warnings.WarningMessage]]:
    """(records, every warning) of a read."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(read_pairs(path, **kwargs))
    return records, caught


EMPTY_WARNING = re.compile(
    r"(\d+) of the (\d+) pair\(s\) read from (.+) have an empty or whitespace-only text1 or text2 "
    r"\(line ([\d, ]+?)(?: and (\d+) more)?\)\."
)


def check_empty_text_warning(caught: Iterable[warnings.WarningMessage], path: Path, records: Sequence[PairRecord]):
    """Reading `records` from `path` gave one EmptyTextWarning naming the file, how many pairs have
    an empty or whitespace-only side and the first lines of them; none if no pair has one."""
    messages = [str(w.message) for w in caught if issubclass(w.category, EmptyTextWarning)]
    empty = [r.line for r in records if not r.text1.strip() or not r.text2.strip()]
    if not empty:
        assert messages == []
        return
    assert len(messages) == 1, messages
    match = EMPTY_WARNING.match(messages[0])
    assert match, messages[0]
    assert (int(match[1]), int(match[2]), match[3]) == (len(empty), len(records), str(path))
    assert [int(n) for n in match[4].split(", ")] == empty[:5]
    assert int(match[5] or 0) == len(empty[5:])


def make_tar(path: Path, members: Iterable[Tuple[str, Union[str, bytes]]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members:
            data = text.encode("utf8") if isinstance(text, str) else text
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


# Hypothesis profiles: bounded and deterministic in the default suite, longer behind `-m slow`.
try:
    from hypothesis import HealthCheck, settings

    _CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
    BOUNDED = settings(max_examples=40, deadline=None, database=None, derandomize=True, suppress_health_check=_CHECKS)
    LONG = settings(max_examples=1000, deadline=None, database=None, suppress_health_check=_CHECKS)
    PROFILES = [pytest.param(BOUNDED, id="bounded"), pytest.param(LONG, id="long", marks=pytest.mark.slow)]
except ImportError:  # pragma: no cover
    PROFILES = []
