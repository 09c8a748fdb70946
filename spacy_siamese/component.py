"""The `siamese_similarity` pipe: learns a doc vector and a comparison from labelled pairs."""

import math
import uuid
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

import numpy
import spacy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from . import hooks, tuning
from .encoding import Encoding, WeakPipeline
from .identity import reads_static_vectors
from .labelled import get_doc_labels, is_labelled_doc, same_label_matrix
from .layers.heads import predicting_head
from .layers.in_batch import cross_scores
from .layers.no_tokens import encode_docs
from .losses.matryoshka import check_matryoshka
from .pair_examples import get_dataset, get_label, is_pair_example, partner_text, split_pairs
from .scoring import binary_pairs, score_pairs
from .tuning import PairScores
from .util import token_batches
from .validation import DEDUPE_PRECISION, check_settings, check_sizes
from .vectors import store_vector

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
PREDICT_TOKENS = 8192  # tokens per batch the encoder runs on at once (a longer doc runs alone)


class Verdict(NamedTuple):
    """A pair's score, the decision threshold it was judged at, and whether it reaches it."""

    score: float
    threshold: float
    duplicate: bool

    @classmethod
    def of(cls, score: float, threshold: float) -> "Verdict":
        """The verdict on a score: a duplicate from the threshold on."""
        return cls(score, threshold, score >= threshold)


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
    pipe.pipeline = WeakPipeline(nlp)  # for `encode` of texts; weak: the nlp owns the pipe
    return pipe


class SiameseSimilarity(Encoding, TrainablePipe):
    """Store a learned vector on each doc and hook `doc/span/token.similarity` and `doc/span.vector` to answer with the
    trained model (scores clipped to `score_range`; vectors of one `model_id` are never read through another). Trains on
    labelled pairs or labelled docs. With `tune_threshold`, dev figures are reported at thresholds tuned on the dev
    pairs, which `tune_thresholds` (callback or `calibrate`) stores; `verdict` judges a pair at the stored one."""

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
        check_matryoshka(model, loss)

    @property
    def threshold(self) -> float:
        return float(self.cfg["threshold"])

    def verdict(self, doc1: Doc, doc2: Doc, *, threshold: Optional[float] = None) -> Verdict:
        """The pair's score and whether it reaches `threshold` (default: the pipe's `threshold`,
        tuned on dev pairs in training): a duplicate, a paraphrase, a match as the pipe was trained."""
        return Verdict.of(self.similarity(doc1, doc2), self.threshold if threshold is None else float(threshold))

    def is_duplicate(self, doc1: Doc, doc2: Doc, *, threshold: Optional[float] = None) -> bool:
        """Whether the pair's score reaches `threshold` (default: the pipe's `threshold`)."""
        return self.verdict(doc1, doc2, threshold=threshold).duplicate

    @property
    def dedupe_threshold(self) -> Optional[float]:
        """The score from which two texts count as duplicates: the lowest threshold with
        `dedupe_precision` on the dev pairs, or None (`calibrate_dedupe_threshold` sets it)."""
        value = self.cfg.get("dedupe_threshold")
        return None if value is None else float(value)

    # -- applying the model ---------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        """Encode docs into one learned vector each: (n_docs, width)."""
        self._require_initialized()
        docs = [self._own_doc(doc) for doc in docs]
        if not docs:
            return self.model.ops.alloc2f(0, self.encoder.get_dim("nO"))
        # long docs are encoded a few at a time: the activations grow with a batch's tokens
        parts = [self._encode(batch) for batch in token_batches(docs, PREDICT_TOKENS)]
        return self.check_finite(parts[0] if len(parts) == 1 else self.model.ops.xp.vstack(parts))

    def check_finite(self, vectors: Floats2d) -> Floats2d:
        """The encoder's vectors, or a ValueError if any is not finite."""
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
        for doc, vector in zip(docs, numpy.asarray(self.model.ops.to_numpy(vectors), dtype="float32")):
            store_vector(doc, model_id, vector)
            hooks.install_hooks(doc, model_id)

    # -- training -------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "SiameseSimilarity.update")
        if not examples:
            return losses
        self._require_initialized()
        update = self._update_labelled if any(is_labelled_doc(eg) for eg in examples) else self._update_pairs
        loss = update(examples, drop=drop)
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
        batch = f"a batch of {len(examples)} pairs (first: {examples[0].predicted.text[:60]!r})"
        advice = "Check the labels and the loss settings, or lower the learning rate."
        self._check_loss(float(loss), d_scores, batch, advice)
        backprop(d_scores)
        return float(loss)

    def _update_labelled(self, examples: List[Example], *, drop: float) -> float:
        """Forward and backward pass on labelled docs: all pairs scored by the head, triplets mined by the loss."""
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
        """The loss for a batch of pairs: the pipe's loss, or the batch's dataset's (`DatasetLosses.v1`),
        given the batch's texts if it reads them (`for_texts`)."""
        loss = self.loss
        if hasattr(loss, "for_dataset"):
            names = sorted({get_dataset(eg) or "" for eg in examples})
            if len(names) > 1:
                shown = ", ".join(name or "(untagged)" for name in names)
                raise ValueError(
                    f"The '{self.name}' pipe got a batch that mixes pairs of datasets {shown}; its per-dataset "
                    "losses need one dataset per batch: batch with spacy-siamese.batch_by_dataset.v1."
                )
            in_batch = any(node.name == "with_in_batch_scores" for node in self.comparison.walk())
            loss = loss.for_dataset(names[0] or None, in_batch=in_batch)
        if hasattr(loss, "for_texts"):
            return loss.for_texts([eg.predicted.text for eg in examples], [partner_text(eg) for eg in examples])
        return loss

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
        """Initialize from a sample of pairs (or docs), or every pair for a `fit_on_corpus` encoder. `init_weights`: a
        trained pipeline with a pipe of this name and architecture, whose weights, fitted vocabulary and thresholds are
        the initial ones."""
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
            where = f"init_weights = {str(init_weights)!r}"
            if not (Path(init_weights) / "config.cfg").is_file():
                raise ValueError(f"{where}: no trained pipeline there (no config.cfg).")
            self.load_weights(get_similarity_pipe(spacy.load(init_weights), self.name), where)
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

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Pair metrics at the stored threshold, or at the one tuned on the 0/1 pairs (a pipe in
        training with `tune_threshold`). Changes nothing; `tune_thresholds` stores thresholds."""
        tune = kwargs.pop("tune_threshold", None)
        pair_scores = kwargs.pop("pair_scores", None) or self.pair_scores
        examples = list(examples)
        validate_examples(examples, "SiameseSimilarity.score")
        if examples and not any(is_pair_example(eg) for eg in examples):
            return {}  # e.g. text classification examples for another pipe of the pipeline
        scores, labels = pair_scores(examples)
        if tune is None:
            tune = self.cfg["tune_threshold"] and self._trained
        threshold = self.threshold
        binary = binary_pairs(examples, labels)
        if tune and binary.any():
            threshold = tuning.tuned_thresholds(self, scores[binary], labels[binary])[0]
        return self.scorer(examples, pair_scores=lambda _: (scores, labels), threshold=threshold, **kwargs)

    def tune_thresholds(
        self, examples: Iterable[Example], *, pair_scores: Optional[PairScores] = None
    ) -> Dict[str, Any]:
        """Set the decision threshold (the accuracy-maximising one) and `dedupe_threshold` from the
        0/1 pairs of `examples` (graded ones leave them), and return the pair metrics at them."""
        examples = list(examples)
        scores, labels = (pair_scores or self.pair_scores)(examples)
        binary = binary_pairs(examples, labels)
        if binary.any():
            self.cfg["threshold"], self.cfg["dedupe_threshold"] = tuning.tuned_thresholds(
                self, scores[binary], labels[binary]
            )
        return self.score(examples, tune_threshold=False, pair_scores=lambda _: (scores, labels))

    def calibrate_dedupe_threshold(
        self,
        examples: Iterable[Example],
        *,
        precision: Optional[float] = None,
        pair_scores: Optional[PairScores] = None,
    ) -> Optional[float]:
        """Set (and return) `dedupe_threshold` from labelled pairs: the lowest threshold whose precision
        on them is at least `precision` (default and then setting: `dedupe_precision`)."""
        tuning.calibrate_dedupe_threshold(self, pair_scores or self.pair_scores, list(examples), precision=precision)
        return self.dedupe_threshold

    @property
    def lexical_weight(self) -> Optional[float]:
        """The weight of a `HybridSimilarity.v1` pipe's lexical part in its scores (else None)."""
        return tuning.lexical_weight(self)


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
        pipe._require_initialized()
    return pipe


def set_lexical_weight(nlp: Language, weight: float, *, name: str = PIPE_NAME) -> None:
    """Set a trained hybrid pipe's lexical weight (in the pipe and its config): a new model id,
    thresholds only clipped to the new range (tune them again)."""
    pipe = get_similarity_pipe(nlp, name, initialized=True)
    tuning.hybrid_head(pipe)
    block = tuning.hybrid_config_block(nlp.get_pipe_config(name), name=name)
    tuning.mix_lexical_part(pipe, weight)  # checks the weight before it changes anything
    block["weight"] = float(weight)


def get_lexical_weight(nlp: Language, *, name: str = PIPE_NAME) -> float:
    """The weight of a `HybridSimilarity.v1` pipe's lexical (TF-IDF) part in its scores."""
    return float(tuning.hybrid_head(get_similarity_pipe(nlp, name)).attrs["weight"])
