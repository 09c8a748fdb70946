"""The encoding API of the `siamese_similarity` pipe: learned vectors of texts, docs, spans and
tokens, and their scores (`Encoding`, a mixin of the pipe)."""

import weakref
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union, cast

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, Token
from spacy.training import Example
from spacy.util import minibatch
from thinc.api import Model
from thinc.types import Floats2d
from tqdm import tqdm

from . import hooks
from .defaults import BATCH_SIZE
from .identity import ModelIdentity
from .pair_examples import get_label, get_partner
from .pairwise import vector_similarity_matrix
from .space import vector_space
from .util import check_n_process, show_progress
from .validation import check_scores
from .vectors import stored_vector

PAD_ROWS = 32
TextsOrDocs = Union[str, Doc, Iterable[Union[str, Doc]]]


class WeakPipeline:
    """A weak reference to the pipeline a pipe belongs to (None if it has none, or it is gone),
    which pickles and copies as no reference: a pickled pipe does not drag its pipeline along."""

    def __init__(self, nlp: Optional[Language] = None) -> None:
        self._ref = None if nlp is None else weakref.ref(nlp)

    def __call__(self) -> Optional[Language]:
        return None if self._ref is None else self._ref()

    def __reduce__(self) -> Tuple[type, Tuple[()]]:
        return (WeakPipeline, ())


class Encoding(ModelIdentity):
    """Mixin for the pipe: the vectors it learned and their scores, for texts as for docs."""

    pipeline = WeakPipeline()  # the pipeline that encodes texts (set by the factory)
    predict: Callable[[Iterable[Doc]], Floats2d]  # the pipe's
    check_finite: Callable[[Floats2d], Floats2d]  # the pipe's

    @property
    def encoder(self) -> Model:
        return self.model.get_ref("encoder")

    @property
    def comparison(self) -> Model:
        return self.model.get_ref("comparison")

    def compare(self, vectors_a: numpy.ndarray, vectors_b: numpy.ndarray) -> numpy.ndarray:
        """Similarity of paired rows of two vector arrays, as a 1d numpy array in `score_range`.
        Calls are padded to a multiple of PAD_ROWS rows (BLAS rounds a matrix's tail rows
        differently), so a pair's score does not depend on the other pairs scored with it."""
        self._require_initialized()
        a, b = numpy.asarray(vectors_a, dtype="f"), numpy.asarray(vectors_b, dtype="f")
        width = self.encoder.get_dim("nO") if self.encoder.has_dim("nO") is True else None
        if a.ndim != 2 or a.shape != b.shape or (width is not None and a.shape[1] != width):
            raise ValueError(
                f"The '{self.name}' pipe's compare takes two arrays of paired rows of its vectors, (n, {width}) "
                f"each, got arrays of shapes {a.shape} and {b.shape}."
            )
        n = len(a)
        if n == 0:
            return numpy.zeros((0,), dtype="float32")
        a, b = canonical_order(a, b, rows=-(-n // PAD_ROWS) * PAD_ROWS)
        ops = self.model.ops
        pair = (ops.asarray2f(cast(Floats2d, a)), ops.asarray2f(cast(Floats2d, b)))
        return check_scores(ops.to_numpy(self.comparison.predict(pair))[:n, 0], self.score_range, self.name)

    def similarity_matrix(
        self,
        docs_a: Sequence[Union[str, Doc]],
        docs_b: Optional[Sequence[Union[str, Doc]]] = None,
        *,
        block_size: Optional[int] = None,
    ) -> numpy.ndarray:
        """(len(docs_a), len(docs_b)) scores `docs_a[i].similarity(docs_b[j])`, in blocks of at most `block_size` pairs;
        `docs_b=None` compares docs_a with themselves. Texts are encoded as `encode` does. A comparison of dot products
        and norms (cosine, Cauchy, exp(-L2) and hybrids of them) is scored by matrix products, equal up to float32
        rounding; any other (e.g. a FeatureHead) pair by pair with `compare`, exactly."""
        vectors_a = self.encode(docs_a)
        vectors_b = None if docs_b is None else self.encode(docs_b)
        space = vector_space(self.comparison)
        matrix = None
        if space.matrix_scored:
            matrix = lambda a, b: check_scores(space.scores(a, b), self.score_range, self.name)  # noqa: E731
        return vector_similarity_matrix(self.compare, vectors_a, vectors_b, block_size=block_size, matrix=matrix)

    def encode(
        self, texts_or_docs: TextsOrDocs, *, batch_size: int = 256, n_process: int = 1, progress: bool = False
    ) -> numpy.ndarray:
        """The learned vectors of texts or docs, float32 (N, width), in input order: texts go through the pipe's
        pipeline (`nlp.pipe`, `n_process` processes), docs give the vector this model stored on them (else encoded now).
        `progress` shows a progress bar (on a terminal). They are what `compare` scores: by cosine, or a Cauchy model's
        by L2 after scaling column i by `sqrt(w_i)` (`spacy_siamese.search.vector_space(pipe.comparison).transform`)."""
        items = texts_or_docs_list(texts_or_docs)
        batches: Iterator[numpy.ndarray]
        if self._text_path(items):  # the encoder reads the texts themselves: a doc's text is its text
            if batch_size < 1:
                raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
            batches = (
                self.model.ops.to_numpy(self.check_finite(self.encoder.predict(cast(List[Doc], batch))))
                for batch in minibatch(cast(List[str], items), batch_size)
            )
        else:  # docs are made and encoded a batch at a time, never all held at once
            docs = self.processed(items, batch_size=batch_size, n_process=n_process)
            batches = (self.vectors(batch) for batch in minibatch(docs, batch_size))
        self._require_initialized()
        out = numpy.zeros((len(items), self.encoder.get_dim("nO")), dtype="float32")
        start = 0
        with tqdm(total=len(items), desc="encoding", unit="doc", disable=not show_progress(progress)) as bar:
            for vectors in batches:
                out[start : start + len(vectors)] = vectors
                start += len(vectors)
                bar.update(len(vectors))
        return out

    @property
    def reads_text(self) -> bool:
        """Whether the encoder reads only each doc's text (`table_mean.v1`): `encode` then makes no docs of texts."""
        return bool(self.encoder.attrs.get("reads_text", False))

    def _text_path(self, items: List[Union[str, Doc]]) -> bool:
        """Whether `encode` may skip the pipeline: a text-reading encoder, texts only, none of them
        longer than the pipeline takes (which refuses those with spaCy's own error)."""
        nlp = self.pipeline()
        if nlp is None or not self.reads_text or not all(isinstance(item, str) for item in items):
            return False
        return all(len(item) <= nlp.max_length for item in items)

    def processed(self, texts_or_docs: TextsOrDocs, *, batch_size: int = 256, n_process: int = 1) -> Iterator[Doc]:
        """Docs in input order, streamed: texts through this pipe's pipeline (hooks restored), docs as they are."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        check_n_process(n_process)
        items = texts_or_docs_list(texts_or_docs)
        texts = [item for item in items if isinstance(item, str)]
        nlp = self.pipeline()
        if texts and nlp is None:
            raise ValueError(
                f"The '{self.name}' pipe encodes texts through its pipeline, and it has none (it was not made with "
                "nlp.add_pipe, or no reference to its nlp object is left): keep the nlp object, or pass Doc objects."
            )
        docs: Iterator[Doc] = iter(())
        if nlp is not None and texts:
            docs = hooks.hooked_docs(nlp.pipe(texts, batch_size=batch_size, n_process=n_process))
        return (item if isinstance(item, Doc) else next(docs) for item in items)

    def vectors(self, docs: Sequence[Doc]) -> numpy.ndarray:
        """Learned vectors for docs: the one this model stored, else encoded now (subject to
        `on_unknown`). Vectors stored by other models are never used."""
        model_id = self._require_initialized()
        out: List[Optional[numpy.ndarray]] = []
        todo: List[Tuple[int, Doc]] = []
        for i, doc in enumerate(docs):
            out.append(stored_vector(doc, model_id))
            if out[-1] is None:
                self._check_known(doc, model_id)
                todo.append((i, doc))
        for batch in minibatch(todo, BATCH_SIZE):
            for (i, _), vector in zip(batch, self.model.ops.to_numpy(self.predict([d for _, d in batch]))):
                out[i] = vector.astype("float32")
        width = self.encoder.get_dim("nO")
        return numpy.vstack(out) if out else numpy.zeros((0, width), dtype="float32")  # type: ignore[arg-type]

    def vector_of(self, obj: Union[Doc, Span, Token]) -> numpy.ndarray:
        """The learned vector of a doc, span or token (spans and tokens are encoded as their own doc)."""
        if isinstance(obj, Token):
            obj = obj.doc[obj.i : obj.i + 1]
        if isinstance(obj, Span) and obj.start == 0 and obj.end == len(obj.doc):
            obj = obj.doc
        if isinstance(obj, Span):
            self._check_known(obj.doc, self._require_initialized())
            return self.model.ops.to_numpy(self.predict([self._words_doc(obj)]))[0]
        if not isinstance(obj, Doc):
            raise TypeError(f"siamese_similarity compares Doc, Span and Token objects, not {type(obj).__name__}")
        return self.vectors([obj])[0]

    def similarity(self, obj: Union[Doc, Span, Token], other: Union[Doc, Span, Token]) -> float:
        """This model's similarity of two docs, spans or tokens: symmetric, in `score_range`."""
        return float(self.compare(self.vector_of(obj)[None, :], self.vector_of(other)[None, :])[0])

    def pair_scores(self, examples: Iterable[Example]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(scores, labels) for labelled pair examples. Side A uses the stored vector when the
        pipeline has already processed `eg.predicted`."""
        vectors_a, vectors_b, labels = self.pair_vectors(examples)
        return self.compare(vectors_a, vectors_b), labels

    def pair_vectors(self, examples: Iterable[Example]) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(vectors of side A, vectors of side B, labels) for labelled pair examples, to score with
        `compare` more than once (e.g. at several lexical weights of a hybrid)."""
        examples = list(examples)
        labels = numpy.asarray([get_label(eg) for eg in examples], dtype="float32")
        vectors_a = self.vectors([eg.predicted for eg in examples])
        return vectors_a, self.vectors([get_partner(eg, self.vocab) for eg in examples]), labels

    def _check_known(self, doc: Doc, model_id: str) -> None:
        """With on_unknown='error', refuse a doc this model did not process."""
        if self.cfg["on_unknown"] == "error" and hooks.owner(doc) != model_id:
            raise ValueError(
                f"This doc was not processed by the '{self.name}' pipe (model {model_id}), "
                f"and on_unknown='error'. Make it with the same nlp object. Text: {doc.text[:60]!r}"
            )

    def _own_doc(self, doc: Doc) -> Doc:
        """A doc from another pipeline, rebuilt in this pipe's vocab (strings, static vectors)."""
        return doc if doc.vocab is self.vocab else self._words_doc(doc)

    def _words_doc(self, tokens: Iterable[Token]) -> Doc:
        """A bare doc with the same words in this pipe's vocab (no hooks, no user data), and the
        token norms set by tokenizer exceptions ("n't" -> "not"), which the encoder reads."""
        tokens = list(tokens)
        words = [t.text for t in tokens]
        spaces = [bool(t.whitespace_) for t in tokens]
        if spaces:
            spaces[-1] = False
        doc = Doc(self.vocab, words=words, spaces=spaces)
        for token, source in zip(doc, tokens):
            if source.norm != source.lex.norm:
                token.norm_ = source.norm_
        return doc


def texts_or_docs_list(texts_or_docs: Any) -> List[Union[str, Doc]]:
    """The texts and docs of `encode`'s argument: one text or doc, or an iterable of them. Texts
    of a str subclass (numpy.str_) become str, which spaCy's tokenizer requires."""
    if isinstance(texts_or_docs, (str, Doc)):
        texts_or_docs = [texts_or_docs]
    elif isinstance(texts_or_docs, (bytes, Span, Token)) or not isinstance(texts_or_docs, Iterable):
        raise TypeError(
            f"encode takes texts (str) or Doc objects, or an iterable of them, not {type(texts_or_docs).__name__}"
        )
    items: List[Union[str, Doc]] = []
    for item in texts_or_docs:
        if not isinstance(item, (str, Doc)):
            raise TypeError(f"encode takes texts (str) or Doc objects, got {type(item).__name__}")
        items.append(str(item) if isinstance(item, str) else item)
    return items


def canonical_order(a: numpy.ndarray, b: numpy.ndarray, *, rows: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Swap the rows of each pair into one order, so that sim(a, b) == sim(b, a) exactly even
    when a comparison rounds differently with its inputs swapped; padded to `rows` rows with
    copies of the first pair (new arrays, written once)."""
    n = len(a)
    swap = a[:, 0] > b[:, 0]
    tied = numpy.flatnonzero(a[:, 0] == b[:, 0])  # decided by their first differing column
    if len(tied):
        first = (a[tied] != b[tied]).argmax(axis=1)
        swap[tied] = a[tied, first] > b[tied, first]
    swapped = numpy.flatnonzero(swap)
    shape = (max(n, rows),) + a.shape[1:]
    out_a, out_b = numpy.empty(shape, dtype=a.dtype), numpy.empty(shape, dtype=b.dtype)
    for out, keep, other in ((out_a, a, b), (out_b, b, a)):
        out[:n] = keep
        out[swapped] = other[swapped]
        out[n:] = out[:1]
    return out_a, out_b
