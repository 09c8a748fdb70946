"""`teacher-pairs`: pairs of texts labelled by a sentence-transformers teacher, for distillation."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import (
    NEIGHBOURS,
    PROGRESS,
    TEXTS_FORMATS,
    app,
    at_least,
    check_paths,
    errors,
    fail,
    pair_file_texts,
    read_collection,
    write_jsonl,
)
from .teacher_vectors import table_files


@app.command("teacher-pairs")
def teacher_pairs_command(
    teacher: str = typer.Argument(
        ...,
        help="sentence-transformers model name (e.g. sentence-transformers/all-MiniLM-L6-v2) or directory, "
        "or a CrossEncoder directory (e.g. from teacher-train)",
    ),
    inputs: Optional[List[Path]] = typer.Argument(
        None, help="Pair files whose texts (both sides; labels unused) are the texts to pair"
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Pair file (JSONL: text1, text2, label) to write"),
    n_pairs: int = typer.Option(30000, "--n-pairs", callback=at_least(1), help="Pairs to write"),
    texts_files: Optional[List[Path]] = typer.Option(
        None, "--texts", help="Also pair the texts of this collection (unlabelled; repeatable)"
    ),
    texts_format: str = typer.Option("auto", "--texts-format", help=f"Of the --texts: {TEXTS_FORMATS}"),
    texts_field: str = typer.Option("text", "--texts-field", help="JSONL field of the --texts with the text"),
    max_texts: int = typer.Option(
        0, "--max-texts", callback=at_least(0), help="Use the first N distinct texts of the pair files (0: all)"
    ),
    neighbours: int = typer.Option(
        NEIGHBOURS, "--neighbours", callback=at_least(1), help="Pair anchors with one of their N nearest texts"
    ),
    teacher_cache: Optional[Path] = typer.Option(
        None, "--teacher-cache", help="Cache the teacher's vectors (or scores) here"
    ),
    vectors_output: Optional[Path] = typer.Option(
        None, "--vectors-output", help="Also write the teacher's vectors of the paired texts here (TeacherScores.v1)"
    ),
    seed: int = typer.Option(0, "--seed"),
    progress: bool = PROGRESS,
) -> None:
    r"""Label pairs of texts with a teacher's cosine (pip install 'spacy-siamese\[distill]').

    The texts: the first --max-texts distinct ones of the pair files and every text of the --texts
    collections (e.g. unlabelled texts of the student's domain). The teacher encodes each distinct
    text once; for seeded anchors, the nearest text, one of the --neighbours nearest and a random
    one become pairs, labelled with the teacher's cosine clipped to [0, 1]: train on the output as
    on any graded pair file. --vectors-output also writes the teacher's vectors of the paired
    texts, for the loss spacy-siamese.TeacherScores.v1.

    A CrossEncoder teacher (e.g. from teacher-train) has no vectors: the anchors' neighbours are
    the nearest by TF-IDF cosine and the labels its probabilities of the pairs (as in AugSBERT)."""
    from ..distill import cross_encoder_pairs, teacher_pairs, teacher_vectors
    from ..losses.teacher_scores import save_teacher_table
    from ..teacher import is_cross_encoder
    from ..util import distinct_pair_texts, distinct_texts

    with errors():
        if not inputs and not texts_files:
            fail("Give pair files, --texts collections or both: there are no texts to pair.")
        tables = [] if vectors_output is None else table_files(vectors_output)
        check_paths([*(inputs or []), *(texts_files or [])], [output, *tables])
        cross_encoder = Path(teacher).is_dir() and is_cross_encoder(teacher)
        if cross_encoder and vectors_output is not None:
            fail(f"{teacher} is a CrossEncoder: it scores pairs and has no vectors for --vectors-output.")
        texts = distinct_texts(pair_file_texts(inputs or []))
        if max_texts:
            texts = texts[:max_texts]
        unlabelled = [
            text for path in texts_files or [] for text in read_collection(path, texts_format, texts_field).texts()
        ]
        texts = distinct_texts(texts + unlabelled)
        if cross_encoder:
            rows = cross_encoder_pairs(
                teacher,
                texts,
                n_pairs=n_pairs,
                neighbours=neighbours,
                seed=seed,
                cache_dir=teacher_cache,
                progress=progress,
            )
            write_jsonl(output, rows)
            typer.echo(f"Wrote {len(rows):,} cross-encoder-labelled pairs of {len(texts):,} texts to {output}")
            return
        vectors = teacher_vectors(teacher, texts, cache_dir=teacher_cache, progress=progress)
        rows = teacher_pairs(texts, vectors, n_pairs=n_pairs, neighbours=neighbours, seed=seed)
        write_jsonl(output, rows)
        typer.echo(f"Wrote {len(rows):,} teacher-labelled pairs of {len(texts):,} texts to {output}")
        if vectors_output is not None:
            row_of = {text: i for i, text in enumerate(texts)}
            paired = distinct_pair_texts((r["text1"], r["text2"]) for r in rows)
            save_teacher_table(vectors_output, paired, vectors[[row_of[t] for t in paired]])
            typer.echo(f"Wrote the teacher's vectors of {len(paired):,} texts to {vectors_output}")
