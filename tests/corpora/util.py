"""Helpers shared by the corpus tests."""

import io
import re
import tarfile
import warnings
from pathlib import Path
from typing import Iterable, List, Tuple, Union

import pytest

from spacy_siamese.corpora import PairFormatError, PairRecord, read_pairs


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
