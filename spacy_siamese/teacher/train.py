"""Fine-tune a teacher on labelled pairs with sentence-transformers' own trainer (extra `[teacher]`),
saved as an ordinary sentence-transformers model directory for `teacher-pairs` (AugSBERT). Kinds:
"cross-encoder" (both texts read at once, binary cross-entropy on the labels; it scores pairs and has
no vectors), "mnrl" (a bi-encoder, MultipleNegativesRankingLoss on the pairs labelled >= 0.5) and
"cosent" (a bi-encoder, CoSENTLoss on every pair). On the GPU when torch sees one.
"""

import hashlib
import json
import re
import shutil
import time
import warnings
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import numpy

from ..corpora import PairRecord
from ..defaults import TEACHER_KINDS as KINDS
from ..files import DirKind, atomic_directory, atomic_write, check_outputs
from ..util import import_extra
from .models import EXTRA, device_name, load_model

META = "spacy_siamese_teacher.json"
TEACHER: DirKind = ("a teacher directory", lambda names: META in names)
WHAT = "Training a teacher"
SETTINGS = "spacy_siamese_resume.json"  # what the checkpoints were trained with; also this library's marker
CHECKPOINTS: DirKind = ("a teacher's checkpoint directory", lambda names: SETTINGS in names)


def native_bf16(device: str, cpuinfo: Optional[str] = None) -> bool:
    """Whether bfloat16 runs natively on `device`: a GPU, or a CPU whose flags (Linux's /proc/cpuinfo,
    or `cpuinfo`) name AVX512-BF16 or AMX; elsewhere torch emulates it, many times slower. True
    where the flags cannot be read."""
    if device != "cpu":
        return True
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf8", errors="replace")
        except OSError:
            return True
    return re.search(r"\b(avx512_bf16|amx_bf16)\b", cpuinfo) is not None


def sample_records(records: Sequence[PairRecord], max_pairs: int, seed: int) -> List[PairRecord]:
    """A seeded sample of `max_pairs` records in file order (all of them if 0 or more than there are)."""
    if not max_pairs or max_pairs >= len(records):
        return list(records)
    keep = numpy.sort(numpy.random.default_rng(seed).choice(len(records), size=max_pairs, replace=False))
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
    checkpoint_steps: int = 200,
    resume: bool = False,
    progress: bool = False,
) -> Dict[str, Any]:
    """Fine-tune the sentence-transformers model `base` on the pairs (a seeded sample of
    `max_pairs` of them, 0 = all) in batches of similar length (under bfloat16 autocast with `bf16`)
    and save it to the directory `output`, whole or not at all (`files.atomic_directory`).
    `max_length` 0 takes the 99th percentile of the pairs' token counts (a cross-encoder's of both
    texts together), at most the model's own maximum. Every `checkpoint_steps` steps (0: never) a
    checkpoint goes to .OUTPUT.siamese-checkpoints beside the output, removed once the teacher is
    saved; `resume` continues from the last one. Returns what was trained, also written to the model
    directory as spacy_siamese_teacher.json. Raises ValueError on bad settings, a `resume` without a
    checkpoint of the same settings, or a `base` torch refuses to load."""
    if kind not in KINDS:
        raise ValueError(f"Unknown teacher kind {kind!r}. Choose one of: {', '.join(KINDS)}.")
    if epochs <= 0 or batch_size < 1 or learning_rate <= 0 or not (max_length == 0 or max_length >= 8):
        raise ValueError("Need epochs > 0, batch_size >= 1, learning_rate > 0 and max_length 0 (the data's) or >= 8.")
    st = import_extra("sentence_transformers", EXTRA, WHAT)
    datasets = import_extra("datasets", EXTRA, WHAT)
    transformers = import_extra("transformers", EXTRA, WHAT)
    chosen = sample_records(records, max_pairs, seed)
    if kind == "mnrl":
        chosen = [r for r in chosen if r.label >= 0.5]
    if not chosen:
        raise ValueError(f"No pairs to train a {kind} teacher on" + (" (it needs positives)" if kind == "mnrl" else ""))
    columns: Dict[str, List[Any]] = {"sentence1": [r.text1 for r in chosen], "sentence2": [r.text2 for r in chosen]}
    labels = [float(r.label) for r in chosen]
    device = device_name()
    if bf16 and not native_bf16(device):
        warnings.warn(
            "bf16 is off: this CPU has neither AVX512-BF16 nor AMX, so bfloat16 autocast would be emulated, "
            "many times slower than float32. The teacher trains in float32.",
            stacklevel=2,
        )
        bf16 = False
    settings = dict(kind=kind, base=str(base), epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                    warmup_ratio=warmup_ratio, max_length=max_length, max_pairs=max_pairs, bf16=bf16, seed=seed,
                    pairs_sha256=hashlib.sha256(json.dumps([columns, labels]).encode("utf8")).hexdigest())  # fmt: skip
    transformers.set_seed(seed)  # the new head's initial weights
    if kind == "cross-encoder":
        model = load_model("CrossEncoder", base, num_labels=1, device=device)
        columns["label"] = labels
        loss = import_module("sentence_transformers.cross_encoder.losses").BinaryCrossEntropyLoss(model)
        trainer_class, args_class = st.CrossEncoderTrainer, st.CrossEncoderTrainingArguments
    else:
        model = load_model("SentenceTransformer", base, device=device)
        losses = _losses_module()
        if kind == "mnrl":
            columns = {"anchor": columns["sentence1"], "positive": columns["sentence2"]}
            loss = losses.MultipleNegativesRankingLoss(model)
        else:
            columns["score"] = labels
            loss = losses.CoSENTLoss(model)
        trainer_class, args_class = st.SentenceTransformerTrainer, st.SentenceTransformerTrainingArguments
    model.max_seq_length = max_length = max_length or _length_from_data(model, chosen, together=kind == "cross-encoder")
    checkpoints = Path(output).absolute()
    checkpoints = checkpoints.with_name(f".{checkpoints.name}.siamese-checkpoints")  # ours alone: see _checkpoints
    last = _checkpoints(checkpoints, settings, resume)
    # mnrl: a repeated text is no negative of itself
    sampler = (
        "no_duplicates" if kind == "mnrl" else partial(_LengthGrouped, lengths=[len(r.text1 + r.text2) for r in chosen])
    )
    start = time.perf_counter()
    args = args_class(
        output_dir=str(checkpoints),
        num_train_epochs=epochs,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        data_seed=seed,
        save_strategy="steps" if checkpoint_steps else "no",
        save_steps=checkpoint_steps,
        save_total_limit=1,
        report_to="none",
        logging_steps=50,
        disable_tqdm=not progress,
        use_cpu=device == "cpu",
        dataloader_num_workers=0,
        bf16=bf16,
        **_warmup(transformers, warmup_ratio),
        batch_sampler=sampler,
    )
    trainer = trainer_class(model=model, args=args, train_dataset=datasets.Dataset.from_dict(columns), loss=loss)
    trainer.train(resume_from_checkpoint=last)
    info = {**settings, "n_pairs": len(chosen), "max_length": max_length, "device": device}
    info["train_seconds"] = round(time.perf_counter() - start, 1)  # of this piece
    with atomic_directory(output, kind=TEACHER) as tmp:
        model.save(str(tmp))
        (tmp / META).write_text(json.dumps(info, indent=2) + "\n", encoding="utf8")
    shutil.rmtree(checkpoints)
    return info


def _checkpoints(path: Path, settings: Dict[str, Any], resume: bool) -> Union[str, None]:
    """The last whole checkpoint in `path` to resume from (None: start over, in a fresh `path` holding
    the `settings`). Raises ValueError for a `resume` without one of the same settings, and
    PathConflictError where `path` is not this library's."""
    check_outputs([], [], output_dirs=[path], kind=CHECKPOINTS)
    if not resume:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        with atomic_write(path / SETTINGS) as file:
            file.write(json.dumps(settings, indent=2).encode("utf8"))
        return None
    done = [p for p in path.glob("checkpoint-*") if (p / "trainer_state.json").is_file()]  # its last file
    if not done:
        raise ValueError(f"No checkpoint to resume from in {path}: train without --resume.")
    saved = json.loads((path / SETTINGS).read_text(encoding="utf8"))
    differ = [f"{k} {saved.get(k)!r} (now {v!r})" for k, v in settings.items() if saved.get(k) != v]
    if differ:
        raise ValueError(f"The checkpoints in {path} were trained with other settings: {', '.join(differ)}.")
    return str(max(done, key=lambda p: int(p.name.rpartition("-")[2])))


def _length_from_data(model: Any, records: Sequence[PairRecord], *, together: bool) -> int:
    """The 99th percentile of the pairs' token counts (`together`) or their texts', at most the model's maximum."""
    one, two = [r.text1 for r in records], [r.text2 for r in records]
    ids = model.tokenizer(one, two)["input_ids"] if together else model.tokenizer(one + two)["input_ids"]
    return min(model.max_seq_length, int(numpy.ceil(numpy.percentile([len(i) for i in ids], 99))))


def _warmup(transformers: Any, ratio: float) -> Dict[str, Any]:
    """The warmup as a fraction of the steps: `warmup_steps` takes one since Transformers 5,
    which deprecates `warmup_ratio`."""
    return {"warmup_steps": ratio} if int(transformers.__version__.split(".")[0]) >= 5 else {"warmup_ratio": ratio}


class _LengthGrouped:
    """Batches of similar length (sentence-transformers' trainers ignore `train_sampling_strategy`):
    Transformers' megabatches sorted by length, reseeded every epoch as sentence-transformers' samplers
    are, so a resumed training sees the batches of a run in one go. Lengths in characters, for tokens."""

    def __init__(
        self, dataset: Any, *, lengths: List[int], batch_size: int, generator: Any, seed: int, **_: Any
    ) -> None:
        self.lengths, self.batch_size, self.generator, self.seed, self.epoch = lengths, batch_size, generator, seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return -(-len(self.lengths) // self.batch_size)  # the last batch kept (dataloader_drop_last is off)

    def __iter__(self) -> Iterator[List[int]]:
        self.generator.manual_seed(self.seed + self.epoch)
        grouped = import_module("transformers.trainer_pt_utils").get_length_grouped_indices
        order = grouped(self.lengths, self.batch_size, generator=self.generator)
        return iter([order[i * self.batch_size : (i + 1) * self.batch_size] for i in range(len(self))])


def _losses_module() -> Any:
    try:  # sentence-transformers 5.2+; the old path warns there
        return import_module("sentence_transformers.sentence_transformer.losses")
    except ImportError:
        return import_module("sentence_transformers.losses")
