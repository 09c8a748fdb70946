"""Write the six datasets of the `general` pipeline as train/dev JSONL files
(`{"text1": ..., "text2": ..., "label": ...}` per line) in one directory, one subdirectory a
dataset, for the "spacy-siamese.MultiPairCorpus.v1" reader of configs/general.cfg.

quora, stackexchange
    The train/dev files of the convert-quora and convert-stackexchange steps.
sts
    STS Benchmark train/dev (score / 5) without the rows whose source is MSRpar: those come from
    the MSR Paraphrase Corpus, test file included, which is held out (see the mirror's DATA.md).
    The evaluation also reads the full official dev file; see below.
sick
    SICK train and trial ((relatedness - 1) / 4).
mrpc
    msr_paraphrase_train.txt, the last --mrpc-dev-pairs pairs as dev (the usual convention; MRPC
    has no dev split).
twitter_url
    The Twitter URL training pairs, a seeded sentence-disjoint dev split (--twitter-dev-fraction):
    pairs that share a sentence, e.g. a headline's many tweets, stay on one side
    (`spacy_siamese.corpora.sampling.grouped_split`).

Then every training pair that is also a pair of a dev split (of any of the six, or of the full
STS-B dev file) is dropped, the two sides compared as lower-cased word tokens in either order:
STS-B, SICK and MRPC share sentence pairs. stats.json gives the counts.

Usage:
    python scripts/convert_general.py corpus corpus/general --seed 0
"""

import json
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Sequence, Set, Tuple

import srsly
import typer
from convert_errors import exit_on_error, require_output_dir, require_sources

from spacy_siamese.corpora import PairRecord, read_pairs
from spacy_siamese.corpora.sampling import grouped_split, normalize

DATASETS = ("quora", "stackexchange", "sts", "sick", "mrpc", "twitter_url")
Split = Tuple[List[PairRecord], List[PairRecord]]


def pair_key(pair: PairRecord) -> FrozenSet[str]:
    return frozenset((normalize(pair.text1), normalize(pair.text2)))


def source_files(sources: Path) -> Dict[str, Path]:
    info = json.loads(sources.read_text(encoding="utf8"))
    return {rec["name"]: Path(rec["path"]) for rec in info["files"]}


def sts_rows(path: Path, *, drop_source: str = "MSRpar") -> Tuple[List[PairRecord], int]:
    """The STS Benchmark pairs of `path` whose source (2nd column) is not `drop_source`, and how
    many were dropped."""
    lines = path.read_text(encoding="utf8").splitlines()
    kept = []
    dropped = 0
    for pair in read_pairs(path, format="sts"):
        if lines[pair.line - 1].split("\t")[1] == drop_source:
            dropped += 1
        else:
            kept.append(pair)
    return kept, dropped


def read_splits(corpus: Path, seed: int, mrpc_dev_pairs: int, twitter_dev_fraction: float) -> Dict[str, Split]:
    for name in ("quora", "stackexchange"):
        for part in ("train", "dev"):
            if not (corpus / name / f"{part}.jsonl").is_file():
                raise FileNotFoundError(f"{corpus / name / part}.jsonl (run the convert-{name} step first)")
    splits: Dict[str, Split] = {
        name: (
            list(read_pairs(corpus / name / "train.jsonl", format="jsonl")),
            list(read_pairs(corpus / name / "dev.jsonl", format="jsonl")),
        )
        for name in ("quora", "stackexchange")
    }
    sts = source_files(corpus / "sts" / "sources.json")
    splits["sts"] = (sts_rows(sts["sts/sts-train.csv"])[0], sts_rows(sts["sts/sts-dev.csv"])[0])
    splits["sick"] = (
        list(read_pairs(sts["sts/SICK_train.txt"], format="sick")),
        list(read_pairs(sts["sts/SICK_trial.txt"], format="sick")),
    )
    paraphrase = source_files(corpus / "paraphrase" / "sources.json")
    mrpc = list(read_pairs(paraphrase["paraphrase/msr_paraphrase_train.txt"], format="mrpc"))
    if not 0 < mrpc_dev_pairs < len(mrpc):
        raise ValueError(f"--mrpc-dev-pairs must be between 1 and {len(mrpc) - 1}, got {mrpc_dev_pairs}")
    splits["mrpc"] = (mrpc[:-mrpc_dev_pairs], mrpc[-mrpc_dev_pairs:])
    twitter_dir = paraphrase["paraphrase/twitter_url_train/sim.txt"].parent
    twitter = [("twitter_url", p) for p in read_pairs(twitter_dir, format="twitter_url")]
    train, dev = grouped_split(twitter, normalize, twitter_dev_fraction, seed)
    splits["twitter_url"] = ([p for _, p in train], [p for _, p in dev])
    return splits


def drop_dev_pairs(splits: Dict[str, Split], extra_dev: Iterable[PairRecord]) -> Dict[str, int]:
    """Remove (in place) the training pairs that are pairs of any dev split or of `extra_dev`;
    the number removed from each dataset."""
    held: Set[FrozenSet[str]] = {pair_key(p) for _, dev in splits.values() for p in dev}
    held |= {pair_key(p) for p in extra_dev}
    dropped = {}
    for name, (train, dev) in splits.items():
        kept = [p for p in train if pair_key(p) not in held]
        dropped[name] = len(train) - len(kept)
        splits[name] = (kept, dev)
    return dropped


def write_jsonl(path: Path, pairs: Sequence[PairRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_jsonl(path, ({"text1": p.text1, "text2": p.text2, "label": p.label} for p in pairs))


def describe(pairs: Sequence[PairRecord]) -> Dict[str, object]:
    labels = [p.label for p in pairs]
    binary = all(y in (0.0, 1.0) for y in labels)
    out: Dict[str, object] = {"pairs": len(pairs), "labels": "0/1" if binary else "graded"}
    if binary:
        out["positive"] = int(sum(labels))
    else:
        out["mean_label"] = round(sum(labels) / max(len(labels), 1), 4)
    return out


def convert(
    corpus: Path, output_dir: Path, seed: int, mrpc_dev_pairs: int, twitter_dev_fraction: float
) -> Dict[str, object]:
    splits = read_splits(corpus, seed, mrpc_dev_pairs, twitter_dev_fraction)
    sts = source_files(corpus / "sts" / "sources.json")
    full_sts_dev = list(read_pairs(sts["sts/sts-dev.csv"], format="sts"))
    msrpar = {part: sts_rows(sts[f"sts/sts-{part}.csv"])[1] for part in ("train", "dev")}
    dropped = drop_dev_pairs(splits, full_sts_dev)
    for name in DATASETS:
        train, dev = splits[name]
        write_jsonl(output_dir / name / "train.jsonl", train)
        write_jsonl(output_dir / name / "dev.jsonl", dev)
    stats = {
        "datasets": {
            name: {
                "train": describe(splits[name][0]),
                "dev": describe(splits[name][1]),
                "train_pairs_dropped_as_dev_pairs": dropped[name],
            }
            for name in DATASETS
        },
        "sts_msrpar_rows_dropped": msrpar,
        "mrpc_dev": f"the last {mrpc_dev_pairs} pairs of msr_paraphrase_train.txt",
        "twitter_url_dev": f"sentence-disjoint, seed {seed}, dev fraction {twitter_dev_fraction}",
    }
    (output_dir / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf8")
    return stats


def main(
    corpus: Path = typer.Argument(..., help="Has quora/, stackexchange/ (converted), sts/, paraphrase/ (sources.json)"),
    output_dir: Path = typer.Argument(..., help="Writes <dataset>/{train,dev}.jsonl and stats.json here"),
    seed: int = typer.Option(0, "--seed", help="Seed of the Twitter URL split"),
    mrpc_dev_pairs: int = typer.Option(500, "--mrpc-dev-pairs", help="The last N MRPC training pairs become dev"),
    twitter_dev_fraction: float = typer.Option(0.1, "--twitter-dev-fraction", help="Share of Twitter URL pairs in dev"),
) -> None:
    require_sources(corpus / "sts" / "sources.json", "convert-sts")
    require_sources(corpus / "paraphrase" / "sources.json", "convert-general")
    require_output_dir(output_dir)
    with exit_on_error("general", "pair file", "assets"):
        stats = convert(corpus, output_dir, seed, mrpc_dev_pairs, twitter_dev_fraction)
    for name, info in stats["datasets"].items():  # type: ignore[union-attr]
        train, dev = info["train"], info["dev"]
        typer.echo(
            f"{name}: train {train['pairs']:,} pairs ({info['train_pairs_dropped_as_dev_pairs']} dropped as dev "
            f"pairs), dev {dev['pairs']:,} pairs ({train['labels']}) -> {output_dir / name}"
        )
    typer.echo(f"STS-B MSRpar rows left out (train, dev): {stats['sts_msrpar_rows_dropped']}")


if __name__ == "__main__":
    typer.run(main)
