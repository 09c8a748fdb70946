"""Convert line-aligned translation files (`train.en`, `train.XX`, `train.source`) into the
parallel JSON lines that the "spacy-siamese.ParallelCorpus.v1" reader and
`python -m spacy_siamese evaluate-crosslingual` read: `train.jsonl` and `dev.jsonl`, each pair
tagged with its group ("sentences": independent Tatoeba sentences, "news": WMT news lines,
"documents": pseudo-documents of consecutive news lines).

The dev split is carved from the training files (`spacy_siamese.corpora.parallel`): the
`--dev-origin` news sets whole and in document order, plus a seeded sample of sentences; no
text of a dev pair is in a training pair.

Usage:
    python scripts/convert_crosslingual.py ../../shared/data/crosslingual/en-es es corpus/crosslingual/en-es
"""

import json
from collections import Counter
from pathlib import Path
from typing import List

import typer
from convert_errors import exit_on_error, fail, require_output_dir

from spacy_siamese.corpora.parallel import crosslingual_corpus, read_parallel, write_parallel_jsonl


def main(
    data_dir: Path = typer.Argument(..., help="Directory with train.en, train.<lang> and train.source"),
    lang: str = typer.Argument(..., help="The other language's code, e.g. es"),
    output_dir: Path = typer.Argument(..., help="Writes train.jsonl, dev.jsonl and stats.json here"),
    window: int = typer.Option(5, "--window", min=0, help="News lines per pseudo-document (0: none)"),
    dev_origin: List[str] = typer.Option(["newstest2012"], "--dev-origin", help="News set held out whole as dev"),
    dev_sentences: int = typer.Option(1000, "--dev-sentences", min=0, help="Seeded sample of dev sentences"),
    seed: int = typer.Option(0, "--seed", help="Seed of the dev sample"),
) -> None:
    if lang == "en":
        fail("lang is the language paired with English, e.g. es, de or fr.")
    require_output_dir(output_dir)
    files = [data_dir / "train.en", data_dir / f"train.{lang}", data_dir / "train.source"]
    with exit_on_error(f"en-{lang}", "parallel file", f"crosslingual (no such data in {data_dir}?)"):
        pairs = read_parallel(files[0], files[1], origins=files[2])
        train, dev = crosslingual_corpus(
            pairs, window=window, dev_origins=dev_origin, dev_sentences=dev_sentences, seed=seed
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    langs = ("en", lang)
    write_parallel_jsonl(train, output_dir / "train.jsonl", langs)
    write_parallel_jsonl(dev, output_dir / "dev.jsonl", langs)
    stats = {
        "langs": list(langs),
        "read": len(pairs),
        "train": dict(Counter(p.group for p in train)),
        "dev": dict(Counter(p.group for p in dev)),
        "left_out": len(pairs) - sum(1 for p in train + dev if p.group != "documents"),
        "window": window,
        "dev_origins": list(dev_origin),
        "dev_sentences": dev_sentences,
        "seed": seed,
    }
    (output_dir / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf8")
    typer.echo(json.dumps(stats))


if __name__ == "__main__":
    typer.run(main)
