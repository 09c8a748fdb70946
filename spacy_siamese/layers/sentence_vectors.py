from typing import Any, Callable, List, Tuple, cast

import numpy
from spacy.attrs import ORTH
from spacy.pipeline import Sentencizer
from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats2d


@registry.layers("spacy-siamese.sentence_vectors.v1")
def sentence_vectors() -> Model[List[Doc], List[Floats2d]]:
    """Each doc as its sentences' mean static vectors, (n_sentences, width), by the doc's own
    boundaries or the sentencizer rule. No weights, no gradient."""
    return Model("sentence_vectors", forward, dims={"nO": None}, init=init)


def init(model: Model, X=None, Y=None) -> None:
    if X is not None and len(X):
        model.set_dim("nO", X[0].vocab.vectors.shape[1], force=True)


_SENTENCIZER = Sentencizer()


def sentence_starts(doc: Doc) -> List[int]:
    """Token indices where sentences start."""
    if not len(doc):
        return []
    if doc.has_annotation("SENT_START"):
        return [sent.start for sent in doc.sents]
    return [0] + [i for i, tag in enumerate(_SENTENCIZER.predict([doc])[0]) if tag and i > 0]


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    width = docs[0].vocab.vectors.shape[1] if docs else model.get_dim("nO")
    if not width:
        raise ValueError("sentence_vectors: the pipeline has no static vectors (set [initialize] vectors).")
    out: List[Floats2d] = []
    for doc in docs:
        vectors = doc.vocab.vectors
        T = numpy.zeros((len(doc), width), dtype="float32")
        if len(doc):
            # keyed as the table is (ORTH unless the vectors say otherwise), as spaCy's StaticVectors
            rows = numpy.asarray(vectors.find(keys=doc.to_array(getattr(vectors, "attr", ORTH))))
            T[rows >= 0] = numpy.asarray(ops.to_numpy(vectors.data))[rows[rows >= 0]]
        starts = sentence_starts(doc)
        bounds = list(zip(starts, starts[1:] + [len(doc)]))
        S = numpy.asarray([T[start:end].mean(axis=0) for start, end in bounds], dtype="float32").reshape(-1, width)
        out.append(cast(Floats2d, ops.asarray(cast(Any, S))))
    return out, lambda dY: []  # no weights
