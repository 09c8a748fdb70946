"""Document retrieval with TF-IDF cosine, LSA and S2Net side by side, for several vector widths.

For each collection: read its training part (Reuters: ModApte train), hold out a seeded part
(`--dev-fraction`, the same split as `spacy-siamese.DocumentPairs.v1` with split="dev"), and
keep a validation part of the rest for early stopping. S2Net is the `siamese_similarity` pipe
with `spacy-siamese.S2NetEncoder.v1` + cosine + pairwise logistic loss, trained with
`nlp.update` on seeded pairs of training documents (the settings of `--config`). The three
methods share the pipe's fitted TF-IDF featuriser (the package's `tfidf` layer, the TF-IDF of
every "TF-IDF cosine" figure); LSA at a width (`--widths`) is the pipe's projection right after
initialization (a truncated SVD of the training TF-IDF matrix), so S2Net starts from LSA at its width.

Evaluation on the held-out documents: each one is a query against all the others (relevant =
same label; Reuters: a shared TOPICS category): MRR of the first relevant document, P@1, P@10,
MAP (`spacy_siamese.evaluation.retrieval_metrics`); and ROC AUC on sampled held-out pairs.
`python -m spacy_siamese evaluate-retrieval` scores one trained pipeline the same way. Outputs
JSON, a Markdown table and a PNG plot of MRR against the width.

    python benchmarks/retrieval.py --collections 20news reuters --output-json benchmarks/retrieval.json \\
        --output-md benchmarks/retrieval.md --plot benchmarks/retrieval.png

By default the training documents are subsampled to 4,000 and the held-out queries to 1,500 per
collection (`--max-train-docs`, `--max-eval-docs`; 0 = all) to keep a run on one core short.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import spacy
from spacy.util import fix_random_seed, load_config, minibatch

from spacy_siamese.corpora import DocRecord, doc_pair_examples, read_documents, sample_pairs, split_documents
from spacy_siamese.evaluation import tfidf_vectors
from spacy_siamese.evaluation.baselines import find_tfidf
from spacy_siamese.metrics import pair_auc, retrieval_metrics

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "s2net_documents.cfg"  # the S2Net settings of the project's pipelines
DATA = ROOT.parent / "shared" / "data" / "documents"
PATHS = {
    "20news": DATA / "20news-bydate-train.tar.gz",
    "reuters": DATA / "reuters21578",
    "news": DATA / "uci-news-aggregator.partial.csv",
}
METRICS = ("mrr", "p@1", "p@10", "map", "auc")


def scores(vectors, labels: Sequence[Sequence[str]], pairs) -> Dict:
    """Retrieval metrics of the held-out documents and the pair AUC of the held-out pairs."""
    return {**retrieval_metrics(vectors, labels, ks=(1, 10)), "auc": pair_auc(vectors, pairs)}


def make_nlp(width: int, args: argparse.Namespace):
    """The S2Net pipe of the project's S2Net config, with this width and this run's settings."""
    prefix = "components.siamese_similarity"
    config = load_config(
        args.config,
        overrides={
            "vars.width": width,
            "system.seed": args.seed,
            f"{prefix}.model.encoder.min_df": args.min_df,
            f"{prefix}.model.encoder.max_vocab": args.max_vocab,
            f"{prefix}.loss.gamma": args.gamma,
        },
        interpolate=True,
    )
    nlp = spacy.blank("en")
    pipe_config = {key: value for key, value in config["components"]["siamese_similarity"].items() if key != "factory"}
    nlp.add_pipe("siamese_similarity", config=pipe_config)
    return nlp


def train_best(
    nlp,
    optimizer,
    examples: List,
    validate: Callable[[], float],
    *,
    max_epochs: int,
    patience: int,
    batch_size: int,
    seed: int,
    log: Callable[[str], None],
) -> Tuple[float, int]:
    """Train the pipeline's siamese pipe with `nlp.update` (examples shuffled with seed + epoch),
    stop after `patience` epochs without a better `validate()` (valid pair AUC), and keep the
    best epoch's weights; (best score, epochs run)."""
    pipe = nlp.get_pipe("siamese_similarity")
    best, best_bytes, bad, epochs = -1.0, None, 0, 0
    for epoch in range(max_epochs):
        random.Random(seed + epoch).shuffle(examples)
        for batch in minibatch(examples, batch_size):
            nlp.update(batch, sgd=optimizer)
        epochs += 1
        score = validate()
        log(f"epoch {epoch + 1}: valid pair AUC {score:.4f}")
        if score > best:
            best, best_bytes, bad = score, pipe.model.to_bytes(), 0
        else:
            bad += 1
            if bad >= patience:
                break
    pipe.model.from_bytes(best_bytes)
    return best, epochs


def collection_path(name: str, args: argparse.Namespace) -> Tuple[str, Path]:
    """(format, path): `<documents-dir>/<name>/documents.jsonl` (as the project's
    convert step writes it) when --documents-dir is given, else the raw collection."""
    if args.documents_dir:
        return "jsonl", Path(args.documents_dir) / name / "documents.jsonl"
    return name, PATHS[name]


def evaluate_model(path: str, heldout: Sequence[DocRecord], labels, eval_pairs) -> Dict:
    """A pipeline trained with `spacy train` (e.g. the project's S2Net config) on the same held-out docs."""
    nlp = spacy.load(path)
    pipe = nlp.get_pipe("siamese_similarity")
    vectors = pipe.vectors(list(nlp.tokenizer.pipe(d.text for d in heldout)))
    return {**scores(vectors, labels, eval_pairs), "width": int(vectors.shape[1]), "model": path}


def run_collection(name: str, args: argparse.Namespace, log) -> Dict:
    start = time.time()
    docs = read_documents(*collection_path(name, args), split="train")
    train_docs, heldout = split_documents(docs, dev_fraction=args.dev_fraction, seed=args.seed)
    rng = random.Random(args.seed)
    if args.max_train_docs and len(train_docs) > args.max_train_docs:
        train_docs = sorted(rng.sample(train_docs, args.max_train_docs), key=lambda d: d.id)
    if args.max_eval_docs and len(heldout) > args.max_eval_docs:
        heldout = sorted(rng.sample(heldout, args.max_eval_docs), key=lambda d: d.id)
    train_docs, valid_docs = split_documents(train_docs, dev_fraction=0.1, seed=args.seed)
    hard = 0.5 if name == "news" else 0.0
    train_pairs = sample_pairs(train_docs, n_pairs=args.n_pairs, hard_negative_ratio=hard, seed=args.seed)
    valid_pairs = sample_pairs(valid_docs, n_pairs=2000, hard_negative_ratio=hard, seed=args.seed + 1)
    eval_pairs = sample_pairs(heldout, n_pairs=args.eval_pairs, hard_negative_ratio=hard, seed=args.seed + 2)
    tokenizer = spacy.blank("en").tokenizer
    tok_train = list(tokenizer.pipe(d.text for d in train_docs))
    held = list(tokenizer.pipe(d.text for d in heldout))
    valid = list(tokenizer.pipe(d.text for d in valid_docs))
    log(
        f"[{name}] {len(train_docs)} train / {len(valid_docs)} valid / {len(heldout)} held-out docs, "
        f"{len(train_pairs)} train pairs ({time.time() - start:.0f}s)"
    )
    labels = [doc.labels for doc in heldout]
    out: Dict = {
        "collection": name,
        "n_train_docs": len(train_docs),
        "n_valid_docs": len(valid_docs),
        "n_heldout_docs": len(heldout),
        "n_train_pairs": len(train_pairs),
        "n_eval_pairs": len(eval_pairs),
        "results": {},
    }
    examples = list(doc_pair_examples(tok_train, train_pairs))  # training does not change them
    for width in args.widths:
        t0 = time.time()
        fix_random_seed(args.seed)
        nlp = make_nlp(width, args)
        pipe = nlp.get_pipe("siamese_similarity")
        train_examples = list(examples)  # each width starts from the same order
        optimizer = nlp.initialize(lambda: train_examples)  # noqa: B023  (called right here)
        optimizer.learn_rate = args.learn_rate
        featuriser = find_tfidf(pipe.model)  # the package's tfidf layer, fitted on the training pairs
        if "tfidf" not in out["results"]:
            X = tfidf_vectors(featuriser, held).toarray()
            out["results"]["tfidf"] = scores(X, labels, eval_pairs)
            out["vocab_size"] = featuriser.get_dim("nO")
        lsa = pipe.vectors(held)  # right after initialization: the truncated SVD of the training TF-IDF
        out["results"][f"lsa@{width}"] = scores(lsa, labels, eval_pairs)
        best, epochs = train_best(
            nlp,
            optimizer,
            train_examples,
            lambda: pair_auc(pipe.vectors(valid), valid_pairs),  # noqa: B023  (called in the loop)
            max_epochs=args.max_epochs,
            patience=args.patience,
            batch_size=args.batch_size,
            seed=args.seed,
            log=lambda msg: log(f"[{name}] width={width} {msg}"),  # noqa: B023
        )
        s2 = pipe.vectors(held)
        out["results"][f"s2net@{width}"] = {
            **scores(s2, labels, eval_pairs),
            "epochs": epochs,
            "valid_auc": best,
            "seconds": round(time.time() - t0, 1),
        }
        r = out["results"]
        log(
            f"[{name}] width={width}: MRR tfidf {r['tfidf']['mrr']:.4f} lsa {r[f'lsa@{width}']['mrr']:.4f} "
            f"s2net {r[f's2net@{width}']['mrr']:.4f}; P@10 {r['tfidf']['p@10']:.4f} "
            f"{r[f'lsa@{width}']['p@10']:.4f} {r[f's2net@{width}']['p@10']:.4f} ({time.time() - t0:.0f}s)"
        )
    if name in args.models:
        out["results"]["model"] = evaluate_model(args.models[name], heldout, labels, eval_pairs)
        log(f"[{name}] {args.models[name]}: MRR {out['results']['model']['mrr']:.4f}")
    out["seconds"] = round(time.time() - start, 1)
    return out


def markdown(report: Dict) -> str:
    lines = []
    for coll in report["collections"]:
        r = coll["results"]
        lines.append(
            f"**{coll['collection']}**: {coll['n_heldout_docs']} held-out query documents, "
            f"{coll['n_train_docs']} training documents, {coll['n_train_pairs']} training pairs, "
            f"vocabulary {coll['vocab_size']}, pair AUC on {coll['n_eval_pairs']} held-out pairs\n"
        )
        lines.append("| method | width | MRR | P@1 | P@10 | MAP | pair AUC |")
        lines.append("|---|---|---|---|---|---|---|")
        rows = [("TF-IDF cosine", "-", r["tfidf"])]
        for width in report["widths"]:
            rows.append(("LSA", str(width), r[f"lsa@{width}"]))
            rows.append(("S2Net", str(width), r[f"s2net@{width}"]))
        if "model" in r:
            rows.append(("S2Net (`spacy train` pipeline)", str(r["model"]["width"]), r["model"]))
        for method, width, m in rows:
            cells = " | ".join(f"{m[x]:.4f}" for x in METRICS)
            lines.append(f"| {method} | {width} | {cells} |")
        wins = [
            width
            for width in report["widths"]
            if width >= 100
            and all(r[f"s2net@{width}"][x] > max(r["tfidf"][x], r[f"lsa@{width}"][x]) for x in ("mrr", "p@10"))
        ]
        lines.append(f"\nS2Net beats TF-IDF and LSA in MRR and P@10 at widths {wins or 'none'} (of those >= 100).\n")
    return "\n".join(lines)


def plot(report: Dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colls = report["collections"]
    fig, axes = plt.subplots(1, len(colls), figsize=(4.5 * len(colls), 3.6), squeeze=False)
    widths = report["widths"]
    for ax, coll in zip(axes[0], colls):
        r = coll["results"]
        ax.plot(widths, [r["tfidf"]["mrr"]] * len(widths), "k--", label="TF-IDF cosine")
        ax.plot(widths, [r[f"lsa@{width}"]["mrr"] for width in widths], "o-", label="LSA")
        ax.plot(widths, [r[f"s2net@{width}"]["mrr"] for width in widths], "s-", label="S2Net")
        ax.set_title(coll["collection"])
        ax.set_xlabel("width (dimensions)")
        ax.set_ylabel("MRR (held-out retrieval)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: Optional[List[str]] = None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=["20news", "reuters", "news"])
    parser.add_argument("--widths", nargs="+", type=int, default=[50, 100, 300, 500], help="vector widths")
    parser.add_argument("--dev-fraction", type=float, default=0.2, help="held-out part of the training documents")
    parser.add_argument("--max-train-docs", type=int, default=4000, help="subsample the training documents (0: all)")
    parser.add_argument("--max-eval-docs", type=int, default=1500, help="subsample the held-out documents (0: all)")
    parser.add_argument("--n-pairs", type=int, default=12000)
    parser.add_argument("--eval-pairs", type=int, default=4000)
    parser.add_argument("--min-df", type=int, default=2)
    parser.add_argument("--max-vocab", type=int, default=20000)
    parser.add_argument("--gamma", type=float, default=10.0)
    parser.add_argument("--learn-rate", type=float, default=0.001)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--max-epochs", type=int, default=4)
    parser.add_argument("--patience", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--config", default=str(CONFIG), help="S2Net training config (its siamese_similarity component)"
    )
    parser.add_argument("--documents-dir", help="read <dir>/<collection>/documents.jsonl (the project's corpus)")
    parser.add_argument(
        "--models",
        nargs="+",
        default=[],
        metavar="COLLECTION=PATH",
        help="also evaluate pipelines trained with `spacy train` on the same held-out docs",
    )
    parser.add_argument("--output-json")
    parser.add_argument("--output-md")
    parser.add_argument("--plot")
    parser.add_argument("--from-json", nargs="+", help="only render the table and plot of saved runs")
    args = parser.parse_args(argv)
    try:
        args.models = dict(item.split("=", 1) for item in args.models)
    except ValueError:
        parser.error(f"--models takes COLLECTION=PATH items, got {args.models}")
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    start = time.time()
    if args.from_json:
        runs = [json.loads(Path(path).read_text()) for path in args.from_json]
        report = {
            "widths": runs[0]["widths"],
            "runs": [run for r in runs for run in r.get("runs", [r.get("args")])],  # single runs or merged files
            "collections": [c for r in runs for c in r["collections"]],
        }
    else:
        report = {
            "widths": args.widths,
            "args": {k: _portable(v) for k, v in vars(args).items() if k not in OUTPUT_ARGS},
            "collections": [run_collection(name, args, log) for name in args.collections],
        }
    report["seconds"] = round(time.time() - start, 1)
    table = markdown(report)
    print(table)
    if args.output_json:
        Path(args.output_json).write_text(json.dumps(report, indent=2))
    if args.output_md:
        Path(args.output_md).write_text(table)
    if args.plot:
        plot(report, args.plot)
    return report


OUTPUT_ARGS = ("output_json", "output_md", "plot", "from_json")


def _portable(value):
    """Absolute paths relative to the repository, so results files name no machine path."""
    if isinstance(value, str) and Path(value).is_absolute():
        return os.path.relpath(value, ROOT)
    return value


if __name__ == "__main__":
    main()
