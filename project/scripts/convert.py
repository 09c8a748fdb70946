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
    and label. The dev pairs of each site are also written alone
    (dev_askubuntu.jsonl, dev_meta.jsonl).

Question-disjoint split (`spacy_siamese.corpora.sampling.grouped_split`): every
question gets a key (StackExchange: its normalized title; Quora: its normalized text).
Keys that occur in the same pair are joined, so each connected component of the pair
graph (scipy's `connected_components`) is kept on one side. Components are shuffled with
`random.Random(seed)` and taken into dev while no (site, label) stratum exceeds its share
of --dev-fraction; the rest is train. No key, and so no question, occurs on both sides
(checked before writing).

Usage:
    python scripts/convert.py stackexchange corpus/stackexchange/sources.json corpus/stackexchange \
        --seed 0 --dev-fraction 0.2
"""

import json
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Sequence

import srsly
import typer
from convert_errors import exit_on_error, require_output_dir, require_sources

from spacy_siamese.corpora import read_pairs
from spacy_siamese.corpora.sampling import Sourced, grouped_split, normalize, questions, title_key


def read_file(path: Path, format: str) -> List[Sourced]:
    return [(path.stem, pair) for pair in read_pairs(path, format=format)]


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
    if dataset == "stackexchange":
        for old in output_dir.glob("dev_*.jsonl"):  # a site without dev pairs now must not keep an older file
            old.unlink()
        for site in sorted({source for source, _ in dev}):
            write_jsonl(output_dir / f"dev_{site}.jsonl", (pair for pair in dev if pair[0] == site))
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
    require_output_dir(output_dir)
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
