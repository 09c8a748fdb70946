"""How faithful are token explanations? Delete the tokens an explanation ranks highest and see
how far the pair's score falls, against deleting random tokens.

For each pair of a labelled pair file (the first `--n-pairs` pairs whose texts have at least
`--min-tokens` tokens) and each of its two texts: explain the pair
(`spacy_siamese.explain.explain_pair`, Shapley values and leave-one-token-out), delete the k
tokens with the largest contributions from that text (k = 1, 2, 3 and a fifth of its tokens),
and score the shortened text against the other one as the pipe scores a span
(`spacy_siamese.explain.subset_scores`). Random: the mean fall over `--random-draws` random
k-token deletions of the same text. Reported: the mean fall of the score for each method and k,
how often the top-k deletion falls further than the random mean, Shapley's completeness error
(its values sum to score - reference) and the explanation time against `doc.similarity` on the
same pairs (median of `--repeats` runs).

    python benchmarks/explain_faithfulness.py project/training/quora/model-best \\
        project/corpus/quora/dev.jsonl --output-json benchmarks/results/explain.json
"""

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Dict, List

import numpy
import spacy

from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.explain import explain_pair, subset_scores
from spacy_siamese.util import given_path

METHODS = ("shapley", "occlusion")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="Trained pipeline with a siamese_similarity pipe")
    parser.add_argument("pairs", help="Labelled pair file (any format the package reads)")
    parser.add_argument("--n-pairs", type=int, default=200, help="Pairs to explain")
    parser.add_argument("--min-tokens", type=int, default=6, help="Skip pairs with a text shorter than this")
    parser.add_argument("--random-draws", type=int, default=20, help="Random deletions per text and k")
    parser.add_argument("--samples", type=int, default=32, help="Shapley permutations for long texts")
    parser.add_argument("--repeats", type=int, default=3, help="Timing runs (the median is reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-json", type=Path, default=None)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    nlp = spacy.load(args.model)
    pipe = get_similarity_pipe(nlp, initialized=True)
    rng = numpy.random.default_rng(args.seed)
    records = []
    for record in read_pairs(args.pairs):
        if min(len(nlp.make_doc(record.text1)), len(nlp.make_doc(record.text2))) >= args.min_tokens:
            records.append(record)
        if len(records) == args.n_pairs:
            break
    ks = ["1", "2", "3", "20%"]
    falls: Dict[str, Dict[str, List[float]]] = {m: {k: [] for k in ks} for m in (*METHODS, "random")}
    wins: Dict[str, Dict[str, List[bool]]] = {m: {k: [] for k in ks} for m in METHODS}
    completeness = []
    for record in records:
        explanations = {
            m: explain_pair(nlp, record.text1, record.text2, method=m, samples=args.samples) for m in METHODS
        }
        for side in ("a", "b"):
            doc, other = (
                (nlp(record.text1), nlp(record.text2)) if side == "a" else (nlp(record.text2), nlp(record.text1))
            )
            n = len(doc)
            score = explanations["shapley"].score
            shapley = explanations["shapley"]
            tokens = shapley.tokens_a if side == "a" else shapley.tokens_b
            reference = shapley.reference_a if side == "a" else shapley.reference_b
            completeness.append(abs(sum(t.contribution for t in tokens) - (score - reference)))
            for k_name in ks:
                k = max(1, round(0.2 * n)) if k_name == "20%" else int(k_name)
                draws = numpy.ones((args.random_draws, n), dtype=bool)
                for row in draws:
                    row[rng.choice(n, size=k, replace=False)] = False
                random_fall = float(numpy.mean(score - subset_scores(pipe, doc, other, draws)))
                falls["random"][k_name].append(random_fall)
                for method in METHODS:
                    ex = explanations[method]
                    values = numpy.asarray([t.contribution for t in (ex.tokens_a if side == "a" else ex.tokens_b)])
                    mask = numpy.ones(n, dtype=bool)
                    mask[numpy.argsort(-values, kind="stable")[:k]] = False
                    fall = float(score - subset_scores(pipe, doc, other, mask[None, :])[0])
                    falls[method][k_name].append(fall)
                    wins[method][k_name].append(fall > random_fall)
    times = timing(nlp, records, args)
    result = {
        "model": given_path(args.model, parts=4),
        "pairs_file": given_path(args.pairs, parts=4),
        "settings": {k: v for k, v in vars(args).items() if k not in ("model", "pairs", "output_json")},
        "texts": 2 * len(records),
        "mean_fall": {m: {k: statistics.fmean(v) for k, v in by_k.items()} for m, by_k in falls.items()},
        "top_beats_random": {m: {k: statistics.fmean(v) for k, v in by_k.items()} for m, by_k in wins.items()},
        "shapley_completeness_max_error": max(completeness),
        "seconds_per_pair": times,
        "versions": {"python": platform.python_version(), "spacy": spacy.__version__, "numpy": numpy.__version__},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.output_json:
        args.output_json.parent.mkdir(parents=True, exist_ok=True)
        args.output_json.write_text(text + "\n", encoding="utf8")


def timing(nlp, records, args: argparse.Namespace) -> Dict[str, float]:
    """Median seconds per pair over `repeats` runs: doc.similarity (texts through the
    pipeline) and each explanation method, run one after another in this process."""
    runs: Dict[str, List[float]] = {"similarity": [], **{m: [] for m in METHODS}}
    for _ in range(args.repeats):
        start = time.perf_counter()
        for record in records:
            nlp(record.text1).similarity(nlp(record.text2))
        runs["similarity"].append((time.perf_counter() - start) / len(records))
        for method in METHODS:
            start = time.perf_counter()
            for record in records:
                explain_pair(nlp, record.text1, record.text2, method=method, samples=args.samples)
            runs[method].append((time.perf_counter() - start) / len(records))
    out = {name: statistics.median(values) for name, values in runs.items()}
    out.update({f"{m}_vs_similarity": out[m] / out["similarity"] for m in METHODS})
    return out


if __name__ == "__main__":
    main()
