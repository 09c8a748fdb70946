"""`evaluate-retrieval`: rank held-out documents of a labelled collection with a trained pipeline."""

from pathlib import Path
from typing import Optional

import typer

from .app import MODEL, NAME, OUTPUT_JSON, OUTPUT_MD, PROGRESS, app, errors, load_pipeline, require_file, versions


@app.command("evaluate-retrieval")
def evaluate_retrieval_command(
    model: str = MODEL,
    documents: Path = typer.Argument(..., help="Labelled document collection (file or directory)"),
    collection: str = typer.Option(
        "jsonl", "--collection", "-c", help="Collection format: 20news, reuters, news or jsonl"
    ),
    split: str = typer.Option(
        "dev", "--split", help="dev: the seeded held-out part of the training documents; test: the test part"
    ),
    dev_fraction: float = typer.Option(
        0.2, "--dev-fraction", help="Held-out fraction of the seeded split (as in the DocumentPairs reader)"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the split, the document sample and the pairs"),
    max_docs: int = typer.Option(1500, "--max-docs", min=0, help="Use at most N held-out query documents (0 = all)"),
    baselines: bool = typer.Option(False, "--baselines", help="Also rank with TF-IDF cosine and LSA"),
    eval_pairs: int = typer.Option(4000, "--eval-pairs", min=0, help="Held-out pairs for the pair AUC (0 = none)"),
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    progress: bool = PROGRESS,
) -> None:
    """Rank held-out documents of a collection with a trained pipeline, optionally against baselines.

    Each held-out document is a query against the others (relevant = a shared label): MRR, P@k,
    MAP and pair AUC; --baselines adds TF-IDF cosine and LSA."""
    from ..evaluation.report import retrieval_markdown, write_report
    from ..evaluation.retrieval import evaluate_retrieval, heldout_documents
    from ..files import check_outputs

    with errors():
        require_file(documents)
        check_outputs([documents, model], [output_json, output_md])
        nlp = load_pipeline(model)
        train_docs, heldout = heldout_documents(
            collection, documents, split=split, dev_fraction=dev_fraction, seed=seed, max_docs=max_docs
        )
        report = evaluate_retrieval(
            nlp, train_docs, heldout, baselines=baselines, n_eval_pairs=eval_pairs, seed=seed, progress=progress
        )
        report.update(
            name=name,
            collection=collection,
            split=split,
            dev_fraction=dev_fraction,
            seed=seed,
            max_docs=max_docs,
            files={"documents": str(documents), "model": model},
            versions=versions(),
        )
        table = retrieval_markdown(report)
        write_report(report, table, output_json, output_md)
        typer.echo(table)
