"""A tiny BERT-like model directory, built in a test's process (no download): what the teacher
tests fine-tune. Only with the extra `spacy-siamese[teacher]`; CI must have it (with CI set, a
missing extra fails the test instead of skipping it)."""

import importlib
import os
import re
from pathlib import Path
from typing import Any, Iterable

import numpy
import pytest

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def require(*modules: str) -> Any:
    """The last of `modules` imported, or a skip (outside CI) or a failure (in CI) when one is missing:
    all are in the extra spacy-siamese[teacher]."""
    try:
        imported = [importlib.import_module(name) for name in modules]
    except ImportError as err:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the teacher tests (pip install 'spacy-siamese[teacher]'): {err}")
        pytest.skip(f"needs the extra spacy-siamese[teacher]: {err}")
    return imported[-1]


def require_teacher() -> Any:
    """sentence_transformers (and the trainer's datasets), or a skip or failure (`require`)."""
    return require("datasets", "sentence_transformers")


def build_tiny_bert(path: Path, texts: Iterable[str], *, seed: int = 0) -> Path:
    """A Hugging Face BERT with 1 layer of width 16 and a word-level vocabulary of `texts`,
    saved to `path`: SentenceTransformer and CrossEncoder both load it."""
    require_teacher()
    import transformers

    words = sorted({w for text in texts for w in re.findall(r"\w+|[^\w\s]", text.lower())})
    path.mkdir(parents=True, exist_ok=True)
    # the vocabulary as a dict: Transformers 5 ignores a vocab_file here, leaving only the special tokens
    tokenizer = transformers.BertTokenizerFast(vocab={token: i for i, token in enumerate(SPECIAL + words)})
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


def require_model2vec() -> Any:
    """model2vec, or a skip or failure (`require`)."""
    return require("model2vec")


TINY_STATIC_VOCAB = ["[UNK]", "the", "cat", "sat", "dog", "barks", "##s", "on", "mat"]


def build_tiny_static(path: Path, *, dims: int = 4, seed: int = 0, **settings: Any) -> Path:
    """A model2vec static model saved to `path`: a WordPiece tokenizer over TINY_STATIC_VOCAB and a
    random table of width `dims` (`settings`: StaticModel's, e.g. max_length)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    model2vec = require_model2vec()
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(TINY_STATIC_VOCAB)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    vectors = numpy.random.default_rng(seed).normal(size=(len(TINY_STATIC_VOCAB), dims)).astype("f")
    model2vec.StaticModel(vectors=vectors, tokenizer=tokenizer, **settings).save_pretrained(path)
    return path
