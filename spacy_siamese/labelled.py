"""Labelled docs for TripletLoss.v1: an `Example` per doc, its labels in the reference's `user_data[DOC_LABELS_KEY]`."""

from typing import Iterable, List, Sequence

import numpy
from spacy.tokens import Doc
from spacy.training import Example

from .metrics import label_matrix
from .pair_examples import gold_copy

DOC_LABELS_KEY = "spacy_siamese.labels"


def labelled_doc_example(doc: Doc, labels: Iterable[str]) -> Example:
    """An Example of one doc and its labels (at least one non-empty string)."""
    if isinstance(labels, str):
        raise ValueError(f"A labelled doc needs a list of labels, not one string: [{labels!r}]: {doc.text[:60]!r}")
    labels = list(labels)
    if not labels or not all(isinstance(label, str) and label for label in labels):
        raise ValueError(f"A labelled doc needs one or more non-empty string labels, got {labels!r}: {doc.text[:60]!r}")
    reference = gold_copy(doc)
    reference.user_data[DOC_LABELS_KEY] = labels
    return Example(doc, reference)


def is_labelled_doc(eg: Example) -> bool:
    return DOC_LABELS_KEY in eg.reference.user_data


def get_doc_labels(eg: Example) -> List[str]:
    labels = eg.reference.user_data.get(DOC_LABELS_KEY)
    if labels is None:
        raise ValueError(
            f"This Example is not a labelled doc: its reference doc has no user_data['{DOC_LABELS_KEY}']. Read "
            "labelled docs with the 'spacy-siamese.LabelledDocuments.v1' reader (or build examples with "
            f"spacy_siamese.labelled.labelled_doc_example). Doc text: {eg.predicted.text[:80]!r}"
        )
    return list(labels)


def same_label_matrix(labels: Sequence[Iterable[str]]) -> numpy.ndarray:
    """(n, n) boolean matrix: docs i and j share a label (the diagonal is True)."""
    member = label_matrix(labels)
    return (member @ member.T).toarray() > 0
