"""Few-shot classification of unseen classes by similarity (Patel 2017, Figure 7), on a document
collection such as 20 Newsgroups.

`split` holds some groups out: the siamese model is trained on the others (seen.jsonl) only.
`run` classifies documents of the held-out groups with the `similarity_classifier` pipe (mean
similarity to k exemplars per class) and, under the same rule and the same exemplars, with
TF-IDF cosine (fitted on the seen documents) and averaged word vectors; it writes the accuracy
per k as JSON, a Markdown table and a plot.

Usage (from project/):
    python scripts/oneshot.py split corpus/20news/documents.jsonl corpus/oneshot
    python scripts/oneshot.py run training/oneshot/model-best corpus/oneshot/unseen.jsonl \
        --fit-texts corpus/oneshot/seen.jsonl --vectors assets/vectors --output metrics/oneshot
"""

import warnings
from pathlib import Path
from typing import Dict, List, Sequence

import numpy
import spacy
import srsly
import typer
from scipy.sparse import issparse

from spacy_siamese.evaluation.baselines import fit_tfidf, load_vectors, tfidf_vectors
from spacy_siamese.metrics import unit_rows

HELD_OUT = "comp.windows.x,misc.forsale,rec.sport.hockey,sci.space,talk.politics.mideast"
app = typer.Typer(add_completion=False)


@app.command()
def split(
    documents: Path = typer.Argument(..., help="documents.jsonl (text, labels, group)"),
    output_dir: Path = typer.Argument(..., help="Writes seen.jsonl and unseen.jsonl"),
    held_out: str = typer.Option(HELD_OUT, help="Comma-separated groups to hold out as new classes"),
) -> None:
    """Split a collection into seen groups (for training) and held-out groups (new classes)."""
    groups = set(held_out.split(","))
    seen, unseen = [], []
    for line, doc in enumerate(srsly.read_jsonl(documents), start=1):
        if not isinstance(doc, dict) or not isinstance(doc.get("group"), str):
            raise typer.BadParameter(f'{documents}:{line}: a document needs a "group" string (the class to hold out)')
        (unseen if doc["group"] in groups else seen).append(doc)
    missing = groups - {doc["group"] for doc in unseen}
    if missing:
        raise typer.BadParameter(f"no documents of the groups {sorted(missing)} in {documents}")
    if not seen:
        raise typer.BadParameter(f"every group of {documents} is held out: no documents left to train on")
    output_dir.mkdir(parents=True, exist_ok=True)
    srsly.write_jsonl(output_dir / "seen.jsonl", seen)
    srsly.write_jsonl(output_dir / "unseen.jsonl", unseen)
    typer.echo(f"{len(seen)} documents of seen groups, {len(unseen)} of {len(groups)} held-out groups")


def mean_rule(sims: numpy.ndarray, pool_labels: Sequence[str], labels: Sequence[str], k: int) -> numpy.ndarray:
    """(n_test, n_labels) mean similarity to the first k exemplars of each label in the pool."""
    pool = numpy.asarray(pool_labels)
    columns = [numpy.flatnonzero(pool == label)[:k] for label in labels]
    return numpy.stack([sims[:, c].mean(axis=1) for c in columns], axis=1)


def cosine_matrix(A, B) -> numpy.ndarray:
    """Cosine of every row of A with every row of B (dense or sparse; a zero row scores 0)."""
    if issparse(A):
        A, B = unit_rows(A), unit_rows(B)
        return numpy.asarray((A @ B.T).toarray(), dtype="f8")
    na = numpy.linalg.norm(A, axis=1, keepdims=True)
    nb = numpy.linalg.norm(B, axis=1, keepdims=True)
    return (A / numpy.where(na > 0, na, 1.0)) @ (B / numpy.where(nb > 0, nb, 1.0)).T


@app.command()
def run(
    model: str = typer.Argument(..., help="Pipeline with a siamese_similarity pipe trained on the seen groups"),
    unseen: Path = typer.Argument(..., help="unseen.jsonl from `split`"),
    fit_texts: Path = typer.Option(..., help="seen.jsonl: the TF-IDF baseline is fitted on these texts"),
    vectors: str = typer.Option(..., help="Pipeline with the static vectors of the averaged-vectors baseline"),
    output: Path = typer.Option(Path("metrics/oneshot"), help="Writes OUTPUT.json, OUTPUT.md and OUTPUT.png"),
    shots: str = typer.Option("1,2,5,10,20", help="Exemplars per class"),
    repeats: int = typer.Option(5, min=1, help="Draws of exemplars and test documents"),
    max_test: int = typer.Option(100, min=1, help="Test documents per class and draw"),
    seed: int = typer.Option(0),
) -> None:
    """Accuracy on the held-out classes against the number of exemplars per class."""
    try:
        ks = sorted({int(k) for k in shots.split(",")})
    except ValueError:
        raise typer.BadParameter(f"--shots takes whole numbers separated by commas, got {shots!r}") from None
    if ks[0] < 1:
        raise typer.BadParameter(f"--shots: every class needs at least 1 exemplar, got {shots!r}")
    docs_by_label: Dict[str, List[str]] = {}
    for doc in srsly.read_jsonl(unseen):
        docs_by_label.setdefault(doc["group"], []).append(doc["text"])
    labels = sorted(docs_by_label)
    nlp = spacy.load(model)
    clf = nlp.add_pipe("similarity_classifier", last=True)
    vec_nlp = load_vectors(vectors)
    tfidf = fit_tfidf(nlp.make_doc(doc["text"]) for doc in srsly.read_jsonl(fit_texts))
    results: Dict[str, Dict[str, List[float]]] = {m: {str(k): [] for k in ks} for m in METHODS}
    for r in range(repeats):
        rng = numpy.random.default_rng(seed + r)
        pool_texts, pool_labels, test_texts, gold = [], [], [], []
        for label in labels:
            order = rng.permutation(len(docs_by_label[label]))
            texts = [docs_by_label[label][i] for i in order]
            if len(texts) < ks[-1] + 1:
                raise typer.BadParameter(f"{label}: {len(texts)} documents, fewer than {ks[-1]} exemplars + 1")
            pool_texts += texts[: ks[-1]]
            pool_labels += [label] * ks[-1]
            test_texts += texts[ks[-1] : ks[-1] + max_test]
            gold += [labels.index(label)] * len(texts[ks[-1] : ks[-1] + max_test])
        with nlp.select_pipes(disable=["similarity_classifier"]):
            test_docs = list(nlp.pipe(test_texts))
        tf_test = tfidf_vectors(tfidf, [nlp.make_doc(t) for t in test_texts])
        tf_pool = tfidf_vectors(tfidf, [nlp.make_doc(t) for t in pool_texts])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            av_test = numpy.asarray([vec_nlp.make_doc(t).vector for t in test_texts])
            av_pool = numpy.asarray([vec_nlp.make_doc(t).vector for t in pool_texts])
        baseline_sims = {
            "TF-IDF cosine": cosine_matrix(tf_test, tf_pool),
            "averaged word vectors": cosine_matrix(av_test, av_pool),
        }
        for k in ks:
            clf.exemplars = {}
            for label in labels:
                clf.add_exemplars(label, [t for t, y in zip(pool_texts, pool_labels) if y == label][:k])
            scores = {"siamese_similarity (similarity_classifier)": clf.predict(test_docs)}
            for name, sims in baseline_sims.items():
                scores[name] = mean_rule(sims, pool_labels, labels, k)
            for name, s in scores.items():
                results[name][str(k)].append(float((s.argmax(axis=1) == numpy.asarray(gold)).mean()))
    write_outputs(results, ks, labels, output, repeats=repeats, max_test=max_test)


METHODS = ("siamese_similarity (similarity_classifier)", "TF-IDF cosine", "averaged word vectors")


def write_outputs(results, ks, labels, output: Path, *, repeats: int, max_test: int) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        name: {k: {"mean": float(numpy.mean(v)), "std": float(numpy.std(v))} for k, v in per_k.items()}
        for name, per_k in results.items()
    }
    srsly.write_json(output.with_suffix(".json"), {"classes": labels, "repeats": repeats, "accuracy": summary})
    lines = [
        f"### Few-shot accuracy on {len(labels)} unseen classes ({', '.join(labels)})",
        "",
        f"Mean (std) over {repeats} draws of exemplars and up to {max_test} test documents per class; "
        "each method scores a class by the mean similarity to its k exemplars.",
        "",
        "| method | " + " | ".join(f"k = {k}" for k in ks) + " |",
        "|---|" + "---|" * len(ks),
    ]
    for name in results:
        cells = [f"{summary[name][str(k)]['mean']:.3f} ({summary[name][str(k)]['std']:.3f})" for k in ks]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    output.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf8")
    typer.echo("\n".join(lines))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in results:
        means = [summary[name][str(k)]["mean"] for k in ks]
        stds = [summary[name][str(k)]["std"] for k in ks]
        ax.errorbar(ks, means, yerr=stds, marker="o", capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_xlabel("exemplars per class")
    ax.set_ylabel("accuracy on unseen classes")
    ax.axhline(1.0 / len(labels), color="grey", linestyle=":", label="chance")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output.with_suffix(".png"), dpi=120)


if __name__ == "__main__":
    app()
