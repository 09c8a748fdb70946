"""The `siamese_similarity` pipe: learns a doc vector and a comparison from labelled pairs."""
import uuid
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, Token
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from . import hooks
from .pairs import get_label, get_partner, is_pair_example, split_pairs
from .scoring import best_threshold, is_binary, score_pairs

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-siamese.Siamese.v1"

[model.encoder]
@architectures = "spacy-siamese.MWEEncoder.v1"
width = 128
depth = 2
window_size = 1
maxout_pieces = 3
attrs = ["NORM","PREFIX","SUFFIX","SHAPE"]
rows = [10000,2500,2500,2500]
include_static_vectors = false
post_depth = 2
squash = false

[model.comparison]
@architectures = "spacy-siamese.CauchySimilarity.v1"
"""
DEFAULT_MODEL = Config().from_str(DEFAULT_MODEL_CONFIG)["model"]
ON_UNKNOWN = ("encode", "error")
BATCH_SIZE = 256


@Language.factory(
    "siamese_similarity",
    assigns=["doc.user_data", "doc.vector"],
    default_config={
        "model": DEFAULT_MODEL,
        "loss": {"@losses": "spacy-siamese.LogLoss.v1"},
        "threshold": 0.5,
        "tune_threshold": True,
        "on_unknown": "encode",
        "scorer": {"@scorers": "spacy-siamese.pair_scorer.v1"},
    },
    default_score_weights={"sim_acc": 0.5, "sim_auc": 0.5, "sim_f": 0.0, "sim_ap": 0.0},
)
def make_siamese_similarity(
    nlp: Language,
    name: str,
    model: Model,
    loss: Callable,
    threshold: float,
    tune_threshold: bool,
    on_unknown: str,
    scorer: Callable,
) -> "SiameseSimilarity":
    return SiameseSimilarity(
        nlp.vocab,
        model,
        name,
        loss=loss,
        threshold=threshold,
        tune_threshold=tune_threshold,
        on_unknown=on_unknown,
        scorer=scorer,
    )


class SiameseSimilarity(TrainablePipe):
    """Store a learned vector on each doc and hook `doc.similarity`, `span.similarity`,
    `doc.vector` and `doc.has_vector` so they answer with the trained model.

    Training examples are labelled pairs (see `spacy_siamese.pairs`). When
    `tune_threshold` is on, scoring after an update (the evaluation step of
    `spacy train`) picks the accuracy-maximising decision threshold on the
    evaluation pairs and stores it in `cfg`, so it is saved with `model-best`.
    A loaded pipeline never retunes: `spacy evaluate` uses the stored threshold.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "siamese_similarity",
        *,
        loss: Callable,
        threshold: float = 0.5,
        tune_threshold: bool = True,
        on_unknown: str = "encode",
        scorer: Callable = score_pairs,
    ) -> None:
        if on_unknown not in ON_UNKNOWN:
            raise ValueError(f"siamese_similarity: on_unknown must be one of {ON_UNKNOWN}, got {on_unknown!r}")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"siamese_similarity: threshold must be in [0, 1], got {threshold}")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.loss = loss
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {
            "threshold": float(threshold),
            "tune_threshold": tune_threshold,
            "on_unknown": on_unknown,
            "model_id": None,
        }
        self._updated = False

    @property
    def threshold(self) -> float:
        return float(self.cfg["threshold"])

    @property
    def model_id(self) -> Optional[str]:
        return self.cfg.get("model_id")

    @property
    def encoder(self) -> Model:
        return self.model.get_ref("encoder")

    @property
    def comparison(self) -> Model:
        return self.model.get_ref("comparison")

    # -- applying the model ---------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Encode docs into one learned vector each: (n_docs, width)."""
        self._require_initialized()
        docs = list(docs)
        if not docs:
            return self.model.ops.alloc2f(0, self.encoder.get_dim("nO"))
        return self.encoder.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], vectors: Floats2d) -> None:
        model_id = self._require_initialized()
        vectors = self.model.ops.to_numpy(vectors).astype("float32")
        for doc, vector in zip(docs, vectors):
            hooks.set_vector(doc, model_id, vector)

    def compare(self, vectors_a: Floats2d, vectors_b: Floats2d) -> numpy.ndarray:
        """Similarity of paired rows of two vector arrays, as a 1d numpy array."""
        if len(vectors_a) == 0:
            return numpy.zeros((0,), dtype="float32")
        xp = self.model.ops
        scores = self.comparison.predict((xp.asarray2f(vectors_a), xp.asarray2f(vectors_b)))
        return self.model.ops.to_numpy(scores)[:, 0]

    def vectors(self, docs: Sequence[Doc]) -> numpy.ndarray:
        """Learned vectors for docs: the stored one where this model made it, else encoded now
        (subject to `on_unknown`). Raises if a doc was annotated by another model."""
        model_id = self._require_initialized()
        out: List[Optional[numpy.ndarray]] = []
        todo: List[Tuple[int, Doc]] = []
        for i, doc in enumerate(docs):
            data = hooks.stored(doc)
            if data is not None and data["model"] == model_id:
                out.append(data["vector"])
            elif data is not None:
                raise ValueError(self._mixing_error(data["model"]))
            else:
                if self.cfg["on_unknown"] == "error":
                    raise ValueError(
                        f"This doc was not processed by the '{self.name}' pipe (model {model_id}), "
                        f"and on_unknown='error'. Make it with the same nlp object. Text: {doc.text[:60]!r}"
                    )
                out.append(None)
                todo.append((i, self._own_doc(doc)))
        for batch in minibatch(todo, BATCH_SIZE):
            encoded = self.model.ops.to_numpy(self.predict([d for _, d in batch]))
            for (i, _), vector in zip(batch, encoded):
                out[i] = vector.astype("float32")
        width = self.encoder.get_dim("nO")
        return numpy.vstack(out) if out else numpy.zeros((0, width), dtype="float32")  # type: ignore[arg-type]

    def vector_of(self, obj: Union[Doc, Span, Token]) -> numpy.ndarray:
        """The learned vector of a doc, span or token (spans are encoded as their own doc)."""
        if isinstance(obj, Token):
            obj = obj.doc[obj.i : obj.i + 1]
        if isinstance(obj, Span):
            data = hooks.stored(obj.doc)
            if data is not None and data["model"] != self.model_id:
                raise ValueError(self._mixing_error(data["model"]))
            if data is not None and obj.start == 0 and obj.end == len(obj.doc):
                return data["vector"]
            obj = self._words_doc(obj)
        if not isinstance(obj, Doc):
            raise TypeError(f"siamese_similarity compares Doc, Span and Token objects, not {type(obj).__name__}")
        return self.vectors([obj])[0]

    def similarity(self, obj: Union[Doc, Span, Token], other: Union[Doc, Span, Token]) -> float:
        """Learned similarity of two docs, spans or tokens; symmetric, in [0, 1]."""
        a = self.vector_of(obj)
        b = self.vector_of(other)
        return float(self.compare(a[None, :], b[None, :])[0])

    def pair_scores(self, examples: Iterable[Example]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(scores, labels) for labelled pair examples. Side A uses the stored vector when the
        pipeline has already processed `eg.predicted`."""
        examples = list(examples)
        labels = numpy.asarray([get_label(eg) for eg in examples], dtype="float32")
        vectors_a = self.vectors([eg.predicted for eg in examples])
        vectors_b = self.vectors([get_partner(eg, self.vocab) for eg in examples])
        return self.compare(vectors_a, vectors_b), labels

    # -- training -------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "SiameseSimilarity.update")
        if not examples:
            return losses
        self._require_initialized()
        if not self._updated:
            # New weights from here on (e.g. fine-tuning a sourced pipe): a new identity,
            # so vectors made before this update cannot be mixed with later ones.
            self._new_model_id()
        docs_a, docs_b, labels = split_pairs(examples, self.vocab)
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update((docs_a, docs_b))
        d_scores, loss = self.loss(scores, self.model.ops.asarray1f(labels))
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        self._updated = True
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
        labels = self.model.ops.asarray1f([get_label(eg) for eg in examples])
        d_scores, loss = self.loss(scores, labels)
        return loss, d_scores

    def initialize(
        self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None
    ) -> None:
        """Initialize the weights from a sample of pairs. Without pairs (a bare
        `nlp.initialize()`), the model is initialized from the sample docs alone.
        An encoder with `attrs["fit_on_corpus"] = True` (e.g. a TF-IDF featuriser that
        fits document frequencies) is initialized on every training pair instead."""
        validate_get_examples(get_examples, "SiameseSimilarity.initialize")
        if _uses_static_vectors(self.model) and self.vocab.vectors.shape[0] == 0:
            raise ValueError(
                f"The '{self.name}' encoder uses static vectors (include_static_vectors = true), "
                "but the pipeline has no word vectors. Set [initialize] vectors in the config "
                "(e.g. --paths.vectors /path/to/en_core_web_md) or turn static vectors off."
            )
        sample_size = None if self.encoder.attrs.get("fit_on_corpus", False) else 10
        sample = list(islice(get_examples(), sample_size))
        if sample and all(is_pair_example(eg) for eg in sample):
            docs_a, docs_b, labels = split_pairs(sample, self.vocab)
            self.model.initialize(X=(docs_a, docs_b), Y=self.model.ops.asarray1f(labels))
        else:
            docs = [eg.predicted for eg in sample] or [Doc(self.vocab, words=["x", "y"])]
            self.model.initialize(X=(docs, docs))
        self._new_model_id()
        self._updated = False

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        examples = list(examples)
        validate_examples(examples, "SiameseSimilarity.score")
        scores, labels = self.pair_scores(examples)
        if self._updated and self.cfg["tune_threshold"] and is_binary(labels):
            self.cfg["threshold"] = round(best_threshold(scores, labels), 6)  # exact through cfg.json
        return self.scorer(examples, pair_scores=lambda _: (scores, labels), threshold=self.threshold, **kwargs)

    # -- serialization --------------------------------------------------------

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "SiameseSimilarity":
        try:
            super().from_disk(path, exclude=exclude)
        except (ValueError, KeyError, OSError) as e:
            raise ValueError(f"Could not load the '{self.name}' pipe from {path}: {e}") from e
        self._loaded()
        return self

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "SiameseSimilarity":
        try:
            super().from_bytes(bytes_data, exclude=exclude)
        except (ValueError, KeyError) as e:
            raise ValueError(f"Could not load the '{self.name}' pipe from bytes: {e}") from e
        self._loaded()
        return self

    def _loaded(self) -> None:
        if self.model_id is None:
            raise ValueError(f"The saved '{self.name}' pipe has no model id in its cfg: it was never initialized.")
        self._updated = False
        hooks.register_pipe(self.model_id, self)

    # -- helpers --------------------------------------------------------------

    def _new_model_id(self) -> None:
        self.cfg["model_id"] = uuid.uuid4().hex
        hooks.register_pipe(self.cfg["model_id"], self)

    def _require_initialized(self) -> str:
        if self.model_id is None:
            raise ValueError(
                f"The '{self.name}' pipe is not initialized: train it (spacy train) or call "
                "nlp.initialize(get_examples) with labelled pairs before using it."
            )
        return self.model_id

    def _own_doc(self, doc: Doc) -> Doc:
        """A doc from another pipeline, rebuilt in this pipe's vocab (strings, static vectors)."""
        return doc if doc.vocab is self.vocab else self._words_doc(doc)

    def _words_doc(self, tokens: Union[Doc, Span]) -> Doc:
        """A bare doc with the same words in this pipe's vocab (no hooks, no user data)."""
        words = [t.text for t in tokens]
        spaces = [bool(t.whitespace_) for t in tokens]
        if spaces:
            spaces[-1] = False
        return Doc(self.vocab, words=words, spaces=spaces)

    def _mixing_error(self, other_id: str) -> str:
        return (
            f"Cannot compare docs made by two different siamese_similarity models "
            f"('{self.model_id}' in pipe '{self.name}' and '{other_id}'): their vectors live in "
            "different spaces. Process both docs with the same pipeline."
        )


def _uses_static_vectors(model: Model) -> bool:
    return any(node.name == "static_vectors" for node in model.walk())
