"""Hierarchy-graded 20 Newsgroups pairs (Patel 2017, Table 1): MAE and MSE on the training
pairs and on pairs of held-out test documents, for trained siamese pipelines (LSTM + exp(-L1),
LSTM + exp(-L2)) and sklearn baselines fitted on the same training pairs: bag of words (word
counts) + PCA, and LDA topic mixtures, each turned into pair features |a - b| for an SVR and
an MLP.

The pairs come from `spacy-siamese.HierarchyPairs.v1` with the settings of the first model's
`[corpora.train]` block, so the training pairs are the ones the models were trained on; the
test pairs are drawn from the reader's seeded test part of the collection.

Usage (from project/):
    python scripts/hierarchy.py corpus/20news/documents.jsonl training/hierarchy_l1/model-best \
        training/hierarchy_l2/model-best --output metrics/hierarchy
"""

import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import numpy
import spacy
import srsly
import typer
from scipy.sparse import csr_matrix
from sklearn.decomposition import PCA, LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.neural_network import MLPRegressor
from sklearn.svm import SVR

from spacy_siamese.corpora import HierarchyPairs
from spacy_siamese.corpora.sampling import PairIndex
from spacy_siamese.metrics import regression_metrics

READER_KEYS = ("collection", "test_fraction", "dev_fraction", "n_pairs", "depth", "seed", "max_chars")
app = typer.Typer(add_completion=False)


def reader_settings(model: Path) -> Dict[str, Any]:
    """The HierarchyPairs settings of a trained pipeline's [corpora.train] block."""
    if not (model / "config.cfg").is_file():
        raise typer.BadParameter(f"{model} is not a trained pipeline (no config.cfg)")
    config = spacy.util.load_config(model / "config.cfg", interpolate=True)
    block = config["corpora"]["train"]
    if block.get("@readers") != "spacy-siamese.HierarchyPairs.v1":
        raise typer.BadParameter(f"{model} was not trained with spacy-siamese.HierarchyPairs.v1")
    return {key: block[key] for key in READER_KEYS}


def model_name(model: Path) -> str:
    config = spacy.util.load_config(model / "config.cfg", interpolate=True)
    arch = config["components"]["siamese_similarity"]["model"]
    encoder = arch["encoder"]["@architectures"].split(".")[1].replace("Encoder", "")
    norm = arch["comparison"].get("norm", "")
    comparison = f"exp(-{norm.upper()})" if norm else arch["comparison"]["@architectures"].split(".")[1]
    return f"siamese {encoder} + {comparison}"


def siamese_scores(model: Path, texts: List[str], pairs: Sequence[PairIndex]) -> numpy.ndarray:
    """The pipeline's similarity of every pair; each document is encoded once."""
    nlp = spacy.load(model)
    pipe = nlp.get_pipe("siamese_similarity")
    used = sorted({p.i for p in pairs} | {p.j for p in pairs})
    row = {i: k for k, i in enumerate(used)}
    vectors = pipe.vectors(list(nlp.tokenizer.pipe(texts[i] for i in used)))
    a = vectors[[row[p.i] for p in pairs]]
    b = vectors[[row[p.j] for p in pairs]]
    return pipe.compare(a, b)


def pair_features(X: numpy.ndarray, pairs: Sequence[PairIndex]) -> numpy.ndarray:
    """|a - b| of the paired rows."""
    return numpy.abs(X[[p.i for p in pairs]] - X[[p.j for p in pairs]])


def regressors(seed: int) -> Dict[str, Callable[[], Any]]:
    return {
        "SVR": lambda: SVR(kernel="rbf", C=1.0),
        "MLP": lambda: MLPRegressor(hidden_layer_sizes=(100,), max_iter=500, early_stopping=True, random_state=seed),
    }


def errors(scores: numpy.ndarray, labels: numpy.ndarray) -> Dict[str, Any]:
    """MAE, MSE and Spearman of the scores clipped to [0, 1]."""
    metrics = regression_metrics(numpy.clip(numpy.asarray(scores, dtype="f8"), 0.0, 1.0), labels)
    return {key: metrics[key] for key in ("mae", "mse", "spearman")}


@app.command()
def main(
    documents: Path = typer.Argument(..., help="documents.jsonl of the collection (text, labels, group, id)"),
    models: List[Path] = typer.Argument(..., help="Trained pipelines (model-best) to compare"),
    output: Path = typer.Option(Path("metrics/hierarchy"), help="Writes OUTPUT.json and OUTPUT.md"),
    test_pairs: int = typer.Option(1000, help="Pairs drawn from the held-out test documents"),
    pca_width: int = typer.Option(100, help="PCA components of the bag-of-words baseline"),
    lda_topics: int = typer.Option(20, help="Topics of the LDA baseline"),
    vocab: int = typer.Option(5000, help="Bag-of-words vocabulary (most frequent words, stop words out)"),
) -> None:
    """Write the Table 1 shape: MAE and MSE on train and test pairs per method."""
    settings = reader_settings(models[0])
    for model in models[1:]:
        if reader_settings(model) != settings:
            raise typer.BadParameter(f"{model} was trained on other pairs than {models[0]}: {reader_settings(model)}")
    seed = int(settings["seed"])
    train = HierarchyPairs(documents, split="train", **settings)
    test = HierarchyPairs(documents, split="test", **{**settings, "n_pairs": test_pairs})
    (train_texts, train_pairs), (test_texts, test_pairs_) = train.pairs(), test.pairs()
    y = {
        "train": numpy.asarray([p.label for p in train_pairs], dtype="f8"),
        "test": numpy.asarray([p.label for p in test_pairs_], dtype="f8"),
    }
    data = {"train": (train_texts, train_pairs), "test": (test_texts, test_pairs_)}
    results: Dict[str, Dict[str, Any]] = {}
    seconds: Dict[str, float] = {}
    for model in models:
        start = time.perf_counter()
        name = model_name(model)
        results[name] = {split: errors(siamese_scores(model, *data[split]), y[split]) for split in data}
        seconds[name] = time.perf_counter() - start
    results["mean training score (constant)"] = {
        split: errors(numpy.full(len(y[split]), y["train"].mean()), y[split]) for split in data
    }
    # Baselines: document features fitted on the training documents only.
    start = time.perf_counter()
    counter = CountVectorizer(max_features=vocab, stop_words="english", min_df=2)
    counts = {"train": csr_matrix(counter.fit_transform(train_texts), dtype="f8")}
    counts["test"] = csr_matrix(counter.transform(test_texts), dtype="f8")
    pca = PCA(n_components=pca_width, svd_solver="arpack", random_state=seed).fit(counts["train"])
    lda = LatentDirichletAllocation(n_components=lda_topics, learning_method="online", random_state=seed)
    lda.fit(counts["train"])
    features = {
        f"BoW + PCA ({pca_width})": {split: pca.transform(counts[split]) for split in data},
        f"LDA ({lda_topics} topics)": {split: lda.transform(counts[split]) for split in data},
    }
    for feature_name, X in features.items():
        F = {split: pair_features(X[split], data[split][1]) for split in data}
        for reg_name, make in regressors(seed).items():
            reg = make().fit(F["train"], y["train"])
            results[f"{feature_name} -> {reg_name}"] = {
                split: errors(reg.predict(F[split]), y[split]) for split in data
            }
    seconds["baselines"] = time.perf_counter() - start
    report = {
        "task": "hierarchy",
        "settings": {
            **settings,
            "test_pairs": test_pairs,
            "pca_width": pca_width,
            "lda_topics": lda_topics,
            "vocab": vocab,
        },
        "score_counts": {split: {str(k): v for k, v in sorted(Counter(y[split].tolist()).items())} for split in data},
        "documents": {"train": len(train_texts), "test": len(test_texts)},
        "models": {model_name(m): str(m) for m in models},
        "results": results,
        "seconds": seconds,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output.with_suffix(".json"), report)
    output.with_suffix(".md").write_text(markdown(report), encoding="utf8")
    typer.echo(markdown(report))


def markdown(report: Dict[str, Any]) -> str:
    counts = report["score_counts"]
    values = ", ".join(counts["train"])
    lines = [
        "### 20 Newsgroups hierarchy-graded pairs (Patel 2017, Table 1)",
        "",
        f"Pair score 2^(l - d) by the depth l of the groups' lowest common ancestor (values {values}); "
        f"{sum(counts['train'].values())} training pairs of {report['documents']['train']} documents, "
        f"{sum(counts['test'].values())} test pairs of {report['documents']['test']} held-out documents. "
        "Baselines are fitted on the training pairs; predictions are clipped to [0, 1].",
        "",
        "| method | train MAE | train MSE | test MAE | test MSE | test Spearman |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in report["results"].items():
        rho = r["test"]["spearman"]
        cells = [r["train"]["mae"], r["train"]["mse"], r["test"]["mae"], r["test"]["mse"]]
        lines.append(
            f"| {name} | " + " | ".join(f"{c:.4f}" for c in cells) + f" | {'-' if rho is None else f'{rho:.3f}'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    app()
