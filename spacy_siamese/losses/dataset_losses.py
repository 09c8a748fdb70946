from typing import Any, Callable, Collection, Dict, Mapping, Optional, Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ..validation import check_dataset_name
from ._util import Loss, in_batch_columns


class DatasetLosses:
    """Pick a batch's loss by its dataset (MultiPairCorpus.v1, batch_by_dataset.v1):
    `for_dataset(name)` is `losses[name]`, else `default`; neither, or a name in `losses` that
    the corpus lacks (`check_datasets`), is an error. A loss without `uses_in_batch_scores`
    gets the pair columns only, and the in-batch columns a zero gradient."""

    def __init__(self, losses: Mapping[str, Loss], default: Optional[Loss] = None) -> None:
        for name, loss in losses.items():
            check_dataset_name(name)
            if not callable(loss):
                raise ValueError(f"DatasetLosses: the loss for dataset '{name}' is not a loss function: {loss!r}")
        if not losses and default is None:
            raise ValueError("DatasetLosses: give a loss for at least one dataset, or a default loss.")
        self.losses: Dict[str, Loss] = dict(losses)
        self.default = default

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        """The default loss, for pairs of no dataset (the pipe calls `for_dataset` instead)."""
        return self.for_dataset(None)(scores, truths)

    def for_dataset(self, name: Optional[str], *, in_batch: bool = False) -> Loss:
        """The loss for a batch of dataset `name` (None: untagged pairs); `in_batch`: scores with in-batch columns."""
        loss = self.default if name is None else self.losses.get(name, self.default)
        if loss is None:
            got = f"dataset '{name}'" if name is not None else "pairs without a dataset tag"
            raise ValueError(
                f"DatasetLosses has no loss for {got} and no default loss: add one under "
                f"loss.losses.{name or 'NAME'} or set loss.default (losses for: {', '.join(sorted(self.losses))})."
            )
        if in_batch and not getattr(loss, "uses_in_batch_scores", False):
            return PairColumns(loss)
        return loss

    def check_datasets(self, names: Collection[Optional[str]]) -> None:
        """Raise for a loss name that is not one of the training corpus's datasets `names`, and
        for a dataset (or untagged pairs) with no loss."""
        known = sorted(name for name in names if name is not None)
        unknown = sorted(set(self.losses) - set(known))
        if unknown:
            raise ValueError(
                f"DatasetLosses names dataset(s) {', '.join(repr(n) for n in unknown)} that the training "
                f"corpus does not have (its datasets: {', '.join(known) or 'none, its pairs are untagged'})."
            )
        for name in names:
            self.for_dataset(name)


class PairColumns:
    """A pair loss on the pair columns of WithInBatchScores.v1's output; the in-batch columns get a zero gradient."""

    def __init__(self, loss: Loss) -> None:
        self.loss = loss

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        pair_scores, _ = in_batch_columns(scores, len(truths), type(self.loss).__name__)
        d_pair, loss = self.loss(pair_scores, truths)
        d = get_array_module(scores).zeros_like(scores)
        d[:, : pair_scores.shape[1]] = d_pair
        return d, loss


@registry.losses("spacy-siamese.DatasetLosses.v1")
def make_dataset_losses(*, losses: Dict[str, Any], default: Optional[Callable] = None) -> DatasetLosses:
    """A loss per dataset (`DatasetLosses`): `losses` by dataset name, `default` for the others."""
    # losses: name -> loss; Any, as confection does not check registered functions inside a dict
    return DatasetLosses(losses, default)
