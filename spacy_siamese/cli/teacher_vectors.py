"""`teacher-vectors`: a sentence-transformers teacher's vectors of every text of pair files, for
`spacy-siamese.TeacherScores.v1`."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import PROGRESS, app, check_paths, errors, pair_file_texts


@app.command("teacher-vectors")
def teacher_vectors_command(
    teacher: str = typer.Argument(
        ..., help="sentence-transformers model name (e.g. sentence-transformers/all-MiniLM-L6-v2) or directory"
    ),
    inputs: List[Path] = typer.Argument(..., help="Pair files whose texts (both sides) the teacher encodes"),
    output: Path = typer.Option(..., "--output", "-o", help="Directory to write the teacher table to"),
    teacher_cache: Optional[Path] = typer.Option(None, "--teacher-cache", help="Cache the teacher's vectors here"),
    progress: bool = PROGRESS,
) -> None:
    r"""Write a teacher's vectors of every distinct text of the pair files (pip install 'spacy-siamese\[distill]').

    The output is the table spacy-siamese.TeacherScores.v1 reads: trained on the same pair files
    with that loss, the student's in-batch scores learn the teacher's cosines beside the pair loss
    on the files' labels (for 0/1 duplicates, InBatchNegatives.v1 as its pair loss)."""
    from ..distill import teacher_vectors
    from ..losses.teacher_scores import save_teacher_table
    from ..util import distinct_texts

    with errors():
        check_paths(inputs, table_files(output))
        # every distinct text, blank ones too: the loss looks up each text of a training batch
        texts = distinct_texts(pair_file_texts(inputs), keep_blank=True)
        vectors = teacher_vectors(teacher, texts, cache_dir=teacher_cache, progress=progress)
        save_teacher_table(output, texts, vectors)
        typer.echo(f"Wrote the teacher's vectors of {len(texts):,} texts to {output}")


def table_files(directory: Path) -> List[Path]:
    """The files `save_teacher_table` writes in `directory`."""
    from ..losses.teacher_scores import TABLE_TEXTS, TABLE_VECTORS

    return [directory / TABLE_VECTORS, directory / TABLE_TEXTS]
