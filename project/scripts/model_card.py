"""Write the model card of a trained pipeline: the meta.json that `spacy package --meta` puts in its
package. Every figure comes from the run: the dev figures from the evaluation JSON files the
project's evaluate steps wrote, the thresholds from the saved pipe, the speed timed here on the dev
texts (one thread). The training data, their sources and licences come from the DATA table below.

Usage:
    python scripts/model_card.py training/quora/model-best packages/quora.meta.json \
        --data quora --metrics metrics/quora.json --metrics metrics/quora_duplicates.json \
        --dev corpus/quora/dev.jsonl --description "..." --limits "..."
"""

import json
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import spacy
import srsly
import typer

# The datasets a project pipeline trains on: name, where it comes from, its licence.
DATA: Dict[str, Tuple[str, str, str]] = {
    "quora": (
        "Quora Question Pairs (BiMPM split, Wang et al. 2017)",
        "https://quoradata.quora.com/First-Quora-Dataset-Release-Question-Pairs",
        "Quora's non-commercial terms",
    ),
    "stackexchange": (
        "AskUbuntu and Meta StackExchange duplicates (Bogdanova et al. 2015)",
        "https://github.com/nlx-group/Replicating-Bogdanova-et-al.-2015-Duplicate-Question-Detection",
        "CC BY-SA",
    ),
    "sts": (
        "STS Benchmark",
        "http://ixa2.si.ehu.es/stswiki/index.php/STSbenchmark",
        "scores CC BY-SA 4.0, texts under their sub-corpora's licences",
    ),
    "sick": ("SICK", "https://marcobaroni.org/composes/sick.html", "CC BY-NC-SA 3.0"),
    "mrpc": (
        "Microsoft Research Paraphrase Corpus",
        "https://www.microsoft.com/en-us/download/details.aspx?id=52398",
        "Microsoft Research Shared Source License (non-commercial)",
    ),
    "twitter_url": (
        "Twitter URL paraphrase corpus",
        "https://github.com/lanwuwei/Twitter-URL-Corpus",
        "CC BY-NC-SA 3.0",
    ),
    "teacher": (
        "pairs labelled by sentence-transformers/all-MiniLM-L6-v2",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        "Apache 2.0 (the model)",
    ),
    "silver": (
        "silver pairs labelled by a teacher fine-tuned from all-MiniLM-L6-v2 on the same gold pairs",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        "Apache 2.0 (the base model)",
    ),
    "20news": ("20 Newsgroups, bydate train half", "http://qwone.com/~jason/20Newsgroups/", "research use"),
    "reuters": (
        "Reuters-21578, ModApte training documents",
        "http://www.daviddlewis.com/resources/testcollections/reuters21578/",
        "research use only",
    ),
    "crosslingual": (
        "Tatoeba sentences and WMT news translations",
        "https://tatoeba.org",
        "Tatoeba CC BY 2.0 FR; WMT news: research use",
    ),
}
METHOD_TABLES = ("results", "accuracy")  # method -> its figures; the trained pipeline comes first
SKIPPED = {"bootstrap", "timing", "tfidf", "files", "model", "thresholds", "settings"}
NOT_TEXT = {"origin", "group", "id", "labels", "label"}


def numbers(value: Any, prefix: str) -> Iterator[Tuple[str, float]]:
    """The numeric leaves of `value`, named `prefix/key/...`."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{prefix}/{key}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield prefix, round(float(value), 4)


def figures(report: Any, prefix: str) -> Iterator[Tuple[str, float]]:
    """The figures of the trained pipeline in an evaluation report (the first entry of each table of
    methods, `results` or `accuracy`), named `prefix/group/figure`."""
    if not isinstance(report, dict):
        return
    for key, value in report.items():
        if key in METHOD_TABLES and isinstance(value, dict) and value:
            yield from numbers(next(iter(value.values())), prefix)
        elif key not in SKIPPED and isinstance(value, dict):
            yield from figures(value, f"{prefix}/{key}")


def words_per_second(nlp: spacy.language.Language, dev: Path, n_texts: int) -> Dict[str, Any]:
    texts: List[str] = []
    for row in srsly.read_jsonl(dev):
        texts.extend(text for key, text in row.items() if key not in NOT_TEXT and isinstance(text, str))
        if len(texts) >= n_texts:
            break
    texts = texts[:n_texts]
    start = time.perf_counter()
    n_words = sum(len(doc) for doc in nlp.pipe(texts, batch_size=256))
    return {"cpu": round(n_words / max(time.perf_counter() - start, 1e-9)), "gpu": None, "nwords": n_words}


def main(
    model: Path = typer.Argument(..., help="The trained pipeline (model-best or model-last)"),
    output: Path = typer.Argument(..., help="The meta.json to write, for `spacy package --meta`"),
    data: List[str] = typer.Option(..., "--data", help=f"A dataset it was trained on: {', '.join(DATA)}"),
    metrics: List[Path] = typer.Option(..., "--metrics", help="An evaluation JSON of the project"),
    dev: Path = typer.Option(..., "--dev", help="Dev pairs or documents (JSONL) to time the pipeline on"),
    description: str = typer.Option(..., "--description", help="What the pipeline is for"),
    limits: str = typer.Option(..., "--limits", help="What it is known not to do well"),
    n_texts: int = typer.Option(1000, "--n-texts", help="Texts to time it on"),
) -> None:
    unknown = [name for name in data if name not in DATA]
    if unknown:
        typer.echo(f"Error: unknown dataset {unknown}; choose from {', '.join(DATA)}", err=True)
        raise typer.Exit(1)
    missing = [str(path) for path in (model / "meta.json", dev, *metrics) if not path.is_file()]
    if missing:
        typer.echo(f"Error: not found: {', '.join(missing)} (did the train and evaluate steps run?)", err=True)
        raise typer.Exit(1)
    nlp = spacy.load(model)
    meta = dict(nlp.meta)
    cfg_path = model / "siamese_similarity" / "cfg"
    pipe_cfg = json.loads(cfg_path.read_text(encoding="utf8")) if cfg_path.is_file() else {}
    thresholds = {key: value for key, value in pipe_cfg.items() if "threshold" in key and isinstance(value, float)}
    performance = dict(meta.get("performance") or {})
    for path in metrics:
        performance.update(figures(srsly.read_json(path), path.stem))
    meta.update(
        description=f"{description} Known limits: {limits}",
        license="; ".join(f"{DATA[name][0]}: {DATA[name][2]}" for name in data),
        sources=[
            *meta.get("sources", []),
            *({"name": DATA[n][0], "url": DATA[n][1], "license": DATA[n][2]} for n in data),
        ],
        performance={**performance, **{f"thresholds/{key}": value for key, value in thresholds.items()}},
        speed=words_per_second(nlp, dev, n_texts),
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, meta)
    typer.echo(f"Wrote {output}: {len(performance)} dev figures, thresholds {thresholds}, trained on {', '.join(data)}")


if __name__ == "__main__":
    typer.run(main)
