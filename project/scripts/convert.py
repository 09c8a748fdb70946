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
title; Quora: its normalized text). Keys that occur in the same pair are joined
(union-find), so each connected component of the pair graph is kept on one side.
Components are shuffled with `random.Random(seed)` and taken into dev while no
(site, label) stratum exceeds its share of --dev-fraction; the rest is train. No
key, and so no question, occurs on both sides (checked before writing).

Usage:
    python scripts/convert.py stackexchange corpus/stackexchange/sources.json corpus/stackexchange \
        --seed 0 --dev-fraction 0.2
"""
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Dict, Iterable, List, NamedTuple, Sequence, Tuple

import srsly
import typer

try:
    from spacy_siamese.readers import PairFormatError, read_pairs
except ImportError:  # pragma: no cover - running from a checkout without installing
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from spacy_siamese.readers import PairFormatError, read_pairs


class Pair(NamedTuple):
    text1: str
    text2: str
    label: float
    source: str  # file the pair came from, e.g. "askubuntu"


_WORD = re.compile(r"\w+")


def normalize(text: str) -> str:
    """Lowercased word tokens: differences in case, spacing and punctuation vanish."""
    return " ".join(_WORD.findall(text.lower()))


def title_key(text: str) -> str:
    """A StackExchange question as the reader returns it is "title\\nbody"."""
    return normalize(text.split("\n", 1)[0])


def read_file(path: Path, format: str) -> List[Pair]:
    source = path.stem
    return [Pair(r.text1, r.text2, float(r.label), source) for r in read_pairs(path, format=format)]


def components(pairs: Sequence[Pair], key: Callable[[str], str]) -> List[List[int]]:
    """Pair indices grouped by connected component of the question graph, in
    order of first appearance."""
    parent: Dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        a, b = find(key(p.text1)), find(key(p.text2))
        if a != b:
            parent[b] = a
    groups: Dict[str, List[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[find(key(p.text1))].append(i)
    return list(groups.values())


def grouped_split(
    pairs: Sequence[Pair], key: Callable[[str], str], dev_fraction: float, seed: int
) -> Tuple[List[Pair], List[Pair]]:
    """Seeded question-disjoint train/dev split, stratified by (source, label)."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"--dev-fraction must be between 0 and 1, got {dev_fraction}")
    strata = [(p.source, p.label >= 0.5) for p in pairs]
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
    shared = {key(t) for p in train for t in p[:2]} & {key(t) for p in dev for t in p[:2]}
    assert not shared, f"{len(shared)} question(s) on both sides of the split"
    return train, dev


def write_jsonl(path: Path, pairs: Iterable[Pair]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_jsonl(path, ({"text1": p.text1, "text2": p.text2, "label": p.label} for p in pairs))


def describe(pairs: Sequence[Pair], key: Callable[[str], str]) -> Dict[str, object]:
    by_source = Counter(p.source for p in pairs)
    return {
        "pairs": len(pairs),
        "positive": sum(p.label >= 0.5 for p in pairs),
        "distinct_questions": len({key(t) for p in pairs for t in p[:2]}),
        "by_source": {s: {"pairs": n, "positive": sum(p.label >= 0.5 for p in pairs if p.source == s)}
                      for s, n in sorted(by_source.items())},
    }


def convert(dataset: str, sources: Path, output_dir: Path, seed: int, dev_fraction: float) -> Dict[str, object]:
    info = json.loads(sources.read_text(encoding="utf8"))
    files = {rec["name"]: Path(rec["path"]) for rec in info["files"]}
    if dataset == "quora" and "quora/train.tsv" in files:
        train = read_file(files["quora/train.tsv"], "tsv")
        dev = read_file(files["quora/dev.tsv"], "bimpm")
        key, split = normalize, "BiMPM dev split from the mirror (pair-disjoint, not question-disjoint)"
    elif dataset == "quora":
        pairs = read_file(files["quora/quora_duplicate_questions.tsv"], "tsv")
        key = normalize
        train, dev = grouped_split(pairs, key, dev_fraction, seed)
        split = f"question-disjoint (normalized text), seed {seed}, dev fraction {dev_fraction}"
    elif dataset == "stackexchange":
        pairs = []
        for name in ("stackexchange/askubuntu.tsv", "stackexchange/meta.tsv"):
            pairs.extend(read_file(files[name], "stackexchange"))
        key = title_key
        train, dev = grouped_split(pairs, key, dev_fraction, seed)
        split = f"question-disjoint (normalized title, pair-graph components), seed {seed}, dev fraction {dev_fraction}, stratified by site and label"
    else:
        raise ValueError(f"Unknown dataset {dataset!r}")
    write_jsonl(output_dir / "train.jsonl", train)
    write_jsonl(output_dir / "dev.jsonl", dev)
    train_keys = {key(t) for p in train for t in p[:2]}
    dev_keys = {key(t) for p in dev for t in p[:2]}
    stats = {
        "dataset": dataset,
        "source": info.get("source"),
        "split": split,
        "train": describe(train, key),
        "dev": describe(dev, key),
        "questions_on_both_sides": len(train_keys & dev_keys),
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
    if not sources.is_file():
        typer.echo(f"Error: {sources} not found. Run the assets step first: spacy project run assets", err=True)
        raise typer.Exit(1)
    try:
        stats = convert(dataset, sources, output_dir, seed, dev_fraction)
    except PairFormatError as err:
        if err.line is None:  # no pairs at all
            typer.echo(
                f"Error: empty dataset: {err.reason}. The file has no labelled pairs; re-fetch it "
                "(delete it and run `spacy project run assets`) or fix the data source.", err=True,
            )
            raise typer.Exit(1)
        typer.echo(
            f"Error: malformed pair file: {err}\nFix or remove that line (or re-fetch the file with "
            "`spacy project run assets`), then re-run.", err=True,
        )
        raise typer.Exit(1)
    except (FileNotFoundError, KeyError, ValueError) as err:
        typer.echo(f"Error: cannot convert {dataset}: {err}", err=True)
        raise typer.Exit(1)
    for part in ("train", "dev"):
        s = stats[part]
        typer.echo(
            f"{dataset} {part}: {s['pairs']:,} pairs ({s['positive']:,} positive), "
            f"{s['distinct_questions']:,} distinct questions -> {output_dir / (part + '.jsonl')}"
        )
    typer.echo(f"Split: {stats['split']}; questions on both sides: {stats['questions_on_both_sides']}")


if __name__ == "__main__":
    typer.run(main)
