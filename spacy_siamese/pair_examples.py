"""A labelled pair as one `Example`: side A, with side B's words and spaces, the label (in [0, 1]) and the dataset in
the reference doc's `user_data[PAIR_KEY]`, which survives `DocBin`."""

from typing import Dict, Iterable, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from .validation import check_dataset_name, check_label
from .vectors import drop_vectors

PAIR_KEY = "spacy_siamese.pair"


def make_pair_example(nlp: Language, text1: str, text2: str, label: float, *, dataset: Optional[str] = None) -> Example:
    """Tokenize both sides with `nlp` and pack them into one Example (tagged with `dataset`)."""
    return pair_example(nlp.make_doc(text1), nlp.make_doc(text2), label, dataset=dataset)


def pair_example(doc_a: Doc, doc_b: Doc, label: float, *, dataset: Optional[str] = None) -> Example:
    """Pack two tokenized docs into one Example; `doc_a` becomes its predicted doc. `dataset`
    names the dataset of a multi-dataset corpus the pair comes from (see `get_dataset`)."""
    try:
        label = check_label(label)
    except ValueError as e:
        raise ValueError(f"{e} Pair: {doc_a.text[:60]!r} / {doc_b.text[:60]!r}") from None
    reference = gold_copy(doc_a)
    reference.user_data[PAIR_KEY] = {
        "words": [t.text for t in doc_b],
        "spaces": [bool(t.whitespace_) for t in doc_b],
        # token-level norms set by tokenizer exceptions ("n't" -> "not")
        "norms": [[t.i, t.norm_] for t in doc_b if t.norm != t.lex.norm],
        "label": label,
    }
    if dataset is not None:
        reference.user_data[PAIR_KEY]["dataset"] = check_dataset_name(dataset)
    return Example(doc_a, reference)


def gold_copy(doc: Doc) -> Doc:
    """A copy of `doc` for an Example's reference, without the learned vectors and hooks a processed doc carries."""
    reference = doc.copy()
    drop_vectors(reference)
    reference.user_hooks = {}
    reference.user_span_hooks = {}
    reference.user_token_hooks = {}
    return reference


def is_pair_example(eg: Example) -> bool:
    return PAIR_KEY in eg.reference.user_data


def get_partner(eg: Example, vocab: Optional[Vocab] = None) -> Doc:
    """Rebuild side B of a pair example as a Doc in `vocab` (default: A's vocab)."""
    data = _pair_data(eg)
    doc = Doc(vocab or eg.predicted.vocab, words=list(data["words"]), spaces=list(data["spaces"]))
    for i, norm in data.get("norms", ()):
        doc[i].norm_ = norm
    return doc


def partner_text(eg: Example) -> str:
    """The text of side B of a pair example (as its words and spaces give it)."""
    data = _pair_data(eg)
    return "".join(w + (" " if sp else "") for w, sp in zip(data["words"], data["spaces"]))


def get_label(eg: Example) -> float:
    try:
        return check_label(_pair_data(eg)["label"])
    except ValueError as e:
        raise ValueError(f"{e} Example: {eg.predicted.text[:80]!r}") from None


def get_dataset(eg: Example) -> Optional[str]:
    """The dataset a pair example is tagged with (`spacy-siamese.MultiPairCorpus.v1`); None if untagged or no pair."""
    data = eg.reference.user_data.get(PAIR_KEY)
    return None if data is None else data.get("dataset")


def dataset_groups(examples: Iterable[Example]) -> Dict[Optional[str], List[int]]:
    """The positions of the examples of each dataset (None: untagged), in order of first appearance."""
    groups: Dict[Optional[str], List[int]] = {}
    for i, eg in enumerate(examples):
        groups.setdefault(get_dataset(eg), []).append(i)
    return groups


def split_pairs(examples: Iterable[Example], vocab: Optional[Vocab] = None) -> Tuple[List[Doc], List[Doc], List[float]]:
    """Return (side A docs, side B docs, labels) for a batch of pair examples."""
    rows = [(eg.predicted, get_partner(eg, vocab), get_label(eg)) for eg in examples]
    return [a for a, _, _ in rows], [b for _, b, _ in rows], [y for _, _, y in rows]


def _pair_data(eg: Example) -> dict:
    data = eg.reference.user_data.get(PAIR_KEY)
    if data is None:
        raise ValueError(
            f"This Example is not a labelled pair: its reference doc has no user_data['{PAIR_KEY}']. Read pair files "
            "with the 'spacy-siamese.PairCorpus.v1' reader (or build examples with spacy_siamese.make_pair_example). "
            f"Doc text: {eg.predicted.text[:80]!r}"
        )
    return data
