"""Fine-tune a teacher on labelled pairs with sentence-transformers' own trainer (extra `[teacher]`),
saved as an ordinary sentence-transformers model directory for `teacher-pairs` (AugSBERT). Kinds:
"cross-encoder" (both texts read at once, binary cross-entropy on the labels; it scores pairs and has
no vectors), "mnrl" (a bi-encoder, MultipleNegativesRankingLoss on the pairs labelled >= 0.5) and
"cosent" (a bi-encoder, CoSENTLoss on every pair). On the GPU when torch sees one.
"""

import json
import time
from importlib import import_module
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, Dict, List, Sequence, Union

import numpy

from ..corpora import PairRecord
from ..defaults import TEACHER_KINDS as KINDS
from ..files import DirKind, atomic_directory
from ..util import import_extra
from .models import EXTRA, device_name, load_model

META = "spacy_siamese_teacher.json"
TEACHER: DirKind = ("a teacher directory", lambda names: META in names)
WHAT = "Training a teacher"


def sample_records(records: Sequence[PairRecord], max_pairs: int, seed: int) -> List[PairRecord]:
    """A seeded sample of `max_pairs` records in file order (all of them if 0 or more than there are)."""
    if not max_pairs or max_pairs >= len(records):
        return list(records)
    rng = numpy.random.default_rng(seed)
    keep = numpy.sort(rng.choice(len(records), size=max_pairs, replace=False))
    return [records[i] for i in keep]


def train_teacher(
    records: Sequence[PairRecord],
    output: Union[str, Path],
    *,
    base: str,
    kind: str = "cross-encoder",
    epochs: float = 1.0,
    batch_size: int = 32,
    learning_rate: float = 2e-5,
    warmup_ratio: float = 0.1,
    max_length: int = 128,
    max_pairs: int = 0,
    bf16: bool = False,
    seed: int = 0,
    progress: bool = False,
) -> Dict[str, Any]:
    """Fine-tune the sentence-transformers model `base` on the pairs (a seeded sample of
    `max_pairs` of them, 0 = all) in batches of similar length (under bfloat16 autocast with `bf16`)
    and save it to the directory `output`, whole or not at all
    (`files.atomic_directory`). Returns what was trained, also written to the model directory as
    spacy_siamese_teacher.json. Raises ValueError on bad settings or a `base` torch refuses to load."""
    if kind not in KINDS:
        raise ValueError(f"Unknown teacher kind {kind!r}. Choose one of: {', '.join(KINDS)}.")
    if epochs <= 0 or batch_size < 1 or learning_rate <= 0 or max_length < 8:
        raise ValueError("Need epochs > 0, batch_size >= 1, learning_rate > 0 and max_length >= 8.")
    st = import_extra("sentence_transformers", EXTRA, WHAT)
    datasets = import_extra("datasets", EXTRA, WHAT)
    transformers = import_extra("transformers", EXTRA, WHAT)
    chosen = sample_records(records, max_pairs, seed)
    if kind == "mnrl":
        chosen = [r for r in chosen if r.label >= 0.5]
    if not chosen:
        raise ValueError(f"No pairs to train a {kind} teacher on" + (" (it needs positives)" if kind == "mnrl" else ""))
    device = device_name()
    transformers.set_seed(seed)  # the new head's initial weights
    columns: Dict[str, List[Any]] = {"sentence1": [r.text1 for r in chosen], "sentence2": [r.text2 for r in chosen]}
    labels = [float(r.label) for r in chosen]
    if kind == "cross-encoder":
        model = load_model("CrossEncoder", base, num_labels=1, max_length=max_length, device=device)
        columns["label"] = labels
        loss = import_module("sentence_transformers.cross_encoder.losses").BinaryCrossEntropyLoss(model)
        trainer_class, args_class = st.CrossEncoderTrainer, st.CrossEncoderTrainingArguments
        extra: Dict[str, Any] = {}
    else:
        model = load_model("SentenceTransformer", base, device=device)
        model.max_seq_length = max_length
        losses = _losses_module()
        if kind == "mnrl":
            columns = {"anchor": columns["sentence1"], "positive": columns["sentence2"]}
            loss = losses.MultipleNegativesRankingLoss(model)
            extra = {"batch_sampler": "no_duplicates"}  # a repeated text is no negative of itself
        else:
            columns["score"] = labels
            loss = losses.CoSENTLoss(model)
            extra = {}
        trainer_class, args_class = st.SentenceTransformerTrainer, st.SentenceTransformerTrainingArguments
    start = time.perf_counter()
    with TemporaryDirectory() as scratch:  # the trainer's checkpoints and logs, none kept
        args = args_class(
            output_dir=scratch,
            num_train_epochs=epochs,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            seed=seed,
            data_seed=seed,
            save_strategy="no",
            report_to="none",
            logging_steps=50,
            disable_tqdm=not progress,
            use_cpu=device == "cpu",
            dataloader_num_workers=0,
            bf16=bf16,
            train_sampling_strategy="group_by_length",
            **_warmup(transformers, warmup_ratio),
            **extra,
        )
        trainer = trainer_class(model=model, args=args, train_dataset=datasets.Dataset.from_dict(columns), loss=loss)
        trainer.train()
    seconds = time.perf_counter() - start
    info = {
        "kind": kind,
        "base": str(base),
        "n_pairs": len(chosen),
        "epochs": epochs,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "warmup_ratio": warmup_ratio,
        "max_length": max_length,
        "bf16": bf16,
        "seed": seed,
        "device": device,
        "train_seconds": round(seconds, 1),
    }
    with atomic_directory(output, kind=TEACHER) as tmp:
        model.save(str(tmp))
        (tmp / META).write_text(json.dumps(info, indent=2) + "\n", encoding="utf8")
    return info


def _warmup(transformers: Any, ratio: float) -> Dict[str, Any]:
    """The warmup as a fraction of the steps: `warmup_steps` takes one since Transformers 5,
    which deprecates `warmup_ratio`."""
    return {"warmup_steps": ratio} if int(transformers.__version__.split(".")[0]) >= 5 else {"warmup_ratio": ratio}


def _losses_module() -> Any:
    try:  # sentence-transformers 5.2+; the old path warns there
        return import_module("sentence_transformers.sentence_transformer.losses")
    except ImportError:
        return import_module("sentence_transformers.losses")
