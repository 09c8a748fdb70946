"""`teacher-train`: fine-tune a sentence-transformers teacher on labelled pair files."""

from pathlib import Path
from typing import List

import typer

from .app import KINDS, PAIRS_FORMAT, PROGRESS, app, at_least, errors, read_pair_records


@app.command("teacher-train")
def teacher_train_command(
    inputs: List[Path] = typer.Argument(..., help="Labelled pair files (formats of spacy_siamese.corpora.read_pairs)"),
    output: Path = typer.Option(
        ..., "--output", "-o", help="Directory of the fine-tuned model (new, or a teacher it replaces whole)"
    ),
    base: str = typer.Option(
        ..., "--base", help="sentence-transformers model to start from (directory, or a name on the Hugging Face hub)"
    ),
    kind: str = typer.Option("cross-encoder", "--kind", help=f"One of: {', '.join(KINDS)}"),
    format: str = PAIRS_FORMAT,
    max_pairs: int = typer.Option(
        0, "--max-pairs", callback=at_least(0), help="Train on a seeded sample of N pairs (0: all)"
    ),
    epochs: float = typer.Option(1.0, "--epochs", min=0.01, help="Passes over the pairs"),
    batch_size: int = typer.Option(32, "--batch-size", callback=at_least(1), help="Pairs per step"),
    learning_rate: float = typer.Option(2e-5, "--learning-rate", min=1e-8, help="Peak learning rate (AdamW)"),
    max_length: int = typer.Option(
        128, "--max-length", callback=at_least(0), help="Tokens kept of each input (0: the data's 99th percentile)"
    ),
    bf16: bool = typer.Option(
        False,
        "--bf16",
        help="bfloat16 autocast (a GPU, or a CPU with AVX512-BF16/AMX; else float32, warned)",
    ),
    seed: int = typer.Option(0, "--seed"),
    checkpoint_steps: int = typer.Option(
        200, "--checkpoint-steps", callback=at_least(0), help="Save a checkpoint every N steps (0: never)"
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue a killed training from its last checkpoint"),
    progress: bool = PROGRESS,
) -> None:
    r"""Fine-tune a teacher on labelled pairs (pip install 'spacy-siamese\[teacher]').

    sentence-transformers' own trainer from --base: a cross-encoder (both texts read together,
    binary cross-entropy; it needs enough pairs and steps to beat its base), or a bi-encoder with
    in-batch negatives on the positives (mnrl) or CoSENT on every pair (cosent). The output is a
    sentence-transformers model directory, for teacher-pairs to label pairs for a student. Uses
    the GPU if torch sees one; on a CPU, --max-pairs and --epochs bound the time. Checkpoints go to
    the hidden directory .OUTPUT.siamese-checkpoints beside the output until the teacher is saved;
    --resume continues from the last one (same pairs and settings), so a long teacher trains in pieces."""
    from ..files import check_outputs
    from ..teacher.train import TEACHER, train_teacher

    with errors():
        check_outputs([*inputs, *([Path(base)] if Path(base).exists() else [])], [], output_dirs=[output], kind=TEACHER)
        records = [r for path in inputs for r in read_pair_records(path, format=format)]
        info = train_teacher(
            records,
            output,
            base=base,
            kind=kind,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            max_length=max_length,
            max_pairs=max_pairs,
            bf16=bf16,
            seed=seed,
            checkpoint_steps=checkpoint_steps,
            resume=resume,
            progress=progress,
        )
        typer.echo(
            f"Trained a {info['kind']} teacher on {info['n_pairs']:,} pairs ({info['device']}, "
            f"{info['train_seconds']:.0f} s) and saved it to {output}"
        )
