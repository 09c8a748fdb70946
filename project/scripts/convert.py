"""Convert the verified raw pair files of a dataset into train/dev JSONL files
(`{"text1": ..., "text2": ..., "label": ...}` per line), which the
"spacy-siamese.PairCorpus.v1" reader reads directly.

quora
    From the local mirror: train = quora/train.tsv, dev = quora/dev.tsv (the BiMPM
    dev split; the reader undoes its CoreNLP tokenization). From the official
    `quora_duplicate_questions.tsv`: a seeded, question-disjoint split (below)
    with --dev-fraction of the pairs in dev.
stackexchange
    askubuntu.tsv + meta.tsv ("stackexchange" format: the reader strips the HTML
    and keeps "title\\nbody"). Seeded, question-disjoint split, stratified by site
    and label.

Question-disjoint split: every question gets a key (StackExchange: its normalized
title; Quora: its normalized text). Keys that occur in the same pair are joined, so each
connected component of the pair graph (scipy's `connected_components`) is kept on one
side. Components are shuffled with `random.Random(seed)` and taken into dev while no
(site, label) stratum exceeds its share of --dev-fraction; the rest is train. No key,
and so no question, occurs on both sides (checked before writing).

Usage:
    python scripts/convert.py stackexchange corpus/stackexchange/sources.json corpus/stackexchange \
        --seed 0 --dev-fraction 0.2
"""

import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Sequence, Set, Tuple

import numpy
import srsly
import typer
from convert_errors import exit_on_error, require_sources
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from spacy_siamese.corpora import PairRecord, read_pairs

Sourced = Tuple[str, PairRecord]  # (file the pair came from, e.g. "askubuntu"; the pair)
_WORD = re.compile(r"\w+")


def normalize(text: str) -> str:
    """Lowercased word tokens: differences in case, spacing and punctuation vanish."""
    return " ".join(_WORD.findall(text.lower()))


def title_key(text: str) -> str:
    """A StackExchange question as the reader returns it is "title\\nbody"."""
    return normalize(text.split("\n", 1)[0])


def read_file(path: Path, format: str) -> List[Sourced]:
    return [(path.stem, pair) for pair in read_pairs(path, format=format)]


def components(pairs: Sequence[Sourced], key: Callable[[str], str]) -> List[List[int]]:
    """Pair indices grouped by connected component of the question graph, in
    order of first appearance."""
    ids: Dict[str, int] = {}
    ends = numpy.asarray(
        [[ids.setdefault(key(p.text1), len(ids)), ids.setdefault(key(p.text2), len(ids))] for _, p in pairs],
        dtype="int64",
    ).reshape(-1, 2)
    graph = coo_matrix((numpy.ones(len(ends)), (ends[:, 0], ends[:, 1])), shape=(len(ids), len(ids)))
    _, component = connected_components(graph, directed=False)
    groups: Dict[int, List[int]] = defaultdict(list)
    for i, first in enumerate(ends[:, 0]):
        groups[int(component[first])].append(i)
    return list(groups.values())


def grouped_split(
    pairs: Sequence[Sourced], key: Callable[[str], str], dev_fraction: float, seed: int
) -> Tuple[List[Sourced], List[Sourced]]:
    """Seeded question-disjoint train/dev split, stratified by (source, label)."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"--dev-fraction must be between 0 and 1, got {dev_fraction}")
    strata = [(source, p.label >= 0.5) for source, p in pairs]
    target = {s: round(n * dev_fraction) for s, n in Counter(strata).items()}
    comps = components(pairs, key)
    random.Random(seed).shuffle(comps)
    taken: Counter = Counter()
    dev_idx: List[int] = []
    for comp in comps:
        need = Counter(strata[i] for i in comp)
        if all(taken[s] + n <= target[s] for s, n in need.items()):
            taken.update(need)
            dev_idx.extend(comp)
    in_dev = set(dev_idx)
    train = [p for i, p in enumerate(pairs) if i not in in_dev]
    dev = [p for i, p in enumerate(pairs) if i in in_dev]  # source order kept
    if not train or not dev:
        raise ValueError(
            f"Cannot split {len(pairs)} pair(s) into non-empty question-disjoint train and dev sets "
            f"(dev fraction {dev_fraction}): the dataset is too small or one question links them all."
        )
    shared = questions(train, key) & questions(dev, key)
    assert not shared, f"{len(shared)} question(s) on both sides of the split"
    return train, dev


def questions(pairs: Iterable[Sourced], key: Callable[[str], str]) -> Set[str]:
    return {key(text) for _, p in pairs for text in (p.text1, p.text2)}


def write_jsonl(path: Path, pairs: Iterable[Sourced]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_jsonl(path, ({"text1": p.text1, "text2": p.text2, "label": p.label} for _, p in pairs))


def describe(pairs: Sequence[Sourced], key: Callable[[str], str]) -> Dict[str, object]:
    by_source = Counter(source for source, _ in pairs)
    return {
        "pairs": len(pairs),
        "positive": sum(p.label >= 0.5 for _, p in pairs),
        "distinct_questions": len(questions(pairs, key)),
        "by_source": {
            s: {"pairs": n, "positive": sum(p.label >= 0.5 for source, p in pairs if source == s)}
            for s, n in sorted(by_source.items())
        },
    }


def convert(dataset: str, sources: Path, output_dir: Path, seed: int, dev_fraction: float) -> Dict[str, object]:
    info = json.loads(sources.read_text(encoding="utf8"))
    files = {rec["name"]: Path(rec["path"]) for rec in info["files"]}
    if dataset == "quora" and "quora/train.tsv" in files:
        train = read_file(files["quora/train.tsv"], "tsv")
        dev = read_file(files["quora/dev.tsv"], "bimpm")
        key, split = normalize, "BiMPM dev split from the mirror (pair-disjoint, not question-disjoint)"
    elif dataset == "quora":
        key = normalize
        pairs = read_file(files["quora/quora_duplicate_questions.tsv"], "tsv")
        train, dev = grouped_split(pairs, key, dev_fraction, seed)
        split = f"question-disjoint (normalized text), seed {seed}, dev fraction {dev_fraction}"
    elif dataset == "stackexchange":
        pairs = []
        for name in ("stackexchange/askubuntu.tsv", "stackexchange/meta.tsv"):
            pairs.extend(read_file(files[name], "stackexchange"))
        key = title_key
        train, dev = grouped_split(pairs, key, dev_fraction, seed)
        split = (
            f"question-disjoint (normalized title, pair-graph components), seed {seed}, "
            f"dev fraction {dev_fraction}, stratified by site and label"
        )
    else:
        raise ValueError(f"Unknown dataset {dataset!r}")
    write_jsonl(output_dir / "train.jsonl", train)
    write_jsonl(output_dir / "dev.jsonl", dev)
    stats = {
        "dataset": dataset,
        "source": info.get("source"),
        "split": split,
        "train": describe(train, key),
        "dev": describe(dev, key),
        "questions_on_both_sides": len(questions(train, key) & questions(dev, key)),
    }
    (output_dir / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf8")
    return stats


def main(
    dataset: str = typer.Argument(..., help="quora or stackexchange"),
    sources: Path = typer.Argument(..., help="sources.json written by the assets step"),
    output_dir: Path = typer.Argument(..., help="Writes train.jsonl, dev.jsonl and stats.json here"),
    seed: int = typer.Option(0, "--seed", help="Seed of the split"),
    dev_fraction: float = typer.Option(0.2, "--dev-fraction", help="Share of pairs in dev (split datasets only)"),
) -> None:
    require_sources(sources, "assets")
    with exit_on_error(dataset, "pair file", "assets"):
        stats = convert(dataset, sources, output_dir, seed, dev_fraction)
    for part in ("train", "dev"):
        s = stats[part]
        typer.echo(
            f"{dataset} {part}: {s['pairs']:,} pairs ({s['positive']:,} positive), "
            f"{s['distinct_questions']:,} distinct questions -> {output_dir / (part + '.jsonl')}"
        )
    typer.echo(f"Split: {stats['split']}; questions on both sides: {stats['questions_on_both_sides']}")


if __name__ == "__main__":
    typer.run(main)
