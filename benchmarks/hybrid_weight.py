"""The lexical weight of a trained hybrid pipeline, measured at prediction.

`HybridSimilarity.v1` scores (1 - weight) * learned + weight * TF-IDF cosine. Its training output
is the learned part's own, which never sees the weight, so one trained pipeline can be scored at
other weights without training again. For each weight, on one labelled 0/1 pair file: pair ROC AUC
and average precision, and finding each sampled duplicate's partner among all distinct texts of the
file (MRR@10, recall@1, recall@10, ranked as `python -m spacy_siamese evaluate-duplicates` ranks);
on a graded pair file (e.g. STS-B dev): Spearman and Pearson. The texts are encoded and their two
parts scored once; at the pipeline's own weight the figures are those of `evaluate` (and
`evaluate-duplicates`).

Usage (from the repository root; `--compare` scores other pipelines on the same queries):
    python benchmarks/hybrid_weight.py project/training/quora/model-best project/corpus/quora/dev.jsonl \
        --compare experiments/training/quora_continued/model-best --output-json benchmarks/results/hybrid_weight.json
"""

import dataclasses
import json
import platform
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import spacy
import typer
from sklearn.metrics import average_precision_score, roc_auc_score

import spacy_siamese
from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.evaluation.duplicates import duplicate_queries, partner_ranks, pipe_vectors, rank_metrics
from spacy_siamese.metrics import correlation, is_binary
from spacy_siamese.search import vector_space
from spacy_siamese.space import HYBRID
from spacy_siamese.util import distinct_pair_texts, given_path, pair_rows

WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)


def weight_rows(
    nlp: spacy.Language, records: Sequence[Any], weights: Sequence[float], *, n_pairs: int = 1000, seed: int = 0
) -> List[Dict[str, float]]:
    """The pipe's figures at each weight in `weights`: pair ROC AUC / AP and duplicate retrieval
    metrics for 0/1 labels, Spearman and Pearson for graded ones."""
    if any(not 0.0 <= w <= 1.0 for w in weights):
        raise ValueError(f"weights must be in [0, 1], got {list(weights)}")
    space = vector_space(get_similarity_pipe(nlp).comparison)
    if space.kind != HYBRID or not space.scores_exactly:
        raise ValueError("The pipeline's similarity is not HybridSimilarity.v1 over Cauchy or cosine: it has no weight")
    labels = numpy.asarray([r.label for r in records], dtype="f8")
    if len(set(labels)) < 2:
        raise ValueError("The pair file needs labels of more than one value (0/1: both present)")
    if not is_binary(labels):
        texts = distinct_pair_texts((r.text1, r.text2) for r in records)
        pair_learned, pair_lexical = pair_parts(space, pipe_vectors(nlp, texts), texts, records)
        return [
            {"weight": float(weight), **correlation(space.mix(pair_learned, pair_lexical, weight), labels)}
            for weight in weights
        ]
    dq = duplicate_queries(records, n_pairs=n_pairs, seed=seed)
    V = pipe_vectors(nlp, dq.texts)
    pair_learned, pair_lexical = pair_parts(space, V, dq.texts, records)
    ranks = {weight: numpy.zeros(len(dq.queries), dtype="int64") for weight in weights}
    for start in range(0, len(dq.queries), 64):
        block = slice(start, start + 64)
        learned, lexical = space.score_parts(V[dq.queries[block]], V)
        queries = dataclasses.replace(dq, queries=dq.queries[block], partners=dq.partners[block])
        for weight in weights:
            mixed = space.mix(learned, lexical, weight)
            ranks[weight][block] = partner_ranks(lambda _, mixed=mixed: mixed, queries, block=len(mixed))
    rows = []
    for weight in weights:
        pair_scores = space.mix(pair_learned, pair_lexical, weight)
        metrics = rank_metrics(ranks[weight])
        rows.append(
            {
                "weight": float(weight),
                "roc_auc": float(roc_auc_score(labels, pair_scores)),
                "ap": float(average_precision_score(labels, pair_scores)),
                **{key: metrics[key] for key in ("mrr@10", "recall@1", "recall@10", "n_queries")},
            }
        )
    return rows


def pair_parts(space: Any, vectors: numpy.ndarray, texts: Sequence[str], records: Sequence[Any]) -> Tuple[Any, Any]:
    """The learned and the lexical score of every pair (the two parts once, mixed at each weight);
    `vectors` are the rows of `texts`."""
    a, b = pair_rows(texts, ((r.text1, r.text2) for r in records))
    return space.paired_score_parts(vectors[a], vectors[b])


def main(
    model: Path = typer.Argument(..., help="A trained pipeline with HybridSimilarity.v1"),
    pairs: Path = typer.Argument(
        ..., help="Labelled pair file, 0/1 or graded (a format of spacy_siamese.corpora.read_pairs)"
    ),
    weights: str = typer.Option(",".join(map(str, WEIGHTS)), help="Comma-separated weights in [0, 1]"),
    compare: List[Path] = typer.Option([], help="Also score another trained hybrid pipeline (repeat for several)"),
    n_pairs: int = typer.Option(1000, help="Duplicate pairs sampled as queries, as evaluate-duplicates"),
    seed: int = typer.Option(0, help="Seed of the sampled queries"),
    output_json: Optional[Path] = typer.Option(None, help="Write the results here"),
) -> None:
    """Score trained hybrid pipelines at several lexical weights (see the module docstring)."""
    try:
        chosen = [float(w) for w in weights.split(",")]
    except ValueError:
        raise typer.BadParameter(
            f"not a comma-separated list of numbers: {weights!r}", param_hint="--weights"
        ) from None
    records = list(read_pairs(pairs))
    results = []
    for path in [model, *compare]:
        nlp = spacy.load(path)
        rows = weight_rows(nlp, records, chosen, n_pairs=n_pairs, seed=seed)
        own = vector_space(get_similarity_pipe(nlp).comparison).weight
        typer.echo(given_path(path))
        for row in rows:
            mark = " (the pipeline's)" if row["weight"] == own else ""
            if "spearman" in row:
                figures = f"Spearman {row['spearman']:.3f}, Pearson {row['pearson']:.3f}"
            else:
                figures = (
                    f"ROC AUC {row['roc_auc']:.3f}, AP {row['ap']:.3f}, MRR@10 {row['mrr@10']:.3f}, "
                    f"recall@1 {row['recall@1']:.3f}, recall@10 {row['recall@10']:.3f}"
                )
            typer.echo(f"  weight {row['weight']:.2f}{mark}: {figures}")
        results.append({"model": given_path(path), "pipeline_weight": own, "rows": rows})
    if output_json is not None:
        report = {
            "pairs": given_path(pairs),
            "n_pairs": len(records),
            "seed": seed,
            "models": results,
            "versions": {
                "python": platform.python_version(),
                "spacy": spacy.__version__,
                "spacy_siamese": spacy_siamese.__version__,
            },
        }
        output_json.parent.mkdir(parents=True, exist_ok=True)
        output_json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf8")


if __name__ == "__main__":
    typer.run(main)
