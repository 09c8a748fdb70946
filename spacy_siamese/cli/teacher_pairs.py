"""`teacher-pairs`: pairs of texts labelled by a teacher (silver pairs), and the teacher's vectors
of the texts for `spacy-siamese.TeacherScores.v1`."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import PROGRESS, TEXTS_FORMATS, app, at_least, errors, fail, read_collection, read_pair_records


@app.command("teacher-pairs")
def teacher_pairs_command(
    teacher: str = typer.Argument(
        ...,
        help="sentence-transformers model name (e.g. sentence-transformers/all-MiniLM-L6-v2) or directory, "
        "or a CrossEncoder directory (e.g. from teacher-train)",
    ),
    inputs: Optional[List[Path]] = typer.Argument(
        None, help="Gold pair files: their texts (both sides) are paired, their pairs never"
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Pair file (JSONL: text1, text2, label) to write"
    ),
    top_k: int = typer.Option(
        3, "--top-k", "-k", callback=at_least(1), help="Pair each text with its K nearest by TF-IDF (3: AugSBERT's)"
    ),
    random_pairs: int = typer.Option(0, "--random-pairs", callback=at_least(0), help="Also N random pairs"),
    max_pairs: int = typer.Option(
        0, "--max-pairs", callback=at_least(0), help="Write a seeded sample of at most N of the pairs (0: all)"
    ),
    texts_files: Optional[List[Path]] = typer.Option(
        None, "--texts", help="Also pair the texts of this collection (unlabelled; repeatable)"
    ),
    texts_format: str = typer.Option("auto", "--texts-format", help=f"Of the --texts: {TEXTS_FORMATS}"),
    texts_field: str = typer.Option("text", "--texts-field", help="JSONL field of the --texts with the text"),
    max_texts: int = typer.Option(
        0, "--max-texts", callback=at_least(0), help="Use the first N distinct texts of the pair files (0: all)"
    ),
    teacher_cache: Optional[Path] = typer.Option(
        None, "--teacher-cache", help="Cache the teacher's vectors or scores here (a killed run resumes)"
    ),
    vectors_output: Optional[Path] = typer.Option(
        None, "--vectors-output", help="Write the teacher's vectors of every text here (TeacherScores.v1)"
    ),
    seed: int = typer.Option(0, "--seed"),
    progress: bool = PROGRESS,
) -> None:
    r"""Label silver pairs with a teacher, or write its vectors of the texts (pip install 'spacy-siamese\[teacher]').

    The texts: the first --max-texts distinct ones of the pair files and every text of the --texts
    collections (e.g. unlabelled texts of the student's domain). As in AugSBERT, each text is
    paired with its --top-k nearest texts by TF-IDF cosine, less itself, pairs already written and
    every gold pair of the files (--random-pairs adds random ones), and the teacher labels them: a
    bi-encoder with its cosine clipped to [0, 1], a CrossEncoder (e.g. from teacher-train) with
    its probability. Train on the output as on any graded pair file. Deterministic for a --seed;
    with --teacher-cache a killed run goes on where it stopped.

    --vectors-output writes a bi-encoder's vectors of every text (blank ones too): the table of
    the loss spacy-siamese.TeacherScores.v1, for training on those pair files; with it, -o is
    optional."""
    from ..files import check_outputs, write_jsonl
    from ..teacher.loss import save_teacher_table, table_files
    from ..teacher.models import check_cache_dir, is_cross_encoder
    from ..teacher.pairs import silver_texts, teacher_silver

    with errors():
        if not inputs and not texts_files:
            fail("Give pair files, --texts collections or both: there are no texts to pair.")
        if output is None and vectors_output is None:
            fail("Give --output FILE for the pairs, --vectors-output DIR for the teacher's vectors, or both.")
        if vectors_output is not None and vectors_output.exists() and not vectors_output.is_dir():
            fail(f"--vectors-output {vectors_output} is a file: give a directory.")
        check_cache_dir(teacher_cache)
        tables = [] if vectors_output is None else table_files(vectors_output)
        outputs = [output, *tables, vectors_output, teacher_cache]
        check_outputs([*(inputs or []), *(texts_files or [])], outputs, output_dirs=[p for p in [vectors_output] if p])
        cross_encoder = is_cross_encoder(teacher)
        if cross_encoder and vectors_output is not None:
            fail(f"{teacher} is a CrossEncoder: it scores pairs and has no vectors for --vectors-output.")
        records = [r for path in inputs or [] for r in read_pair_records(path)]
        unlabelled = [
            text for path in texts_files or [] for text in read_collection(path, texts_format, texts_field).texts()
        ]
        texts = silver_texts((t for r in records for t in (r.text1, r.text2)), unlabelled, max_texts=max_texts)
        labelled, vectors = teacher_silver(
            teacher, texts, gold={frozenset((r.text1, r.text2)) for r in records}, label=output is not None,
            all_vectors=vectors_output is not None, top_k=top_k, n_random=random_pairs, max_pairs=max_pairs, seed=seed,
            cache_dir=teacher_cache, progress=progress,
        )  # fmt: skip
        if output is not None:
            write_jsonl(output, labelled)
            kind = "cross-encoder" if cross_encoder else "teacher"
            n_texts = sum(1 for text in texts if text.strip())
            typer.echo(f"Wrote {len(labelled):,} {kind}-labelled pairs of {n_texts:,} texts to {output}")
        if vectors_output is not None and vectors is not None:
            save_teacher_table(vectors_output, texts, vectors)
            typer.echo(f"Wrote the teacher's vectors of {len(texts):,} texts to {vectors_output}")
