from typing import Callable, List, Sequence, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .auxiliary import init_heads

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.MatryoshkaScores.v1")
def matryoshka_scores(*, comparison: Model[InT, Floats2d], dims: Sequence[int]) -> Model[InT, Floats2d]:
    """Matryoshka representation learning (Kusupati et al. 2022): in training, the comparison's
    columns for the whole vectors, then the same for the first d columns of each vector, for each
    d in `dims`, side by side (for spacy-siamese.MatryoshkaLoss.v1); at prediction the
    comparison's score of the whole vectors, unchanged. So a vector cut to its first d columns
    (`encode --dims`, `dedupe --dims`) keeps most of what the whole one scores. The comparison
    must have no weights over the vector's columns (cosine or dot similarity, in
    WithInBatchScores.v1 or not)."""
    dims = [int(d) for d in dims]
    if not dims or any(d < 1 for d in dims) or sorted(set(dims)) != dims:
        raise ValueError(f"MatryoshkaScores: dims must be increasing widths >= 1, got {dims}")
    weighted = sorted({node.name for node in comparison.walk() if node.param_names})
    if weighted:
        raise ValueError(
            f"MatryoshkaScores: the comparison has weights ({', '.join(weighted)}), which a cut vector cannot "
            "share: use spacy-siamese.CosineSimilarity.v1 or DotSimilarity.v1"
        )
    return Model(
        "matryoshka_scores",
        forward,
        init=init_heads,
        layers=[comparison],
        refs={"comparison": comparison},
        dims={"nI": None, "nO": 1},
        attrs={"dims": dims},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    comparison = model.get_ref("comparison")
    if not is_train:
        return comparison(X, is_train)
    xp = model.ops.xp
    A, B = X
    dims: List[int] = model.attrs["dims"]
    if dims[-1] >= A.shape[1]:
        raise ValueError(f"MatryoshkaScores: dims {dims} must be below the vectors' width {A.shape[1]}")
    Y, backprop_whole = comparison(X, is_train)
    blocks = [Y]
    backprops = []
    for d in dims:
        Y_cut, backprop_cut = comparison((xp.ascontiguousarray(A[:, :d]), xp.ascontiguousarray(B[:, :d])), is_train)
        blocks.append(Y_cut)
        backprops.append(backprop_cut)
    k = Y.shape[1]

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_whole(xp.ascontiguousarray(dY[:, :k]))
        dA, dB = dA.copy(), dB.copy()
        for i, (d, backprop_cut) in enumerate(zip(dims, backprops), start=1):
            dA_cut, dB_cut = backprop_cut(xp.ascontiguousarray(dY[:, i * k : (i + 1) * k]))
            dA[:, :d] += dA_cut
            dB[:, :d] += dB_cut
        return dA, dB

    return xp.hstack(blocks), backprop
