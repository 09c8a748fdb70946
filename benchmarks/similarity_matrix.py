"""`pipe.similarity_matrix` of 100 x 2,000 processed docs: seconds by matrix products (the pipe's
own path for a similarity of dot products and norms) against pair by pair with `pipe.compare`
(every pair exactly `doc.similarity`), and the largest difference between the two.

A trained pipeline (MODEL), or else the pipeline of a config (default: the shipped Quora hybrid,
2,816 columns: Cauchy on 768 learned beside 2,048 lexical), initialized on the texts without
static vectors: the timing needs the vectors' width, not their quality. Texts are the first
distinct ones of a pair file; encoding is not timed.

Usage:
    python benchmarks/similarity_matrix.py [MODEL] --data ../shared/data/quora/dev.tsv --runs 5
"""

import json
import statistics
import time
from pathlib import Path
from typing import Optional

import spacy
import typer
from spacy.util import load_config, load_model_from_config

from spacy_siamese import make_pair_example
from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.pairwise import vector_similarity_matrix

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "quora" / "dev.tsv"
NO_STATIC = {"components.siamese_similarity.model.encoder.encoder.include_static_vectors": False}


def main(
    model: Optional[Path] = typer.Argument(None, help="A trained pipeline (default: --config, initialized)"),
    config: Path = typer.Option(ROOT / "configs" / "quora_hybrid.cfg", help="Config of the pipeline without MODEL"),
    data: Path = typer.Option(DEFAULT_DATA, help="Pair file whose texts are compared"),
    n_a: int = typer.Option(100, help="Rows"),
    n_b: int = typer.Option(2000, help="Columns"),
    runs: int = typer.Option(5, help="Timed runs of the matrix path (the median is reported)"),
) -> None:
    texts = list(dict.fromkeys(text for rec in read_pairs(data) for text in (rec.text1, rec.text2)))[: n_a + n_b]
    if len(texts) < n_a + n_b:
        raise typer.BadParameter(
            f"{data} has {len(texts)} distinct texts, fewer than {n_a} + {n_b}", param_hint="--data"
        )
    if model is not None:
        nlp = spacy.load(model)
    else:
        nlp = load_model_from_config(load_config(config, overrides=NO_STATIC), auto_fill=True)
        examples = [make_pair_example(nlp, a, b, i % 2) for i, (a, b) in enumerate(zip(texts[::2], texts[1::2]))]
        nlp.initialize(lambda: examples)
    pipe = get_similarity_pipe(nlp)
    docs = list(nlp.pipe(texts))
    docs_a, docs_b = docs[:n_a], docs[n_a:]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        matrix = pipe.similarity_matrix(docs_a, docs_b)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    exact = vector_similarity_matrix(pipe.compare, pipe.encode(docs_a), pipe.encode(docs_b))
    pair_wise = time.perf_counter() - start
    result = {
        "model": str(model or config),
        "shape": [n_a, n_b],
        "width": pipe.encoder.get_dim("nO"),
        "matrix_s": round(statistics.median(times), 4),
        "pair_wise_s": round(pair_wise, 4),
        "max_abs_difference": float(abs(matrix - exact).max()),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    typer.run(main)
