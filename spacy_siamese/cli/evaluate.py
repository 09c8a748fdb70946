"""`evaluate`, `evaluate-retrieval`, `convert` and `report`: scoring pipelines on labelled data."""

from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import typer
from spacy.tokens import DocBin
from tqdm import tqdm

from ..evaluation.baselines import distinct_texts, load_bare, load_vectors
from ..evaluation.pairs import evaluate_pairs, show_progress
from ..evaluation.report import (
    examples_markdown,
    pairs_markdown,
    plot_curves,
    read_json,
    retrieval_markdown,
    summary_markdown,
    write_json,
    write_text,
)
from ..evaluation.retrieval import evaluate_retrieval, heldout_documents
from ..pairs import make_pair_example
from .app import (
    NAME,
    OUTPUT_JSON,
    OUTPUT_MD,
    PROGRESS,
    app,
    errors,
    expand_paths,
    fail,
    load_pipeline,
    path_str,
    read_pair_records,
    require_file,
    versions,
)


@app.command("evaluate")
def evaluate_command(
    model: str = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe (directory or package)"),
    data: Path = typer.Argument(..., help="Labelled pair file (a format of spacy_siamese.corpora.read_pairs)"),
    format: str = typer.Option("auto", "--format", "-f", help="Pair file format"),
    limit: int = typer.Option(0, "--limit", "-n", help="Evaluate on the first N pairs only (0 = all)"),
    baselines: bool = typer.Option(False, "--baselines", help="Also score TF-IDF cosine and averaged word vectors"),
    fit_texts: Optional[Path] = typer.Option(
        None, "--fit-texts", help="Pair file whose texts fit the TF-IDF (default: the evaluated texts)"
    ),
    fit_limit: int = typer.Option(
        50000, "--fit-limit", help="Fit the TF-IDF on at most N pairs of --fit-texts (0 = all)"
    ),
    vectors: Optional[str] = typer.Option(
        None, "--vectors", help="Pipeline whose static vectors the vectors baseline uses (default: the model's own)"
    ),
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write ROC and precision-recall curves as PNG"),
    examples: int = typer.Option(8, "--examples", help="Show N example pairs with every method's score"),
    progress: bool = PROGRESS,
) -> None:
    """Score a labelled pair file with a trained pipeline, optionally against baselines.

    The pipeline uses its stored threshold; with --baselines, TF-IDF cosine and averaged word
    vectors use the accuracy-optimal threshold on the file.
    """
    with errors():
        for path in (data, fit_texts):
            require_file(path)  # before the model loads
        nlp = load_pipeline(model)
        records = read_pair_records(data, format=format, limit=limit)
        fit: Optional[List[str]] = None
        fit_note = None
        if baselines and fit_texts is not None:
            fit_records = read_pair_records(fit_texts, limit=fit_limit)
            fit = distinct_texts((r.text1, r.text2) for r in fit_records)
            fit_note = f"the {len(fit):,} distinct texts of the first {len(fit_records):,} pairs of {fit_texts}"
        vectors_nlp = load_vectors(vectors) if baselines and vectors else None
        result = evaluate_pairs(
            nlp,
            records,
            baselines=baselines,
            fit_texts=fit,
            vectors=vectors_nlp,
            n_examples=examples,
            progress=progress,
        )
        report = result.report
        if fit_note is not None:
            report["tfidf"]["fitted_on"] = fit_note
        report.update(
            name=name,
            files={"data": str(data), "model": model, "fit_texts": path_str(fit_texts), "vectors": vectors},
            format=format,
            limit=limit,
            fit_limit=fit_limit,
            versions=versions(),
        )
        table = pairs_markdown(report)
        examples_md = examples_markdown(report)
        for note in result.notes:
            typer.echo(note, err=True)
        if output_json:
            write_json(report, output_json)
        if output_md:
            write_text(table + ("\n#### Example pairs\n\n" + examples_md if examples_md else ""), output_md)
        if plot:
            plot_curves(plot, result.labels, result.scores, f"{name or data.name} ({len(records):,} pairs)")
        typer.echo(table)
        if examples_md:
            typer.echo(examples_md)
        check = report["similarity_check"]
        diff = check["max_abs_diff"]
        typer.echo(f"doc.similarity vs the pipe's batch scores on {check['n_pairs']} pairs: max |diff| {diff:.2e}")


@app.command("evaluate-retrieval")
def evaluate_retrieval_command(
    model: str = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe (directory or package)"),
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
    max_docs: int = typer.Option(1500, "--max-docs", help="Use at most N held-out query documents (0 = all)"),
    baselines: bool = typer.Option(False, "--baselines", help="Also rank with TF-IDF cosine and LSA"),
    eval_pairs: int = typer.Option(4000, "--eval-pairs", help="Held-out pairs for the pair AUC (0 = none)"),
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    progress: bool = PROGRESS,
) -> None:
    """Rank held-out documents of a collection with a trained pipeline, optionally against baselines.

    Each held-out document is a query against the others (relevant = a shared label): MRR, P@k,
    MAP and pair AUC; --baselines adds TF-IDF cosine and LSA.
    """
    with errors():
        require_file(documents)
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
        if output_json:
            write_json(report, output_json)
        if output_md:
            write_text(table, output_md)
        typer.echo(table)


@app.command("convert")
def convert_command(
    input: Path = typer.Argument(..., help="Labelled pair file (a format of spacy_siamese.corpora.read_pairs)"),
    output: Path = typer.Argument(..., help="Output .spacy file"),
    format: str = typer.Option("auto", "--format", "-f", help="Pair file format"),
    lang: str = typer.Option("en", "--lang", "-l", help="Tokenize with spacy.blank(LANG)"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Tokenize with this pipeline's tokenizer instead"),
    limit: int = typer.Option(0, "--limit", "-n", help="Convert the first N pairs only (0 = all)"),
    lenient: bool = typer.Option(False, "--lenient", help="Skip malformed lines with a warning"),
    progress: bool = PROGRESS,
) -> None:
    """Write a pair file as a .spacy file for `spacy evaluate` and spaCy's corpus reader.

    Each doc is side A of a pair, with side B and the label in its user_data. `spacy evaluate`
    writes the pipe's sim_* scores to its --output JSON (its printed table has no sim_* rows).
    """
    with errors():
        if output.suffix != ".spacy":
            fail(f"The output must be a .spacy file, got {output}")
        nlp = load_bare(model) if model else spacy.blank(lang)
        records = read_pair_records(input, format=format, limit=limit, lenient=lenient)
        doc_bin = DocBin(store_user_data=True)
        for rec in tqdm(records, desc="converting", unit="pair", disable=not show_progress(progress)):
            doc_bin.add(make_pair_example(nlp, rec.text1, rec.text2, rec.label).reference)
        output.parent.mkdir(parents=True, exist_ok=True)
        doc_bin.to_disk(output)
        typer.echo(f"Wrote {len(records):,} pairs to {output}")
        typer.echo(
            f"Score a pipeline on them with: python -m spacy evaluate MODEL {output} --output scores.json "
            "(the sim_* scores are in scores.json)"
        )


@app.command("report")
def report_command(
    paths: List[str] = typer.Argument(
        ..., help="JSON files of evaluate / evaluate-retrieval --output-json, directories of them or glob patterns"
    ),
    output_md: Optional[Path] = OUTPUT_MD,
) -> None:
    """Summarise saved evaluations (evaluate / evaluate-retrieval --output-json) in one table."""
    with errors():
        reports: Dict[str, Dict[str, Any]] = {}
        for arg in paths:
            named = Path(arg).is_file()
            files = (
                [Path(arg)] if named else sorted(Path(arg).glob("*.json")) if Path(arg).is_dir() else expand_paths(arg)
            )
            if not files:
                fail(f"No evaluation JSON files found at {arg}")
            for path in files:
                rep = read_json(path)
                if isinstance(rep, dict) and rep.get("task") in ("pairs", "retrieval") and "results" in rep:
                    reports[rep.get("name") or path.stem] = rep
                elif named:
                    fail(f"{path} is not an evaluation written by `evaluate` or `evaluate-retrieval` --output-json")
        if not reports:
            fail(f"No evaluation results in {', '.join(paths)}")
        text = summary_markdown(reports)
        if output_md:
            write_text(text, output_md)
        typer.echo(text)
