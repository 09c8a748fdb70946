"""The `similarity_classifier` pipe: few-shot classification by learned similarity to exemplars."""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import minibatch

from .component import SiameseSimilarity, get_similarity_pipe
from .pairwise import score_tile

RULES = ("mean", "max", "centroid")
BATCH_SIZE = 64


@Language.factory(
    "similarity_classifier",
    assigns=["doc.cats"],
    requires=["doc.user_data"],
    default_config={
        "similarity_pipe": "siamese_similarity",
        "exemplars": {},
        "rule": "mean",
        "normalize": False,
        "scorer": {"@scorers": "spacy.textcat_scorer.v2"},
    },
    default_score_weights={"cats_score": 1.0, "cats_macro_auc": 0.0, "cats_micro_f": 0.0, "cats_macro_f": 0.0},
)
def make_similarity_classifier(
    nlp: Language,
    name: str,
    similarity_pipe: str,
    exemplars: Dict[str, List[str]],
    rule: str,
    normalize: bool,
    scorer: Optional[Callable],
) -> "SimilarityClassifier":
    return SimilarityClassifier(
        nlp, name, similarity_pipe=similarity_pipe, exemplars=exemplars, rule=rule, normalize=normalize, scorer=scorer
    )


class SimilarityClassifier(Pipe):
    """Set `doc.cats` from the doc's similarity (by the pipe `similarity_pipe`) to each label's exemplar texts. `rule`:
    "mean", "max" (nearest exemplar) or "centroid" (mean exemplar vector). With `normalize`, a doc's scores are shifted
    to the bottom of the similarity's range and sum to 1. Exemplars are saved as texts and re-encoded when used."""

    def __init__(
        self,
        nlp: Language,
        name: str = "similarity_classifier",
        *,
        similarity_pipe: str = "siamese_similarity",
        exemplars: Optional[Dict[str, List[str]]] = None,
        rule: str = "mean",
        normalize: bool = False,
        scorer: Optional[Callable] = None,
    ) -> None:
        if rule not in RULES:
            raise ValueError(f"similarity_classifier: rule must be one of {', '.join(map(repr, RULES))}, got {rule!r}")
        self.nlp = nlp
        self.vocab = nlp.vocab
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {"similarity_pipe": similarity_pipe, "rule": rule, "normalize": bool(normalize)}
        self.exemplars: Dict[str, List[str]] = {}
        self._cache: Optional[Tuple[Tuple[str, bool], Dict[str, numpy.ndarray]]] = None
        for label, texts in (exemplars or {}).items():
            self.add_exemplars(label, texts)

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.exemplars)

    def add_exemplars(self, label: str, texts: Iterable[str]) -> None:
        """Add exemplar texts for a label (a new label or more texts for a known one)."""
        if isinstance(texts, str):
            raise ValueError(
                f"similarity_classifier: label {label!r} needs a list of texts, not one string: [{texts[:60]!r}]"
            )
        texts = list(texts)
        if not isinstance(label, str) or not label:
            raise ValueError(f"similarity_classifier: a label must be a non-empty string, got {label!r}")
        if not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"similarity_classifier: label {label!r} needs one or more exemplar texts (strings)")
        self.exemplars.setdefault(label, []).extend(texts)
        self._cache = None

    def initialize(
        self,
        get_examples: Optional[Callable[[], Iterable[Example]]] = None,
        *,
        nlp: Optional[Language] = None,
        exemplars: Optional[Dict[str, List[str]]] = None,
    ) -> None:
        """Add exemplars given in `[initialize.components.<name>]`; nothing is trained."""
        for label, texts in (exemplars or {}).items():
            self.add_exemplars(label, texts)

    # -- applying -------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations([doc], self.predict([doc]))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = BATCH_SIZE) -> Iterator[Doc]:
        for docs in minibatch(stream, size=batch_size):
            self.set_annotations(docs, self.predict(docs))
            yield from docs

    def predict(self, docs: Sequence[Doc]) -> numpy.ndarray:
        """Label scores: (n_docs, n_labels), in the order of `labels`."""
        similarity = self.similarity
        label_vectors = self._label_vectors(similarity)
        scores = numpy.zeros((len(docs), len(self.labels)), dtype="float32")
        if not len(docs):
            return scores
        vectors = similarity.vectors(list(docs))
        for j, label in enumerate(self.labels):
            sims = score_tile(similarity.compare, vectors, label_vectors[label])
            scores[:, j] = sims.max(axis=1) if self.cfg["rule"] == "max" else sims.mean(axis=1)
        if self.cfg["normalize"]:
            shifted = scores - similarity.score_range[0]
            totals = shifted.sum(axis=1, keepdims=True)
            scores = numpy.where(totals > 0, shifted / numpy.where(totals > 0, totals, 1.0), 1.0 / len(self.labels))
        return scores

    def set_annotations(self, docs: Iterable[Doc], scores: numpy.ndarray) -> None:
        for doc, row in zip(docs, scores):
            doc.cats = {label: float(score) for label, score in zip(self.labels, row)}

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """spaCy's textcat metrics on `doc.cats`, over this pipe's labels."""
        examples = list(examples)
        validate_examples(examples, "SimilarityClassifier.score")
        if self.scorer is None:
            return {}
        return self.scorer(examples, **{"labels": self.labels, **kwargs})

    # -- the similarity pipe and the exemplar vectors --------------------------

    @property
    def similarity(self) -> SiameseSimilarity:
        """The `siamese_similarity` pipe this classifier compares with."""
        try:
            return get_similarity_pipe(self.nlp, self.cfg["similarity_pipe"])
        except ValueError as err:
            raise ValueError(
                f"The '{self.name}' pipe compares docs with its similarity_pipe: {err} Add a trained "
                "siamese_similarity pipe, or set similarity_pipe to its name."
            ) from None

    def _label_vectors(self, similarity: SiameseSimilarity) -> Dict[str, numpy.ndarray]:
        """Each label's exemplar vectors (one row for the centroid rule), cached per model id and
        per whether the rule is the centroid (`cfg["rule"]` may change between calls)."""
        if not self.exemplars:
            raise ValueError(
                f"The '{self.name}' pipe has no exemplars: give them in its config (exemplars = "
                '{"label": ["text", ...]}) or call add_exemplars(label, texts) before using it.'
            )
        key = (similarity._require_initialized(), self.cfg["rule"] == "centroid")
        if self._cache is None or self._cache[0] != key:
            vectors = {}
            for label, texts in self.exemplars.items():
                docs = [similarity._words_doc(self.nlp.make_doc(text)) for text in texts]
                vectors[label] = numpy.asarray(similarity.model.ops.to_numpy(similarity.predict(docs)), dtype="f")
                if key[1]:
                    vectors[label] = vectors[label].mean(axis=0, keepdims=True)
            self._cache = (key, vectors)
        return self._cache[1]

    # -- serialization --------------------------------------------------------

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        return srsly.msgpack_dumps({"cfg": self.cfg, "exemplars": self.exemplars})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()) -> "SimilarityClassifier":
        try:
            data = srsly.msgpack_loads(bytes_data)
        except ValueError as e:
            raise ValueError(f"The '{self.name}' pipe's saved bytes are damaged: not valid msgpack ({e}).") from None
        if not isinstance(data, dict):
            raise ValueError(f"The '{self.name}' pipe's saved bytes are damaged: no cfg and exemplars.")
        self._load(data.get("cfg"), data.get("exemplars"), cfg_at="bytes", exemplars_at="bytes")
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        srsly.write_json(path / "exemplars.json", self.exemplars)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> "SimilarityClassifier":
        path = Path(path)
        cfg_file, exemplars_file = path / "cfg", path / "exemplars.json"
        for part in (cfg_file, exemplars_file):
            if not part.exists():
                raise ValueError(f"The '{self.name}' pipe's directory {path} has no file '{part.name}'.")
        cfg, exemplars = self._read_json(cfg_file), self._read_json(exemplars_file)
        self._load(cfg, exemplars, cfg_at=str(cfg_file), exemplars_at=str(exemplars_file))
        return self

    def _read_json(self, path: Path) -> Any:
        try:
            return srsly.read_json(path)
        except ValueError as e:  # UnicodeDecodeError included
            raise ValueError(f"The '{self.name}' pipe's saved file {path} is damaged: not valid JSON ({e}).") from None

    def _load(self, cfg: Any, exemplars: Any, *, cfg_at: str, exemplars_at: str) -> None:
        """Take saved settings and exemplars. A damaged part raises naming where it was read from
        (`cfg_at`, `exemplars_at`: a file or "bytes") and leaves the pipe as it was."""
        if not isinstance(cfg, dict) or cfg.get("rule") not in RULES:
            raise ValueError(
                f"The '{self.name}' pipe's saved cfg ({cfg_at}) is damaged: no valid rule ({', '.join(RULES)})."
            )
        if not isinstance(exemplars, dict):
            raise ValueError(
                f"The '{self.name}' pipe's saved exemplars ({exemplars_at}) are damaged: not a mapping of labels "
                "to texts."
            )
        old = self.exemplars
        self.exemplars = {}
        try:
            for label, texts in exemplars.items():
                self.add_exemplars(label, texts)
        except ValueError as e:
            self.exemplars = old
            raise ValueError(f"The '{self.name}' pipe's saved exemplars ({exemplars_at}) are damaged: {e}") from None
        self.cfg.update(cfg)
        self._cache = None
