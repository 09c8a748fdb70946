"""The `siamese_similarity` pipe: learns a doc vector and a comparison from labelled pairs."""

import math
import uuid
import weakref
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union, cast

import numpy
import spacy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, Token
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d
from tqdm import tqdm

from . import hooks
from .identity import ModelIdentity, check_architecture, in_training_evaluation, layer_names, reads_static_vectors
from .labelled import get_doc_labels, is_labelled_doc, same_label_matrix
from .layers.heads import predicting_head, score_range
from .layers.hybrid import is_hybrid_similarity, set_hybrid_weight
from .layers.in_batch import cross_scores
from .layers.no_tokens import encode_docs
from .metrics import best_threshold, is_binary, precision_threshold
from .pair_examples import get_dataset, get_label, get_partner, is_pair_example, partner_text, split_pairs
from .pairwise import vector_similarity_matrix
from .scoring import binary_pairs, score_pairs
from .util import check_n_process, show_progress, token_batches
from .validation import DEDUPE_PRECISION, check_scores, check_settings, check_sizes
from .vectors import store_vector, stored_vector

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-siamese.Siamese.v1"

[model.encoder]
@architectures = "spacy-siamese.MWEEncoder.v2"
width = 128
depth = 2
window_size = 1
maxout_pieces = 3
attrs = ["NORM","PREFIX","SUFFIX","SHAPE"]
rows = [10000,2500,2500,2500]
include_static_vectors = false
post_depth = 2
proj_width = 0
squash = false

[model.comparison]
@architectures = "spacy-siamese.CauchySimilarity.v1"
"""
DEFAULT_MODEL = Config().from_str(DEFAULT_MODEL_CONFIG)["model"]
PIPE_NAME = "siamese_similarity"
HYBRID_ARCHITECTURE = "spacy-siamese.HybridSimilarity.v1"
# The pipeline each pipe made by the factory belongs to (not an attribute: pipes are pickled).
_PIPELINES: "weakref.WeakKeyDictionary[Any, weakref.ReferenceType[Language]]" = weakref.WeakKeyDictionary()
BATCH_SIZE = 256
PREDICT_TOKENS = 8192  # tokens per batch the encoder runs on at once (a longer doc runs alone)
PAD_ROWS = 32
# A function giving labelled pair examples' (scores, labels), as the pipe's `pair_scores` does.
PairScores = Callable[[List[Example]], Tuple[numpy.ndarray, numpy.ndarray]]


@Language.factory(
    "siamese_similarity",
    assigns=["doc.user_data", "doc.vector"],
    default_config={
        "model": DEFAULT_MODEL,
        "loss": {"@losses": "spacy-siamese.LogLoss.v2"},
        "threshold": 0.5,
        "tune_threshold": True,
        "dedupe_precision": DEDUPE_PRECISION,
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
    dedupe_precision: float = DEDUPE_PRECISION,
) -> "SiameseSimilarity":
    pipe = SiameseSimilarity(
        nlp.vocab,
        model,
        name,
        loss=loss,
        threshold=threshold,
        tune_threshold=tune_threshold,
        dedupe_precision=dedupe_precision,
        on_unknown=on_unknown,
        scorer=scorer,
    )
    _PIPELINES[pipe] = weakref.ref(nlp)  # for `encode` of texts; weak both ways: the nlp owns the pipe
    return pipe


class SiameseSimilarity(ModelIdentity, TrainablePipe):
    """Store a learned vector on each doc and hook `doc.similarity`, `span.similarity`,
    `token.similarity`, `doc.vector` and `span.vector` so they answer with the trained model.

    Scores lie in `score_range`: [0, 1] for Cauchy, FeatureHead and rescaled cosine, [-1, 1]
    for cosine with `rescale = false`; combinators (WithAuxiliary, TrainCalibrated) have the
    range of the head that predicts. Rounding never leaves the range (scores are clipped), and a
    score that is not finite raises. Each set of weights has its own `model_id`, renewed at the
    first use after an update, and vectors of one model are never read through another.

    Training examples are labelled pairs (see `spacy_siamese.pair_examples`). With `tune_threshold`,
    the evaluation step of `spacy train` picks the accuracy-maximising decision threshold on the
    dev pairs and stores it in `cfg` (saved with `model-best`). Other evaluations keep the
    threshold unless asked: `nlp.evaluate(examples, scorer_cfg={"tune_threshold": True})`.

    Pairs of a multi-dataset corpus carry their dataset's name: a `DatasetLosses.v1` loss is
    picked by the dataset of each batch (one dataset per batch), and the threshold is tuned on
    the pairs of the datasets whose labels are all 0 or 1.
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
        dedupe_precision: float = DEDUPE_PRECISION,
        on_unknown: str = "encode",
        scorer: Callable = score_pairs,
    ) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.loss = loss
        self.scorer = scorer
        self.score_range = score_range(model.get_ref("comparison"))
        self.cfg: Dict[str, Any] = {
            "threshold": threshold,
            "tune_threshold": tune_threshold,
            "dedupe_threshold": None,
            "dedupe_precision": dedupe_precision,
            "on_unknown": on_unknown,
            "model_id": None,
        }
        check_settings(self.cfg, where=f"The '{name}' pipe's settings", scores=self.score_range, saved=False)
        self.cfg["threshold"] = float(threshold)
        check_sizes(model, name)

    @property
    def threshold(self) -> float:
        return float(self.cfg["threshold"])

    @property
    def dedupe_threshold(self) -> Optional[float]:
        """The score from which two texts count as duplicates when mining a collection: the lowest
        threshold with `dedupe_precision` on the dev pairs, tuned with the decision threshold
        (None for a pipe trained before it existed, or whose dev pairs never reach that
        precision; `calibrate_dedupe_threshold` sets it)."""
        value = self.cfg.get("dedupe_threshold")
        return None if value is None else float(value)

    @property
    def encoder(self) -> Model:
        return self.model.get_ref("encoder")

    @property
    def comparison(self) -> Model:
        return self.model.get_ref("comparison")

    # -- applying the model ---------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Encode docs into one learned vector each: (n_docs, width)."""
        self._check_initialized()
        docs = [self._own_doc(doc) for doc in docs]
        if not docs:
            return self.model.ops.alloc2f(0, self.encoder.get_dim("nO"))
        # long docs are encoded a few at a time: the activations grow with a batch's tokens
        parts = [self._encode(batch) for batch in token_batches(docs, PREDICT_TOKENS)]
        vectors = parts[0] if len(parts) == 1 else self.model.ops.xp.vstack(parts)
        if not self.model.ops.xp.isfinite(vectors).all():
            raise ValueError(
                f"The '{self.name}' model produced vectors that are not finite: its weights are not "
                "finite (a diverged training run or a damaged model file)."
            )
        return vectors

    def _encode(self, docs: List[Doc]) -> Floats2d:
        """The vectors of one batch (`encode_docs`: any encoder, empty docs included)."""
        return encode_docs(self.encoder, docs, False)[0]

    def set_annotations(self, docs: Iterable[Doc], vectors: Floats2d) -> None:
        model_id = self._require_initialized()
        array = numpy.asarray(self.model.ops.to_numpy(vectors), dtype="float32")
        for doc, vector in zip(docs, array):
            store_vector(doc, model_id, vector)
            hooks.install_hooks(doc, model_id)

    def compare(self, vectors_a: numpy.ndarray, vectors_b: numpy.ndarray) -> numpy.ndarray:
        """Similarity of paired rows of two vector arrays, as a 1d numpy array in `score_range`.
        Calls are padded to a multiple of PAD_ROWS rows (BLAS rounds a matrix's tail rows
        differently), so a pair's score does not depend on the other pairs scored with it."""
        self._check_initialized()
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
        rows = -(-n // PAD_ROWS) * PAD_ROWS
        a, b = _canonical_order(a, b, rows=rows)
        ops = self.model.ops
        pair = (ops.asarray2f(cast(Floats2d, a)), ops.asarray2f(cast(Floats2d, b)))
        scores = ops.to_numpy(self.comparison.predict(pair))[:n, 0]
        return check_scores(scores, self.score_range, self.name)

    def similarity_matrix(
        self,
        docs_a: Sequence[Union[str, Doc]],
        docs_b: Optional[Sequence[Union[str, Doc]]] = None,
        *,
        block_size: Optional[int] = None,
    ) -> numpy.ndarray:
        """(len(docs_a), len(docs_b)) scores, each exactly `docs_a[i].similarity(docs_b[j])`, in
        blocks of at most `block_size` pairs; `docs_b=None` compares docs_a with themselves.
        Texts are encoded as `encode` does."""
        vectors_a = self.encode(docs_a)
        vectors_b = None if docs_b is None else self.encode(docs_b)
        return vector_similarity_matrix(self.compare, vectors_a, vectors_b, block_size=block_size)

    def encode(
        self,
        texts_or_docs: Union[str, Doc, Iterable[Union[str, Doc]]],
        *,
        batch_size: int = 256,
        n_process: int = 1,
        progress: bool = False,
    ) -> numpy.ndarray:
        """The learned vectors of texts or docs, float32 (N, width), in input order: texts go
        through the pipeline this pipe belongs to (`nlp.pipe`, `n_process` processes), docs give
        the vector this model stored on them (else encoded now). `progress` shows a progress bar
        (on a terminal).

        The vectors are what `compare` scores: a cosine model's vectors compare by cosine; a
        Cauchy model's by `1 / (1 + sum_i w_i (a_i - b_i)^2)`, i.e. L2 after scaling column i by
        `sqrt(w_i)` (`spacy_siamese.search.vector_space(pipe.comparison).transform`); a hybrid's
        last `lexical_width` columns are its TF-IDF part (see `HybridSimilarity.v1`)."""
        items = _texts_or_docs(texts_or_docs)
        docs = self.processed(items, batch_size=batch_size, n_process=n_process)
        self._require_initialized()
        out = numpy.zeros((len(items), self.encoder.get_dim("nO")), dtype="float32")
        start = 0  # docs are made and encoded a batch at a time, never all held at once
        with tqdm(total=len(items), desc="encoding", unit="doc", disable=not show_progress(progress)) as bar:
            for batch in minibatch(docs, batch_size):
                out[start : start + len(batch)] = self.vectors(batch)
                start += len(batch)
                bar.update(len(batch))
        return out

    def processed(
        self, texts_or_docs: Union[str, Doc, Iterable[Union[str, Doc]]], *, batch_size: int = 256, n_process: int = 1
    ) -> Iterator[Doc]:
        """Docs in input order, streamed: texts go through this pipe's pipeline (with their hooks
        restored), docs are kept as they are."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        check_n_process(n_process)
        items = _texts_or_docs(texts_or_docs)
        texts = [item for item in items if isinstance(item, str)]
        owner = _PIPELINES.get(self)
        nlp = owner() if owner is not None else None
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
            encoded = self.model.ops.to_numpy(self.predict([d for _, d in batch]))
            for (i, _), vector in zip(batch, encoded):
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
        a = self.vector_of(obj)
        b = self.vector_of(other)
        return float(self.compare(a[None, :], b[None, :])[0])

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
        vectors_b = self.vectors([get_partner(eg, self.vocab) for eg in examples])
        return vectors_a, vectors_b, labels

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
        self._check_initialized()
        if any(is_labelled_doc(eg) for eg in examples):
            loss = self._update_labelled(examples, drop=drop)
        else:
            loss = self._update_pairs(examples, drop=drop)
        self._trained = True
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def _update_pairs(self, examples: List[Example], *, drop: float) -> float:
        """Forward and backward pass on a batch of pair examples; the loss."""
        pair_loss = self._pair_loss(examples)
        docs_a, docs_b, labels = split_pairs(examples, self.vocab)
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update((docs_a, docs_b))
        d_scores, loss = pair_loss(scores, self.model.ops.asarray1f(labels))
        self._check_loss(
            float(loss),
            d_scores,
            f"a batch of {len(examples)} pairs (first: {examples[0].predicted.text[:60]!r})",
            "Check the labels and the loss settings, or lower the learning rate.",
        )
        backprop(d_scores)
        return float(loss)

    def _update_labelled(self, examples: List[Example], *, drop: float) -> float:
        """Forward and backward pass on labelled single docs (`spacy_siamese.labelled`): encode the
        batch, score every two docs with the comparison's predicting head (in training, so
        TrainCalibrated's calibrated score) and let the loss
        mine the triplets (`from_labels`, e.g. spacy-siamese.TripletLoss.v1); the loss."""
        if not all(is_labelled_doc(eg) for eg in examples):
            raise ValueError(f"The '{self.name}' pipe got a batch that mixes labelled docs and pairs.")
        if not hasattr(self.loss, "from_labels"):
            raise ValueError(
                f"The '{self.name}' pipe got labelled docs, which need a loss that mines triplets in the "
                f"batch (spacy-siamese.TripletLoss.v1), not {type(self.loss).__name__}."
            )
        docs = [eg.predicted for eg in examples]
        same = same_label_matrix([get_doc_labels(eg) for eg in examples])
        head = predicting_head(self.comparison, training=True)
        set_dropout_rate(self.model, drop)
        encoded, backprop_encoder = encode_docs(self.encoder, docs, True)
        matrix, backprop_matrix = cross_scores(head, encoded, encoded, True)
        d_matrix, loss = self.loss.from_labels(matrix, same)
        self._check_loss(float(loss), d_matrix, f"a batch of {len(examples)} labelled docs", "Lower the learning rate.")
        d_a, d_b = backprop_matrix(self.model.ops.asarray2f(d_matrix))
        backprop_encoder(d_a + d_b)
        return float(loss)

    def _pair_loss(self, examples: List[Example]) -> Callable:
        """The loss for a batch of pairs: the pipe's loss, or with per-dataset losses
        (`spacy-siamese.DatasetLosses.v1`) the one of the batch's dataset."""
        loss = self._dataset_loss(examples)
        # a loss that reads the batch's texts: TeacherScores.v1's table, the known duplicates that
        # InBatchNegatives.v1 and TripletLoss.v1 leave out of their negatives
        if hasattr(loss, "for_texts"):
            return loss.for_texts([eg.predicted.text for eg in examples], [partner_text(eg) for eg in examples])
        return loss

    def _dataset_loss(self, examples: List[Example]) -> Callable:
        if not hasattr(self.loss, "for_dataset"):
            return self.loss
        names = sorted({get_dataset(eg) or "" for eg in examples})
        if len(names) > 1:
            shown = ", ".join(name or "(untagged)" for name in names)
            raise ValueError(
                f"The '{self.name}' pipe got a batch that mixes pairs of datasets {shown}; its per-dataset "
                "losses need one dataset per batch: batch with spacy-siamese.batch_by_dataset.v1."
            )
        return self.loss.for_dataset(names[0] or None, in_batch=self._in_batch_scores())

    def _in_batch_scores(self) -> bool:
        """Whether the model's training scores carry in-batch columns (WithInBatchScores.v1)."""
        return any(node.name == "with_in_batch_scores" for node in self.comparison.walk())

    def _check_loss(self, loss: float, d_scores: Floats2d, batch: str, advice: str) -> None:
        """Stop on a loss or gradient that is not finite, before the weights become nan."""
        if not math.isfinite(loss) or not self.model.ops.xp.isfinite(d_scores).all():
            raise ValueError(
                f"The '{self.name}' pipe's loss is {loss} on {batch}: stopped before the weights become nan. {advice}"
            )

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
        examples = list(examples)
        labels = self.model.ops.asarray1f([get_label(eg) for eg in examples])
        d_scores, loss = self._pair_loss(examples)(scores, labels)
        return loss, d_scores

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        init_weights: Optional[Union[str, Path]] = None,
    ) -> None:
        """Initialize the weights from a sample of pairs. Without pairs (a bare
        `nlp.initialize()`), the model is initialized from the sample docs alone.
        An encoder with `attrs["fit_on_corpus"] = True` (e.g. a TF-IDF featuriser that
        fits document frequencies) is initialized on every training pair instead. Per-dataset
        losses (`DatasetLosses.v1`) are checked against the datasets of every training pair.

        `init_weights` (`[initialize.components.siamese_similarity]`) names a trained pipeline
        whose pipe of this name has the same architecture: its weights (with a fitted TF-IDF's
        vocabulary, not refitted on this config's texts) and threshold are the initial ones (a
        hybrid's lexical weight is this config's), and training goes on from them with this
        config's loss, data and scorer. Sourcing the component instead keeps the source's whole
        component config, loss and scorer included."""
        validate_get_examples(get_examples, "SiameseSimilarity.initialize")
        if reads_static_vectors(self.model) and self.vocab.vectors.shape[0] == 0:
            raise ValueError(
                f"The '{self.name}' encoder uses static vectors (include_static_vectors = true), "
                "but the pipeline has no word vectors. Set [initialize] vectors in the config "
                "(e.g. --paths.vectors /path/to/en_core_web_md) or turn static vectors off."
            )
        all_examples: Optional[List[Example]] = None  # the training examples, once read in full
        if init_weights is not None:
            # The source's dimensions, weights and fitted TF-IDF vocabulary, as spacy.load sets them.
            self._load_weights(Path(init_weights))
        else:
            fit_on_corpus = self.encoder.attrs.get("fit_on_corpus", False)
            sample = list(islice(get_examples(), None if fit_on_corpus else 10))
            all_examples = sample if fit_on_corpus else None
            if sample and all(is_pair_example(eg) for eg in sample):
                docs_a, docs_b, labels = split_pairs(sample, self.vocab)
                self.model.initialize(X=(docs_a, docs_b), Y=self.model.ops.asarray1f(labels))
            else:
                docs = [eg.predicted for eg in sample] or [Doc(self.vocab, words=["x", "y"])]
                self.model.initialize(X=(docs, docs))
        if hasattr(self.loss, "check_datasets"):
            examples = all_examples if all_examples is not None else get_examples()
            self.loss.check_datasets({get_dataset(eg) for eg in examples if is_pair_example(eg)})
        self._set_model_id(uuid.uuid4().hex)
        self._trained = False

    def _load_weights(self, path: Path) -> None:
        """The weights and threshold of the same-named pipe of the trained pipeline at `path`."""
        where = f"init_weights = {str(path)!r}"
        if not (path / "config.cfg").is_file():
            raise ValueError(f"{where}: no trained pipeline there (no config.cfg).")
        source = get_similarity_pipe(spacy.load(path), self.name)
        if reads_static_vectors(self.model):
            mine, theirs = self.vocab.vectors.shape, source.vocab.vectors.shape
            if mine != theirs:
                raise ValueError(
                    f"{where}: its word vectors have shape {theirs}, this pipeline's {mine}: "
                    "initialize with the same vectors (e.g. --paths.vectors)."
                )
        layers = layer_names(self.model)
        with self._keeping_lexical_weight(), self._unchanged_on_error(exclude=["vocab"]):
            try:
                self.model.from_bytes(source.model.to_bytes())
            except (ValueError, KeyError) as err:
                raise ValueError(
                    f"{where}: its '{self.name}' pipe has another architecture than this one ({err})."
                ) from None
            check_architecture(
                self.model,
                layers,
                f"{where}: its '{self.name}' pipe",
                advice="Train from a pipe with this config's model.",
            )
            self.cfg["threshold"] = source.threshold
            self.cfg["dedupe_threshold"] = source.dedupe_threshold

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> "SiameseSimilarity":
        with self._keeping_lexical_weight():
            return super().from_disk(path, exclude=exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()) -> "SiameseSimilarity":
        with self._keeping_lexical_weight():
            return super().from_bytes(bytes_data, exclude=exclude)

    @property
    def lexical_weight(self) -> Optional[float]:
        """The weight of a `HybridSimilarity.v1` pipe's lexical part in its scores (else None)."""
        head = predicting_head(self.comparison)
        return float(head.attrs["weight"]) if is_hybrid_similarity(head) else None

    @contextmanager
    def _keeping_lexical_weight(self) -> Iterator[None]:
        """A hybrid's lexical weight is a setting of the config the pipe was built from (e.g. with
        a config override at `spacy.load`): weights loaded in the block (`from_disk`,
        `from_bytes`, `init_weights`) that were saved at another weight are mixed at it."""
        weight = self.lexical_weight
        yield
        if weight is not None and weight != self.lexical_weight:
            self._mix_lexical_part(weight)

    def _mix_lexical_part(self, weight: float) -> None:
        """Mix the hybrid's lexical part at `weight`: its score range, that of the wrappers that
        pass it on, the thresholds kept inside it, and a new model id (doc.similarity finds a
        doc's pipe by its model id, and this pipe now scores otherwise)."""
        head = _hybrid_head(self)
        set_hybrid_weight(head, weight)
        for node in self.comparison.walk():
            if node is not head and "score_range" in node.attrs and predicting_head(node) is head:
                node.attrs["score_range"] = head.attrs["score_range"]  # e.g. WithInBatchScores.v1 around it
        self.score_range = score_range(self.comparison)
        low, high = self.score_range
        self.cfg["threshold"] = min(max(self.threshold, low), high)
        if self.dedupe_threshold is not None:
            self.cfg["dedupe_threshold"] = min(max(self.dedupe_threshold, low), high)
        self.mark_changed()

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Pair metrics at the stored threshold. The threshold is retuned on these examples first
        when `tune_threshold=True` is passed (`scorer_cfg`), or inside `spacy train`'s evaluation
        of a pipe it updated when the `tune_threshold` setting is on, on the pairs of the datasets
        labelled 0/1 (untagged pairs are one dataset). `pair_scores=f` scores the pairs with
        `f(examples) -> (scores, labels)` instead of encoding them (e.g. `compare` of `pair_vectors`)."""
        tune = kwargs.pop("tune_threshold", None)
        pair_scores = kwargs.pop("pair_scores", None) or self.pair_scores
        examples = list(examples)
        validate_examples(examples, "SiameseSimilarity.score")
        if examples and not any(is_pair_example(eg) for eg in examples):
            return {}  # e.g. text classification examples for another pipe of the pipeline
        scores, labels = pair_scores(examples)
        if tune is None:
            tune = self.cfg["tune_threshold"] and self._trained and in_training_evaluation()
        binary = binary_pairs(examples, labels)
        if tune and binary.any():
            low, high = self.score_range
            self.cfg["threshold"] = min(max(round(best_threshold(scores[binary], labels[binary]), 6), low), high)
            self._set_dedupe_threshold(scores[binary], labels[binary])
        return self.scorer(examples, pair_scores=lambda _: (scores, labels), threshold=self.threshold, **kwargs)

    def calibrate_dedupe_threshold(
        self,
        examples: Iterable[Example],
        *,
        precision: Optional[float] = None,
        pair_scores: Optional[PairScores] = None,
    ) -> Optional[float]:
        """Set (and return) `dedupe_threshold` from labelled pairs, e.g. the dev pairs of a pipe
        trained before it existed: the lowest threshold whose precision on them is at least
        `precision` (default: the `dedupe_precision` setting, which it then becomes). `pair_scores`
        as in `score`."""
        cfg = self.cfg if precision is None else {**self.cfg, "dedupe_precision": float(precision)}
        check_settings(cfg, where=f"The '{self.name}' pipe's settings", scores=self.score_range, saved=False)
        scores, labels = (pair_scores or self.pair_scores)(list(examples))
        if not is_binary(labels):
            raise ValueError("The dedupe threshold is calibrated on pairs labelled 0 or 1 (duplicates or not).")
        self.cfg["dedupe_precision"] = cfg["dedupe_precision"]
        self._set_dedupe_threshold(scores, labels)
        return self.dedupe_threshold

    def _set_dedupe_threshold(self, scores: numpy.ndarray, labels: numpy.ndarray) -> None:
        value = precision_threshold(scores, labels, float(self.cfg.get("dedupe_precision", DEDUPE_PRECISION)))
        low, high = self.score_range
        self.cfg["dedupe_threshold"] = None if value is None else min(max(round(value, 6), low), high)

    # -- helpers --------------------------------------------------------------

    def _check_initialized(self) -> None:
        if self.cfg["model_id"] is None:
            raise ValueError(
                f"The '{self.name}' pipe is not initialized: train it (spacy train) or call "
                "nlp.initialize(get_examples) with labelled pairs before using it."
            )

    def _require_initialized(self) -> str:
        self._check_initialized()
        return self.model_id  # type: ignore[return-value]

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


def _texts_or_docs(texts_or_docs: Any) -> List[Union[str, Doc]]:
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


def _canonical_order(
    a: numpy.ndarray, b: numpy.ndarray, *, rows: Optional[int] = None
) -> Tuple[numpy.ndarray, numpy.ndarray]:
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
    shape = (max(n, rows or n),) + a.shape[1:]
    out_a, out_b = numpy.empty(shape, dtype=a.dtype), numpy.empty(shape, dtype=b.dtype)
    for out, keep, other in ((out_a, a, b), (out_b, b, a)):
        out[:n] = keep
        out[swapped] = other[swapped]
        out[n:] = out[:1]
    return out_a, out_b


def get_similarity_pipe(nlp: Language, name: str = PIPE_NAME, *, initialized: bool = False) -> SiameseSimilarity:
    """The pipeline's similarity pipe named `name`, or a ValueError that says which components
    there are; with `initialized`, also a ValueError for a pipe that was never trained."""
    if name not in nlp.component_names:
        raise ValueError(f"The pipeline has no '{name}' component (components: {nlp.component_names}).")
    pipe = nlp.get_pipe(name)
    if not isinstance(pipe, SiameseSimilarity):
        raise ValueError(
            f"The pipeline's '{name}' component is a {type(pipe).__name__}, not a siamese_similarity pipe."
        )
    if initialized:
        pipe._check_initialized()
    return pipe


def set_lexical_weight(nlp: Language, weight: float, *, name: str = PIPE_NAME) -> None:
    """Mix the lexical (TF-IDF) part of a trained `HybridSimilarity.v1` pipe at `weight` from now
    on, in the pipe and in the pipeline's config, which saves it (a config override at
    `spacy.load` sets it for that pipeline alone). The training loss never sees the weight, so
    the learned part stays as trained. The pipe gets a new model id (encode stored collections
    again), and its thresholds, tuned at the old weight, are only kept inside the new score
    range: tune them again on dev pairs (`pipe.score(examples, tune_threshold=True)`), as
    `calibrate --lexical-weight` does."""
    pipe = get_similarity_pipe(nlp, name, initialized=True)
    _hybrid_head(pipe)
    blocks = [
        block
        for block in _config_blocks(nlp.get_pipe_config(name))
        if block.get("@architectures") == HYBRID_ARCHITECTURE
    ]
    if len(blocks) != 1:
        raise ValueError(
            f"The '{name}' pipe's config has {len(blocks)} {HYBRID_ARCHITECTURE} blocks, not one: it cannot be set."
        )
    pipe._mix_lexical_part(weight)  # checks the weight before it changes anything
    blocks[0]["weight"] = float(weight)


def get_lexical_weight(nlp: Language, *, name: str = PIPE_NAME) -> float:
    """The weight of a `HybridSimilarity.v1` pipe's lexical (TF-IDF) part in its scores."""
    pipe = get_similarity_pipe(nlp, name)
    _hybrid_head(pipe)  # a ValueError naming the similarity of a pipe that is not hybrid
    return cast(float, pipe.lexical_weight)


def _hybrid_head(pipe: SiameseSimilarity) -> Model:
    """The pipe's `HybridSimilarity.v1` layer, or a ValueError naming its similarity."""
    head = predicting_head(pipe.comparison)
    if not is_hybrid_similarity(head):
        raise ValueError(
            f"The '{pipe.name}' pipe's similarity is {head.name}, not {HYBRID_ARCHITECTURE}: it has no lexical weight."
        )
    return head


def _config_blocks(block: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """`block` and every block nested in it."""
    yield block
    for value in block.values():
        if isinstance(value, dict):
            yield from _config_blocks(value)
