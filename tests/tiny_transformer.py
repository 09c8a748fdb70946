"""A tiny BERT-like model directory, built in a test's process (no download): what the teacher
tests fine-tune. Only with the extra `spacy-siamese[teacher]`; CI must have it (with CI set, a
missing extra fails the test instead of skipping it)."""

import os
import re
from pathlib import Path
from typing import Any, Iterable

import pytest

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def require_teacher() -> Any:
    """sentence_transformers, or a skip (outside CI) or a failure (in CI) when it is missing."""
    try:
        import datasets  # noqa: F401  (the trainer's)
        import sentence_transformers
    except ImportError as err:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the teacher tests (pip install 'spacy-siamese[teacher]'): {err}")
        pytest.skip(f"needs the extra spacy-siamese[teacher]: {err}")
    return sentence_transformers


def build_tiny_bert(path: Path, texts: Iterable[str], *, seed: int = 0) -> Path:
    """A Hugging Face BERT with 1 layer of width 16 and a word-level vocabulary of `texts`,
    saved to `path`: SentenceTransformer and CrossEncoder both load it."""
    require_teacher()
    import transformers

    words = sorted({w for text in texts for w in re.findall(r"\w+|[^\w\s]", text.lower())})
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(SPECIAL + words) + "\n", encoding="utf8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    config = transformers.BertConfig(
        vocab_size=len(SPECIAL) + len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
    )
    transformers.set_seed(seed)
    transformers.BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def build_tiny_cross_encoder(path: Path, texts: Iterable[str], *, seed: int = 0) -> Path:
    """A CrossEncoder (untrained head) of the tiny BERT, saved to `path`."""
    st = require_teacher()
    bert = build_tiny_bert(path.with_name(path.name + "-bert"), texts, seed=seed)
    st.CrossEncoder(str(bert), num_labels=1).save(str(path))
    return path
