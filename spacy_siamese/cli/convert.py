"""`convert`: a pair file of any published format as the canonical JSON lines that training
reads, or as a .spacy file for `spacy evaluate` and spaCy's corpus reader."""

from pathlib import Path
from typing import Optional

import typer

from .app import PAIRS_FORMAT, PROGRESS, app, errors, fail, read_pair_records


@app.command("convert")
def convert_command(
    input: Path = typer.Argument(..., help="Labelled pair file (a format of spacy_siamese.corpora.read_pairs)"),
    output: Path = typer.Argument(..., help="Output .jsonl (pairs for training) or .spacy file"),
    format: str = PAIRS_FORMAT,
    lang: str = typer.Option("en", "--lang", "-l", help="Tokenize with spacy.blank(LANG)"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Tokenize with this pipeline's tokenizer instead"),
    limit: int = typer.Option(0, "--limit", min=0, help="Convert the first N pairs only (0 = all)"),
    lenient: bool = typer.Option(False, "--lenient", help="Skip malformed lines with a warning"),
    progress: bool = PROGRESS,
) -> None:
    """Write a pair file as JSON lines, `{"text1", "text2", "label"}` a line (the format the
    training readers take), or as a .spacy file for `spacy evaluate` and spaCy's corpus reader.

    In a .spacy file each doc is side A of a pair, with side B and the label in its user_data.
    `spacy evaluate` writes the pipe's sim_* scores to its --output JSON, not to its printed table."""
    import spacy
    from spacy.tokens import DocBin
    from tqdm import tqdm

    from ..corpora.jsonl import write_pairs
    from ..evaluation.baselines import load_bare
    from ..files import atomic_write, check_outputs
    from ..pair_examples import make_pair_example
    from ..util import show_progress

    with errors():
        if output.suffix not in (".jsonl", ".spacy"):
            fail(f"The output must be a .jsonl or .spacy file, got {output}")
        check_outputs([input, model], [output])
        records = read_pair_records(input, format=format, limit=limit, lenient=lenient)
        if output.suffix == ".jsonl":
            output.parent.mkdir(parents=True, exist_ok=True)
            write_pairs(records, output)
            typer.echo(f"Wrote {len(records):,} pairs to {output}")
            typer.echo(f"Train on them with: python -m spacy train CONFIG --paths.train {output} ...")
            return
        nlp = load_bare(model) if model else spacy.blank(lang)
        doc_bin = DocBin(store_user_data=True)
        for rec in tqdm(records, desc="converting", unit="pair", disable=not show_progress(progress)):
            doc_bin.add(make_pair_example(nlp, rec.text1, rec.text2, rec.label).reference)
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(output) as file:  # whole or not at all
            file.write(doc_bin.to_bytes())
        typer.echo(f"Wrote {len(records):,} pairs to {output}")
        typer.echo(
            f"Score a pipeline on them with: python -m spacy evaluate MODEL {output} --output scores.json "
            "(the sim_* scores are in scores.json)"
        )
