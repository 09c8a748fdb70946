"""Pair files as pair Examples for `spacy train`: one file (`PairCorpus`), or several datasets
tagged by name (`MultiPairCorpus`)."""

import inspect
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import ensure_path

from ..pair_examples import make_pair_example
from ..validation import check_dataset_name
from . import jsonl
from .base import PairFormatError, check_path
from .pair_files import FORMATS, detect_format, read_pairs


class PairCorpus:
    """A pair file as pair Examples, re-read every epoch; at most `limit` if > 0. format: "jsonl", "auto" or a
    format of `read_pairs`. dataset: tag every Example with this name."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        format: str = "auto",
        limit: int = 0,
        lenient: bool = False,
        dataset: Optional[str] = None,
    ) -> None:
        if dataset is not None:
            check_dataset_name(dataset)
        if path is None:
            raise ValueError(
                "spacy-siamese.PairCorpus.v1: the corpus path is None. Set paths.train and "
                "paths.dev in the config, or on the command line, e.g. "
                "`python -m spacy train config.cfg --paths.train train.jsonl --paths.dev dev.jsonl`."
            )
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r} (choose one of {', '.join(FORMATS)}).")
        whole = isinstance(limit, int) or (isinstance(limit, float) and limit.is_integer())
        if isinstance(limit, bool) or not whole:
            raise ValueError(f"limit must be a whole number (0 = all), got {limit!r}.")
        if not isinstance(lenient, bool):
            raise ValueError(f"lenient must be true or false, got {lenient!r}.")
        self.path = ensure_path(path)
        self.format = format
        self.limit = int(limit)
        self.lenient = lenient
        self.dataset = dataset

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.format == jsonl.NAME:
            check_canonical(self.path)
        records = read_pairs(self.path, format=self.format, lenient=self.lenient)
        try:
            for i, record in enumerate(records):
                if self.limit > 0 and i >= self.limit:
                    break
                yield make_pair_example(nlp, record.text1, record.text2, record.label, dataset=self.dataset)
        finally:
            records.close()  # emit the lenient-mode warning now, not at garbage collection


def check_canonical(path: Path) -> None:
    """A clear error for a raw pair file where JSON lines are expected (format = "jsonl")."""
    if path.suffix.lower() in (".jsonl", ".json") or not path.is_file():
        return  # read as JSON lines, or not found by the reader
    try:
        found = detect_format(path)
    except PairFormatError:
        return  # the JSON lines reader names the line
    if found != jsonl.NAME:
        raise PairFormatError(
            path,
            None,
            f'{path} is a {found} pair file, not JSON lines (format = "jsonl"): convert it first, '
            f"`python -m spacy_siamese convert {path} {path.with_suffix('.jsonl')}`, or read it through "
            f'the same parser with format = "{found}".',
        )


# The settings of a dataset of MultiPairCorpus: PairCorpus's, its name aside.
DATASET_FIELDS = [name for name in inspect.signature(PairCorpus).parameters if name != "dataset"]


class MultiPairCorpus:
    """Several pair files as pair Examples tagged with their dataset's name, in config order, re-read every epoch
    (e.g. `configs/general.cfg`). datasets: name (lower-case letters, digits, "_") -> {path, format, limit, lenient},
    as for PairCorpus.v1; DatasetLosses.v1, batch_by_dataset.v1 and dataset_scorer.v1 use the names.
    root: the directory relative paths are read from (default: the working directory)."""

    def __init__(self, datasets: Dict[str, Dict[str, Any]], *, root: Optional[Union[str, Path]] = None) -> None:
        where = "spacy-siamese.MultiPairCorpus.v1"
        if not datasets:
            raise ValueError(f"{where}: no datasets; give them as [corpora.NAME.datasets.DATASET] sections.")
        base = ensure_path(root) if root is not None else None
        self.corpora: Dict[str, PairCorpus] = {}
        for name, settings in datasets.items():
            check_dataset_name(name)
            if not isinstance(settings, Mapping):
                raise ValueError(f"{where}: dataset '{name}' must be a section with a path, got {settings!r}")
            unknown = sorted(set(settings) - set(DATASET_FIELDS))
            if unknown:
                hint = " (weights belong to spacy-siamese.batch_by_dataset.v1)" if "weight" in unknown else ""
                raise ValueError(
                    f"{where}: dataset '{name}' has unknown setting(s) {', '.join(unknown)}; "
                    f"it takes {', '.join(DATASET_FIELDS)}{hint}."
                )
            if settings.get("path") is None:
                raise ValueError(f"{where}: dataset '{name}' has no path.")
            path = ensure_path(settings["path"])
            if base is not None and not path.is_absolute():
                path = base / path
            try:
                self.corpora[name] = PairCorpus(**{**settings, "path": path}, dataset=name)
            except ValueError as err:
                raise ValueError(f"{where}: dataset '{name}': {err}") from None
            try:
                check_path(path, allow_dir=True)
            except (FileNotFoundError, ValueError) as err:
                hint = "" if base is not None else " Relative paths are read from `root` (not set)."
                raise type(err)(f"{where}: dataset '{name}': {err}.{hint}") from None

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for corpus in self.corpora.values():
            yield from corpus(nlp)
