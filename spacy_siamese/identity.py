"""The model id of a siamese_similarity pipe: one per set of weights (renewed when they change),
tagging the vectors they made, checked when loaded."""

import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.pipeline.pipe import deserialize_config
from spacy.vocab import Vocab
from srsly.msgpack.exceptions import UnpackException
from thinc.api import Model, Optimizer

from . import hooks
from .layers.heads import score_range
from .tuning import keeping_lexical_weight
from .validation import check_settings

# What a damaged or half-written model directory raises while loading.
LOAD_ERRORS = (ValueError, KeyError, OSError, EOFError, TypeError, IndexError, AttributeError, UnpackException)
# What Thinc raises when saved weights have other sizes or another number of layers.
THINC_MISMATCH = ("Attempt to change dimension", "mismatched structure")
# What to do about a saved pipe of another architecture.
RELOAD_ADVICE = "Load it with the config it was saved with (spacy.load without config overrides)."


class ModelIdentity:
    """Mixin for the pipe: `model_id` lifecycle, saving and validated loading (`from_disk`,
    `from_bytes`, and `load_weights` for `init_weights`), which keeps a hybrid's lexical weight
    at the config's (`tuning.keeping_lexical_weight`)."""

    name: str
    model: Model
    vocab: Vocab
    cfg: Dict[str, Any]
    _trained = False  # updated since it was initialized or loaded

    @property
    def model_id(self) -> Optional[str]:
        """The id of the current weights."""
        return self.cfg["model_id"]

    @property
    def score_range(self) -> Tuple[float, float]:
        """The range of the pipe's scores, from its comparison as it is now (`heads.score_range`)."""
        return score_range(self.model.get_ref("comparison"))

    def finish_update(self, sgd: Optimizer) -> None:
        self._trained = True
        super().finish_update(sgd)  # type: ignore[misc]
        self.mark_changed()

    def mark_changed(self) -> None:
        """The weights were changed (updated, averaged): a new id."""
        if self.cfg["model_id"] is not None:
            self._set_model_id(uuid.uuid4().hex)

    def use_params(self, params: dict) -> Iterator[None]:
        """Use other weights (e.g. averages) inside the block, under their own model id."""
        saved = self.model_id
        with self.model.use_params(params):
            self.mark_changed()
            try:
                yield
            finally:
                if saved is not None:
                    self._set_model_id(saved)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> Any:
        path = Path(path)
        if "cfg" not in exclude and not (path / "cfg").exists():
            raise ValueError(
                f"{path / 'cfg'} is missing: {path} is not a complete saved '{self.name}' pipe "
                "(saving was interrupted, or files were removed). Save the pipeline again."
            )
        old_id = self.cfg["model_id"]
        layers = layer_names(self.model)
        # The parts TrainablePipe.from_disk reads, in its order, read one by one to name the one that fails.
        readers: Dict[str, Callable[[Path], Any]] = {
            "cfg": lambda p: self.cfg.update(deserialize_config(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": lambda p: self.model.from_bytes(p.read_bytes()),
        }
        with keeping_lexical_weight(self), self._unchanged_on_error(exclude):
            for part, read in readers.items():
                if part in exclude:
                    continue
                try:
                    read(path / part)
                except LOAD_ERRORS as e:
                    check_architecture(self.model, layers, f"The '{self.name}' pipe saved at {path}", error=e)
                    raise ValueError(
                        f"Could not load the '{self.name}' pipe from {path / part} ({type(e).__name__}: {e}). It "
                        "looks incomplete or damaged, e.g. written by a training run that was interrupted while "
                        "saving: load another checkpoint (model-best) or save the pipeline again."
                    ) from e
            check_architecture(self.model, layers, f"The '{self.name}' pipe saved at {path}")
            self._loaded(old_id, where=str(path / "cfg"))
        return self

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()) -> Any:
        old_id = self.cfg["model_id"]
        layers = layer_names(self.model)
        with keeping_lexical_weight(self), self._unchanged_on_error(exclude):
            try:
                super().from_bytes(bytes_data, exclude=exclude)  # type: ignore[misc]
            except LOAD_ERRORS as e:
                check_architecture(self.model, layers, f"The '{self.name}' pipe's bytes", error=e)
                raise ValueError(f"Could not load the '{self.name}' pipe from bytes ({type(e).__name__}: {e}).") from e
            check_architecture(self.model, layers, f"The '{self.name}' pipe's bytes")
            self._loaded(old_id, where=f"The '{self.name}' pipe's saved cfg")
        return self

    def load_weights(self, source: "ModelIdentity", where: str) -> None:
        """The weights and thresholds of `source`, a pipe of the same architecture (`init_weights`):
        its dimensions, weights and fitted TF-IDF vocabulary, as spacy.load sets them."""
        if reads_static_vectors(self.model):
            mine, theirs = self.vocab.vectors.shape, source.vocab.vectors.shape
            if mine != theirs:
                raise ValueError(
                    f"{where}: its word vectors have shape {theirs}, this pipeline's {mine}: "
                    "initialize with the same vectors (e.g. --paths.vectors)."
                )
        layers = layer_names(self.model)
        with keeping_lexical_weight(self), self._unchanged_on_error(exclude=["vocab"]):
            try:
                self.model.from_bytes(source.model.to_bytes())
            except (ValueError, KeyError) as err:
                raise ValueError(
                    f"{where}: its '{self.name}' pipe has another architecture than this one ({err})."
                ) from None
            advice = "Train from a pipe with this config's model."
            check_architecture(self.model, layers, f"{where}: its '{self.name}' pipe", advice=advice)
            self.cfg["threshold"] = float(source.cfg["threshold"])
            dedupe = source.cfg.get("dedupe_threshold")
            self.cfg["dedupe_threshold"] = None if dedupe is None else float(dedupe)

    @contextmanager
    def _unchanged_on_error(self, exclude: Iterable[str] = ()) -> Iterator[None]:
        """Put the settings, weights and (unless excluded) vocab back when the block raises: a load
        that fails leaves the pipe as it was, not half-loaded."""
        cfg = dict(self.cfg)
        weights = self.model.to_bytes()
        vocab = None if "vocab" in exclude else self.vocab.to_bytes()
        try:
            yield
        except BaseException:
            self.cfg.clear()
            self.cfg.update(cfg)
            self.model.from_bytes(weights)
            if vocab is not None:
                self.vocab.from_bytes(vocab)
            raise

    def _loaded(self, old_id: Optional[str], *, where: str) -> None:
        check_settings(self.cfg, where=where, scores=self.score_range, saved=True)
        if old_id is not None and old_id != self.cfg["model_id"]:
            hooks.unregister_pipe(old_id, self)  # type: ignore[arg-type]
        hooks.register_pipe(self.cfg["model_id"], self)  # type: ignore[arg-type]
        self._trained = False

    def _require_initialized(self) -> str:
        if self.cfg["model_id"] is None:
            raise ValueError(
                f"The '{self.name}' pipe is not initialized: train it (spacy train) or call "
                "nlp.initialize(get_examples) with labelled pairs before using it."
            )
        return self.cfg["model_id"]

    def _set_model_id(self, model_id: str) -> None:
        if self.cfg["model_id"] is not None:
            hooks.unregister_pipe(self.cfg["model_id"], self)  # type: ignore[arg-type]
        self.cfg["model_id"] = model_id
        hooks.register_pipe(model_id, self)  # type: ignore[arg-type]


def layer_names(model: Model) -> List[str]:
    """The names of a model's layers, in `walk` order: what a saved model must match to load."""
    return [node.name for node in model.walk()]


def reads_static_vectors(model: Model) -> bool:
    """Whether the model reads the pipeline's word vectors: its weights fit those vectors."""
    return "static_vectors" in layer_names(model)


def check_architecture(
    model: Model, layers: List[str], saved: str, *, error: Optional[Exception] = None, advice: str = RELOAD_ADVICE
) -> None:
    """Raise a ValueError naming `saved` when the weights just loaded into `model` (whose layers
    were `layers`) come from another architecture, which Thinc would load under new names."""
    loaded = layer_names(model)
    if loaded != layers:
        i = next((i for i, (a, b) in enumerate(zip(loaded, layers)) if a != b), min(len(loaded), len(layers)) - 1)
        raise ValueError(
            f"{saved} has another architecture than this pipe's config: a layer is '{loaded[i][:80]}' there, "
            f"'{layers[i][:80]}' here. {advice}"
        )
    if error is not None and any(text in str(error) for text in THINC_MISMATCH):
        raise ValueError(f"{saved} has another architecture or other sizes than this pipe's config ({error}). {advice}")
