"""The denoising autoencoder with triplet loss (Tajima et al. 2016) against plain DAE and TF-IDF.

Two experiments, each model the `siamese_similarity` pipe with `spacy-siamese.DAEEncoder.v1`,
a comparison (`--comparison`) and `spacy-siamese.TripletLoss.v1` (`weight` = alpha; alpha = 0
is the plain DAE, trained on its reconstruction alone), trained with `nlp.update` on labelled
single docs (triplets mined in each batch), the epoch kept by a validation part of the training
documents:

- UCI news (the blog's experiment): the sample split into seeded train / test halves; DAE +
  triplet trained on the train half's categories (`--news-label`). ROC AUC of the cosine of
  every two headlines of a half for "same category" and "same story", train and test, DAE +
  triplet vs DAE vs TF-IDF cosine, and the ROC curves of the test half (`--plot`).
- 20 Newsgroups retrieval: the held-out documents of `benchmarks/retrieval.py` (the same seeded
  split and samples); each one a query against the others (relevant = same newsgroup): MRR,
  P@1, P@10, MAP and pair AUC, beside TF-IDF cosine, LSA and S2Net (`--s2net-width`, the settings of
  `benchmarks/retrieval.py`).

    python benchmarks/dae.py --output-json benchmarks/results/dae.json --plot benchmarks/results/dae_roc.png
"""

import argparse
import importlib.util
import json
import random
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
import spacy
from sklearn.metrics import roc_auc_score, roc_curve
from spacy.tokens import Doc
from spacy.util import fix_random_seed, minibatch

from spacy_siamese.corpora import doc_pair_examples, read_documents, sample_pairs, split_documents
from spacy_siamese.evaluation.baselines import fit_tfidf, lsa, tfidf_vectors
from spacy_siamese.labelled import labelled_doc_example
from spacy_siamese.layers.dae import reconstruction_loss
from spacy_siamese.metrics import pair_auc, retrieval_metrics, unit_rows

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "documents"
PATHS = {"20news": DATA / "20news-bydate-train.tar.gz", "news": DATA / "uci-news-aggregator.partial.csv"}
# The TF-IDF of benchmarks/retrieval.py (the S2Net featuriser of configs/s2net_documents.cfg).
TFIDF = {"attr": "lower", "drop_stop": True, "drop_punct": True, "min_df": 2, "max_vocab": 20000}
COMPARISONS = {"cosine": "spacy-siamese.CosineSimilarity.v1", "dot": "spacy-siamese.DotSimilarity.v1"}


def make_dae(args: argparse.Namespace, *, alpha: float, min_df: int):
    """A blank pipeline with the DAE (+ triplet) pipe."""
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "siamese_similarity",
        config={
            "model": {
                "@architectures": "spacy-siamese.Siamese.v1",
                "encoder": {
                    "@architectures": "spacy-siamese.DAEEncoder.v1",
                    "width": args.width,
                    "max_vocab": args.max_vocab,
                    "min_df": min_df,
                    "noise": args.noise,
                    "seed": args.seed,
                },
                "comparison": {"@architectures": COMPARISONS[args.comparison]},
            },
            "loss": {
                "@losses": "spacy-siamese.TripletLoss.v1",
                "form": "logistic",
                "mining": args.mining,
                "scale": args.scale,
                "weight": alpha,
            },
        },
    )
    return nlp


def train_dae(
    args: argparse.Namespace,
    docs: Sequence[Doc],
    labels: Sequence[Sequence[str]],
    validate: Callable[[numpy.ndarray], float],
    valid_docs: Sequence[Doc],
    *,
    alpha: float,
    min_df: int,
    log: Callable[[str], None],
    name: str,
):
    """Train on labelled docs for `--epochs` epochs; the pipe with the best validation score."""
    fix_random_seed(args.seed)
    nlp = make_dae(args, alpha=alpha, min_df=min_df)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = [labelled_doc_example(doc, ls) for doc, ls in zip(docs, labels)]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = args.learn_rate
    bow = pipe.encoder.layers[0]
    dae = pipe.encoder.layers[1]
    X_valid = bow.predict(list(valid_docs))
    best, best_bytes, best_epoch, history = -1.0, None, 0, []
    for epoch in range(args.epochs):
        random.Random(args.seed + epoch).shuffle(examples)
        losses: Dict[str, float] = {}
        for batch in minibatch(examples, args.batch_size):
            nlp.update(batch, sgd=optimizer, losses=losses)
        score = validate(pipe.vectors(valid_docs))
        recon = reconstruction_loss(dae, X_valid)
        history.append({"epoch": epoch + 1, "valid": round(score, 4), "valid_reconstruction": round(recon, 3)})
        log(
            f"[{name}] epoch {epoch + 1}: triplet {losses['siamese_similarity']:.3f} "
            f"valid {score:.4f} recon {recon:.2f}"
        )
        if score > best:
            best, best_bytes, best_epoch = score, pipe.model.to_bytes(), epoch + 1
    pipe.model.from_bytes(best_bytes)
    return pipe, {"valid": round(best, 4), "epoch": best_epoch, "history": history, "vocab": bow.get_dim("nO")}


def all_pair_auc(vectors, labels: Sequence[str]) -> Tuple[float, numpy.ndarray, numpy.ndarray]:
    """ROC AUC of the cosine of every two rows against 'same label', and the (i, j, score) order."""
    V = unit_rows(numpy.asarray(vectors.toarray() if hasattr(vectors, "toarray") else vectors))
    i, j = numpy.triu_indices(len(V), k=1)
    scores = (V @ V.T)[i, j]
    y = numpy.asarray(labels)[i] == numpy.asarray(labels)[j]
    return float(roc_auc_score(y, scores)), scores, y


def run_news(args: argparse.Namespace, log) -> Dict:
    docs = read_documents("news", PATHS["news"])
    train, test = split_documents(docs, dev_fraction=0.5, seed=args.seed)
    fit, valid = split_documents(train, dev_fraction=0.1, seed=args.seed)
    tokenizer = spacy.blank("en").tokenizer
    tok = {key: list(tokenizer.pipe(d.text for d in part)) for key, part in (("fit", fit), ("valid", valid))}
    tok["train"] = list(tokenizer.pipe(d.text for d in train))
    tok["test"] = list(tokenizer.pipe(d.text for d in test))
    field = (lambda d: d.group) if args.news_label == "group" else (lambda d: d.labels[0])  # noqa: E731
    valid_category = [d.group for d in valid]
    log(f"[news] {len(fit)} fit / {len(valid)} valid / {len(test)} test headlines")
    out: Dict = {"n_train": len(train), "n_fit": len(fit), "n_valid": len(valid), "n_test": len(test), "results": {}}
    vectors: Dict[str, Dict[str, numpy.ndarray]] = {}
    tfidf = fit_tfidf(tok["train"], **{**TFIDF, "min_df": args.news_min_df})
    vectors["tfidf"] = {part: tfidf_vectors(tfidf, tok[part]).toarray() for part in ("train", "test")}
    for name, alpha in (("dae", 0.0), ("dae_triplet", args.alpha)):
        if name not in args.models:
            continue
        pipe, info = train_dae(
            args,
            tok["fit"],
            [[field(d)] for d in fit],
            lambda V: all_pair_auc(V, valid_category)[0],
            tok["valid"],
            alpha=alpha,
            min_df=args.news_min_df,
            log=log,
            name=f"news {name}",
        )
        out["results"][name] = {"alpha": alpha, **info}
        vectors[name] = {part: pipe.vectors(tok[part]) for part in ("train", "test")}
    curves = {}
    for name, parts in vectors.items():
        result = out["results"].setdefault(name, {})
        for part, V in parts.items():
            for level, labels in (
                ("category", [d.group for d in (train if part == "train" else test)]),
                ("story", [d.labels[0] for d in (train if part == "train" else test)]),
            ):
                auc, scores, y = all_pair_auc(V, labels)
                result[f"{level}_auc_{part}"] = round(auc, 4)
                if part == "test":
                    fpr, tpr, _ = roc_curve(y, scores)
                    keep = numpy.unique(numpy.linspace(0, len(fpr) - 1, 400).astype(int))
                    curves[(name, level)] = (fpr[keep], tpr[keep])
        log(f"[news] {name}: " + " ".join(f"{k} {v}" for k, v in result.items() if k.endswith(("_train", "_test"))))
    out["curves"] = curves
    return out


def run_20news(args: argparse.Namespace, log) -> Dict:
    """The held-out documents and training documents of benchmarks/retrieval.py."""
    docs = read_documents("20news", PATHS["20news"], split="train")
    train_docs, heldout = split_documents(docs, dev_fraction=0.2, seed=args.seed)
    rng = random.Random(args.seed)
    if args.max_train_docs and len(train_docs) > args.max_train_docs:
        train_docs = sorted(rng.sample(train_docs, args.max_train_docs), key=lambda d: d.id)
    if len(heldout) > 1500:
        heldout = sorted(rng.sample(heldout, 1500), key=lambda d: d.id)
    train_docs, valid_docs = split_documents(train_docs, dev_fraction=0.1, seed=args.seed)
    eval_pairs = sample_pairs(heldout, n_pairs=4000, seed=args.seed + 2)
    tokenizer = spacy.blank("en").tokenizer
    tok_train = list(tokenizer.pipe(d.text for d in train_docs))
    tok_valid = list(tokenizer.pipe(d.text for d in valid_docs))
    held = list(tokenizer.pipe(d.text for d in heldout))
    labels = [d.labels for d in heldout]
    valid_labels = [d.labels for d in valid_docs]
    log(f"[20news] {len(train_docs)} train / {len(valid_docs)} valid / {len(heldout)} held-out docs")

    def scores(V) -> Dict:
        m = retrieval_metrics(V, labels, ks=(1, 10))
        return {key: round(m[key], 4) for key in ("mrr", "p@1", "p@10", "map")} | {
            "auc": round(pair_auc(V, eval_pairs), 4)
        }

    out: Dict = {"n_train": len(train_docs), "n_valid": len(valid_docs), "n_heldout": len(heldout), "results": {}}
    tfidf = fit_tfidf(tok_train, **TFIDF)
    out["results"]["tfidf"] = scores(tfidf_vectors(tfidf, held))
    for width in sorted({args.width, args.s2net_width} - {0}):
        out["results"][f"lsa@{width}"] = scores(
            lsa(tfidf_vectors(tfidf, tok_train), tfidf_vectors(tfidf, held), width=width, seed=args.seed)
        )
    for name, alpha in (("dae", 0.0), ("dae_triplet", args.alpha)):
        if name not in args.models:
            continue
        t0 = time.time()
        pipe, info = train_dae(
            args,
            tok_train,
            [d.labels for d in train_docs],
            lambda V: retrieval_metrics(V, valid_labels, ks=(10,))["p@10"],
            tok_valid,
            alpha=alpha,
            min_df=2,
            log=log,
            name=f"20news {name}",
        )
        out["results"][name] = {
            **scores(pipe.vectors(held)),
            "alpha": alpha,
            **info,
            "seconds": round(time.time() - t0),
        }
    if args.s2net_width:
        out["results"][f"s2net@{args.s2net_width}"] = train_s2net(args, train_docs, valid_docs, held, scores, log)
    for name, r in out["results"].items():
        log(f"[20news] {name}: MRR {r['mrr']} P@10 {r['p@10']} MAP {r['map']} AUC {r['auc']}")
    return out


def train_s2net(args, train_docs, valid_docs, held, scores, log) -> Dict:
    """S2Net of width --s2net-width with the settings and training loop of benchmarks/retrieval.py."""
    spec = importlib.util.spec_from_file_location("retrieval_benchmark", ROOT / "benchmarks" / "retrieval.py")
    retrieval = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(retrieval)  # type: ignore[union-attr]
    settings = argparse.Namespace(config=str(retrieval.CONFIG), seed=args.seed, min_df=2, max_vocab=20000, gamma=10.0)
    t0 = time.time()
    fix_random_seed(args.seed)
    nlp = retrieval.make_nlp(args.s2net_width, settings)
    pipe = nlp.get_pipe("siamese_similarity")
    tokenizer = nlp.tokenizer
    tok_train = list(tokenizer.pipe(d.text for d in train_docs))
    valid = list(tokenizer.pipe(d.text for d in valid_docs))
    train_pairs = sample_pairs(train_docs, n_pairs=12000, seed=args.seed)
    valid_pairs = sample_pairs(valid_docs, n_pairs=2000, seed=args.seed + 1)
    examples = list(doc_pair_examples(tok_train, train_pairs))
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.001
    best, _ = retrieval.train_best(
        nlp,
        optimizer,
        examples,
        lambda: pair_auc(pipe.vectors(valid), valid_pairs),
        max_epochs=4,
        patience=1,
        batch_size=256,
        seed=args.seed,
        log=lambda msg: log(f"[20news] s2net@{args.s2net_width} {msg}"),
    )
    return {**scores(pipe.vectors(held)), "valid_auc": round(best, 4), "seconds": round(time.time() - t0)}


def plot(curves: Dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = {"tfidf": "TF-IDF cosine", "dae": "DAE", "dae_triplet": "DAE + triplet"}
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
    for ax, level in zip(axes, ("category", "story")):
        for name, label in names.items():
            if (name, level) in curves:
                fpr, tpr = curves[(name, level)]
                ax.plot(fpr, tpr, label=label)
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set_title(f"UCI news test half: same {level}")
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main(argv: Optional[List[str]] = None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=["news", "20news"], choices=["news", "20news"])
    parser.add_argument("--width", type=int, default=50)
    parser.add_argument("--max-vocab", type=int, default=10000)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--alpha", type=float, default=10.0)
    parser.add_argument("--comparison", choices=list(COMPARISONS), default="cosine")
    parser.add_argument("--scale", type=float, default=10.0, help="logistic triplet loss: scale of the score gap")
    parser.add_argument("--mining", choices=["all", "hard"], default="all")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learn-rate", type=float, default=0.001)
    parser.add_argument("--news-label", choices=["group", "labels"], default="group", help="category or story")
    parser.add_argument("--news-min-df", type=int, default=1)
    parser.add_argument("--max-train-docs", type=int, default=4000, help="20news, as benchmarks/retrieval.py")
    parser.add_argument("--s2net-width", type=int, default=0, help="also train S2Net at this width (0: no)")
    parser.add_argument("--models", nargs="+", default=["dae", "dae_triplet"], choices=["dae", "dae_triplet"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-json")
    parser.add_argument("--plot")
    args = parser.parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    start = time.time()
    report: Dict = {"args": {k: v for k, v in vars(args).items() if k not in ("output_json", "plot")}}
    curves: Dict = {}
    if "news" in args.collections:
        report["news"] = run_news(args, log)
        curves = report["news"].pop("curves")
    if "20news" in args.collections:
        report["20news"] = run_20news(args, log)
    report["seconds"] = round(time.time() - start, 1)
    print(json.dumps(report, indent=2))
    if args.output_json:
        Path(args.output_json).write_text(json.dumps(report, indent=2))
    if args.plot and curves:
        plot(curves, args.plot)
    return report


if __name__ == "__main__":
    main()
