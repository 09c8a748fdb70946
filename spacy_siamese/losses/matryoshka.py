from typing import Any, Callable, Tuple

from thinc.api import Model, get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import Loss

# The methods of a wrapped loss that the pipe calls to get a batch's loss; each result is wrapped again.
BATCH_LOSSES = ("for_dataset", "for_texts")


class MatryoshkaLoss:
    """A loss on each block of MatryoshkaScores.v1's training output: the whole vectors' columns
    and then those of each cut (`prefixes` of them, the length of the layer's `dims`), the cuts'
    losses and gradients times `weight`, summed (Kusupati et al. 2022). `loss` is any pair loss
    of the pipe, DatasetLosses.v1 and in-batch negatives included, and sees one block at a time."""

    def __init__(self, loss: Loss, *, prefixes: int, weight: float = 1.0) -> None:
        if not callable(loss):
            raise ValueError(f"MatryoshkaLoss: `loss` is not a loss function: {loss!r}")
        if isinstance(prefixes, bool) or not isinstance(prefixes, int) or prefixes < 1:
            raise ValueError(f"MatryoshkaLoss: prefixes must be an integer >= 1, got {prefixes!r}")
        if not weight >= 0:
            raise ValueError(f"MatryoshkaLoss: weight must be >= 0, got {weight}")
        self.loss = loss
        self.prefixes = prefixes
        self.weight = float(weight)

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        blocks = self.prefixes + 1
        if scores.ndim != 2 or scores.shape[1] % blocks:
            raise ValueError(
                f"MatryoshkaLoss: got scores of shape {scores.shape}, not {blocks} equal blocks of columns: wrap "
                f"the comparison in spacy-siamese.MatryoshkaScores.v1 with {self.prefixes} dims"
            )
        k = scores.shape[1] // blocks
        d = xp.zeros_like(scores)
        total = 0.0
        for i in range(blocks):
            d_block, loss = self.loss(xp.ascontiguousarray(scores[:, i * k : (i + 1) * k]), truths)
            weight = 1.0 if i == 0 else self.weight
            d[:, i * k : (i + 1) * k] = weight * d_block
            total += weight * float(loss)
        return d, total

    def __getattr__(self, name: str) -> Any:
        """The wrapped loss's `for_dataset` and `for_texts` (wrapped again) and `check_datasets`,
        where it has them: the pipe asks for these with hasattr."""
        if "loss" not in self.__dict__ or name not in (*BATCH_LOSSES, "check_datasets"):
            raise AttributeError(name)
        method = getattr(self.__dict__["loss"], name)
        if name == "check_datasets":
            return method

        def wrapped(*args: Any, **kwargs: Any) -> "MatryoshkaLoss":
            return MatryoshkaLoss(method(*args, **kwargs), prefixes=self.prefixes, weight=self.weight)

        return wrapped


def check_matryoshka(model: Model, loss: Any) -> None:
    """Refuse a model with MatryoshkaScores.v1 whose loss is not a MatryoshkaLoss.v1 with one prefix a cut, and a
    MatryoshkaLoss.v1 without the layer: either way the loss would read the wrong score columns."""
    layer = next((node for node in model.walk() if node.name == "matryoshka_scores"), None)
    if layer is None and not isinstance(loss, MatryoshkaLoss):
        return
    if layer is None:
        raise ValueError(
            "MatryoshkaLoss.v1 needs the comparison wrapped in spacy-siamese.MatryoshkaScores.v1, which scores the cuts"
        )
    dims = layer.attrs["dims"]
    if not isinstance(loss, MatryoshkaLoss) or loss.prefixes != len(dims):
        got = f"prefixes = {loss.prefixes}" if isinstance(loss, MatryoshkaLoss) else type(loss).__name__
        raise ValueError(
            f"MatryoshkaScores.v1 scores {len(dims)} cuts ({dims}) in training: the pipe's loss must be "
            f"spacy-siamese.MatryoshkaLoss.v1 with prefixes = {len(dims)}, got {got}"
        )


@registry.losses("spacy-siamese.MatryoshkaLoss.v1")
def make_matryoshka_loss(*, loss: Callable, prefixes: int, weight: float = 1.0) -> MatryoshkaLoss:
    """`MatryoshkaLoss`: `loss` on the whole vectors' scores and on each of `prefixes` cuts (times `weight`)."""
    return MatryoshkaLoss(loss, prefixes=prefixes, weight=weight)
