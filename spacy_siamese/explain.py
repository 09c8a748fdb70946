"""Explain a pair's score: which tokens of each text raised or lowered it (exact term
contributions for TWEAK and S2Net, Shapley values of the tokens otherwise)."""

import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy
from scipy.sparse import csr_matrix
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch
from thinc.api import Model

from .component import PIPE_NAME, get_similarity_pipe
from .defaults import EXPLAIN_METHODS as METHODS
from .defaults import SAMPLES
from .encoding import BATCH_SIZE
from .layers.hashed_tfidf import hash_columns
from .layers.heads import predicting_head
from .layers.hybrid import is_hybrid_similarity
from .layers.tfidf import TERM_ATTRS
from .layers.tweak import feature_weights, term_features, term_weights

# Up to this many tokens a text's Shapley values are computed over all subsets (2**n docs);
# above it, from `samples` random permutations (n docs each).
EXACT_SHAPLEY_TOKENS = 8
# Subsets of a long text built and scored at a time, one encoder batch (memory: MASK_ROWS x n, not n x n).
MASK_ROWS = BATCH_SIZE
# With a deadline, a quarter of that: the deadline is checked between blocks.
TIMED_ROWS = MASK_ROWS // 4
# The values of coalitions given as boolean masks (k, n), or the masks of keys.
ArrayMap = Callable[[numpy.ndarray], numpy.ndarray]


class ExplainTimeout(TimeoutError):
    """Not one Shapley permutation of a text was scored before the deadline."""


@dataclass
class TokenContribution:
    """One token of a text, its trailing whitespace and how much it adds to the pair's score."""

    text: str
    ws: str
    contribution: float


@dataclass
class PairExplanation:
    """Why `text_a.similarity(text_b)` is `score`: `tokens_a` sum to `score - reference_a - rest` (`reference_a`: the
    score without text a's tokens), likewise b; `terms`: exact term contributions where the score is linear in terms
    (TWEAK, S2Net, a hybrid's lexical part); `rest`: what no single term explains (hash collisions)."""

    method: str
    kind: str
    score: float
    text_a: str
    text_b: str
    tokens_a: List[TokenContribution]
    tokens_b: List[TokenContribution]
    reference_a: float
    reference_b: float
    terms: List[Tuple[str, float]] = field(default_factory=list)
    rest: float = 0.0
    offset: float = 0.0
    samples: int = 0
    threshold: float = 0.5  # the pipe's decision threshold: `score >= threshold` is its verdict

    @property
    def duplicate(self) -> bool:
        return self.score >= self.threshold

    def top(self, n: int = 10) -> List[Tuple[str, float]]:
        """The n terms with the largest absolute contribution."""
        return sorted(self.terms, key=lambda item: -abs(item[1]))[:n]

    def to_dict(self, n: Optional[int] = None) -> Dict[str, Any]:
        return {
            "method": self.method,
            "kind": self.kind,
            "score": self.score,
            "threshold": self.threshold,
            "duplicate": self.duplicate,
            "text_a": self.text_a,
            "text_b": self.text_b,
            "tokens_a": [vars(t).copy() for t in self.tokens_a],
            "tokens_b": [vars(t).copy() for t in self.tokens_b],
            "reference_a": self.reference_a,
            "reference_b": self.reference_b,
            "offset": self.offset,
            "rest": self.rest,
            "samples": self.samples,
            "terms": [{"term": t, "contribution": c} for t, c in (self.top(n) if n else self.terms)],
        }


def model_kind(pipe: Any) -> str:
    """ "tweak" or "s2net" for a cosine model that is a sum over terms, "hybrid" for a
    `HybridSimilarity.v1` pipe, else "encoder"."""
    comparison = predicting_head(pipe.comparison)
    if is_hybrid_similarity(comparison):
        return "hybrid"
    if comparison.name == "cosine_similarity":
        if pipe.encoder.name == "tweak":
            return "tweak"
        if [layer.name for layer in pipe.encoder.layers] == ["tfidf", "projection"]:
            return "s2net"
    return "encoder"


def tweak_weights(nlp: Language, pipe_name: str = PIPE_NAME) -> Dict[str, float]:
    """The learned TWEAK feature weights of the pipeline's similarity pipe, by feature name."""
    pipe = get_similarity_pipe(nlp, pipe_name)
    if model_kind(pipe) != "tweak":
        raise ValueError("explain: feature weights exist only for a TWEAK encoder")
    return feature_weights(pipe.encoder)


def explain_pair(
    nlp: Language,
    text_a: str,
    text_b: str,
    *,
    pipe_name: str = PIPE_NAME,
    method: str = "auto",
    samples: int = SAMPLES,
    seed: int = 0,
    deadline: Optional[float] = None,
) -> PairExplanation:
    """`text_a.similarity(text_b)` under the pipeline, split over the tokens of both texts.

    method: "exact" (TWEAK, S2Net), "shapley", "occlusion" or "auto" (exact where there is one).
    samples: permutations per text for Shapley values of texts over EXACT_SHAPLEY_TOKENS tokens.
    deadline: `time.monotonic()` time at which sampling stops; ExplainTimeout if a text has none."""
    if method not in METHODS:
        raise ValueError(f"explain: method must be one of {', '.join(METHODS)}, got {method!r}")
    if samples < 1:
        raise ValueError(f"explain: samples must be positive, got {samples}")
    pipe = get_similarity_pipe(nlp, pipe_name)
    kind = model_kind(pipe)
    linear = kind in ("tweak", "s2net")
    if method == "exact" and not linear:
        raise ValueError(
            f"explain: exact contributions need a TWEAK or S2Net encoder with a CosineSimilarity comparison; "
            f"this pipe's encoder is {pipe.encoder.name!r} with {predicting_head(pipe.comparison).name!r}: "
            "use method='shapley'"
        )
    method = ("exact" if linear else "shapley") if method == "auto" else method
    doc_a, doc_b = nlp(text_a), nlp(text_b)
    score = float(doc_a.similarity(doc_b))
    terms: List[Tuple[str, float]] = []
    rest = offset = 0.0
    if linear or kind == "hybrid":
        terms, rest, offset = _exact_terms(pipe, kind, doc_a, doc_b)
    if method == "exact":
        tokens_a, tokens_b = _spread(doc_a, terms, pipe, doc_b), _spread(doc_b, terms, pipe, doc_a)
        reference_a = reference_b = offset
        used = 0
    else:
        rng = numpy.random.default_rng(seed)
        both = method == "shapley" and min(len(doc_a), len(doc_b)) > EXACT_SHAPLEY_TOKENS  # two texts sampled
        half = (time.monotonic() + deadline) / 2 if deadline is not None and both else deadline
        values_a, reference_a, used_a = _token_values(pipe, doc_a, doc_b, method, samples, rng, half)
        values_b, reference_b, used_b = _token_values(pipe, doc_b, doc_a, method, samples, rng, deadline)
        sampled = [used for doc, used in ((doc_a, used_a), (doc_b, used_b)) if len(doc) > EXACT_SHAPLEY_TOKENS]
        tokens_a, tokens_b = _tokens(doc_a, values_a), _tokens(doc_b, values_b)
        used = min(sampled) if method == "shapley" and sampled else 0
    explanation = PairExplanation(
        method, kind, score, text_a, text_b, tokens_a, tokens_b, reference_a, reference_b, terms, rest, offset, used
    )
    explanation.threshold = pipe.threshold
    return explanation


def shapley_values(value: ArrayMap, n: int, *, samples: int = SAMPLES, seed: int = 0) -> numpy.ndarray:
    """Shapley values of n players for `value` (scores boolean masks (k, n)): exact for n <= EXACT_SHAPLEY_TOKENS, else
    over `samples` antithetic permutations; they sum to value(all) - value(none)."""
    return _shapley(value, n, samples, numpy.random.default_rng(seed))[0]


def _shapley(
    value: ArrayMap, n: int, samples: int, rng: Any, deadline: Optional[float] = None
) -> Tuple[numpy.ndarray, float, int]:
    """The Shapley values, the value of the empty coalition they add up from (scores depend slightly
    on batching) and the permutations sampled (fewer than `samples` if the `deadline` came first)."""
    if n == 0:
        return numpy.zeros((0,)), float(value(numpy.zeros((1, 0), dtype=bool))[0]), 0
    if n <= EXACT_SHAPLEY_TOKENS:
        masks = ((numpy.arange(2**n)[:, None] >> numpy.arange(n)) & 1).astype(bool)
        v = numpy.asarray(value(masks), dtype="f8")
        size = masks.sum(axis=1)
        fact = numpy.cumprod([1.0] + [float(k) for k in range(1, n + 1)])
        # phi_i = sum over S without i of |S|! (n - |S| - 1)! / n! * (v(S + i) - v(S))
        phi = numpy.zeros(n)
        for i in range(n):
            without = numpy.flatnonzero(~masks[:, i])
            weights = fact[size[without]] * fact[n - size[without] - 1] / fact[n]
            phi[i] = (weights * (v[without + (1 << i)] - v[without])).sum()
        return phi, float(v[0]), 0
    perms = []
    for _ in range((samples + 1) // 2):
        perm = rng.permutation(n)
        perms.extend([perm, perm[::-1]])
    perms = perms[:samples]
    ranks = numpy.empty((len(perms), n), dtype="int64")
    for p, perm in enumerate(perms):
        ranks[p, perm] = numpy.arange(n)  # the prefix of size k of order p: the tokens of rank < k
    ends = numpy.asarray(value(numpy.array([[False] * n, [True] * n])), dtype="f8")  # every order's first and last
    # key q: order q // (n - 1), its prefix of size q % (n - 1) + 1 (the inner ones, 1 to n - 1)
    keys = numpy.arange(len(perms) * (n - 1))
    inner = _in_blocks(value, lambda q: ranks[q // (n - 1)] < (q % (n - 1) + 1)[:, None], keys, deadline)
    done = len(inner) // (n - 1)  # the orders whose every prefix was scored in time
    if done == 0:
        raise ExplainTimeout(
            f"explain: not one of {len(perms)} Shapley permutations of a text of {n:,} tokens was scored in time"
        )
    perms, inner = perms[:done], inner[: done * (n - 1)]
    v = numpy.hstack(
        [numpy.full((len(perms), 1), ends[0]), inner.reshape(len(perms), n - 1), numpy.full((len(perms), 1), ends[1])]
    )
    phi = numpy.zeros(n)
    for p, perm in enumerate(perms):
        phi[perm] += numpy.diff(v[p])
    return phi / len(perms), float(ends[0]), len(perms)


def _in_blocks(value: ArrayMap, masks_of: ArrayMap, keys: Any, deadline: Optional[float] = None) -> numpy.ndarray:
    """`value` of the masks `masks_of` builds for `keys`, built and scored MASK_ROWS keys at a
    time (TIMED_ROWS with a deadline); the first keys' only, if the `deadline` passes first."""
    blocks = []
    rows = MASK_ROWS if deadline is None else TIMED_ROWS
    for i in range(0, len(keys), rows):
        if deadline is not None and time.monotonic() > deadline:
            break
        blocks.append(numpy.asarray(value(masks_of(keys[i : i + rows])), dtype="f8"))
    return numpy.concatenate(blocks) if blocks else numpy.zeros((0,))


def subset_scores(pipe: Any, doc: Doc, other: Doc, masks: numpy.ndarray) -> numpy.ndarray:
    """The pipe's score against `other` of `doc`'s tokens kept by each boolean mask (k, len(doc));
    the full mask scores `doc` itself."""
    masks = numpy.atleast_2d(numpy.asarray(masks, dtype=bool))
    other_vector = pipe.vector_of(other)
    out = numpy.empty(len(masks))
    full = masks.all(axis=1) & (len(doc) > 0)
    if full.any():
        out[full] = pipe.compare(pipe.vector_of(doc)[None, :], other_vector[None, :])[0]
    for rows in minibatch(numpy.flatnonzero(~full), BATCH_SIZE):
        rows = numpy.asarray(rows)
        docs = [pipe._words_doc([t for t, keep in zip(doc, masks[r]) if keep]) for r in rows]
        vectors = pipe.model.ops.to_numpy(pipe.predict(docs))
        out[rows] = pipe.compare(vectors, numpy.repeat(other_vector[None, :], len(rows), axis=0))
    return out


def _token_values(
    pipe: Any, doc: Doc, other: Doc, method: str, samples: int, rng: Any, deadline: Optional[float]
) -> Tuple[numpy.ndarray, float, int]:
    """The token values of `doc` against `other`, the score without `doc`'s tokens and the permutations sampled."""
    n = len(doc)
    value = partial(subset_scores, pipe, doc, other)
    if method != "occlusion":
        return _shapley(value, n, samples, rng, deadline)
    reference = float(value(numpy.zeros((1, n), dtype=bool))[0])
    score = value(numpy.ones((1, n), dtype=bool))[0] if n else reference
    left_out = _in_blocks(value, lambda rows: numpy.arange(n)[None, :] != rows[:, None], numpy.arange(n))
    return (score - left_out) if n else numpy.zeros((0,)), reference, 0


def _tokens(doc: Doc, values: numpy.ndarray) -> List[TokenContribution]:
    return [TokenContribution(t.text, t.whitespace_, float(v)) for t, v in zip(doc, values)]


def _exact_terms(pipe: Any, kind: str, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float, float]:
    """(terms, rest, offset): exact term contributions of a linear model's score or a hybrid's weighted lexical part."""
    if kind == "hybrid":
        lexical = pipe.encoder.get_ref("lexical")
        terms, cos = _hashed_terms(lexical.layers[0], lexical.get_dim("nO"), doc_a, doc_b)
        scale, offset = pipe.lexical_weight, 0.0
        part = scale * min(max(cos, 0.0), 1.0)
    else:
        terms, cos = (_tweak_terms if kind == "tweak" else _s2net_terms)(pipe.encoder, doc_a, doc_b)
        offset, scale = (0.5, 0.5) if predicting_head(pipe.comparison).attrs.get("rescale") else (0.0, 1.0)
        part = scale * cos
    contributions = [(term, scale * value) for term, value in terms]
    return contributions, float(part - sum(value for _, value in contributions)), offset


def _spread(doc: Doc, terms: List[Tuple[str, float]], pipe: Any, other: Doc) -> List[TokenContribution]:
    """Exact token contributions of one text: each term's contribution shared among its
    occurrences in the text (S2Net: the one-sided sum, exact on its own)."""
    if pipe.encoder.name != "tweak":
        return _s2net_tokens(pipe, doc, other)
    return _share(doc, _token_terms(doc, pipe.encoder.attrs["attr"]), dict(terms))


def _s2net_tokens(pipe: Any, doc: Doc, other: Doc) -> List[TokenContribution]:
    # cos(a, b) = sum over a's terms t of f_a[t] (A_t . v_b) / (|v_a| |v_b|), exactly.
    tfidf = pipe.encoder.layers[0]
    F, A, V, norms = _s2net_projection(pipe.encoder, doc, other)
    scale = 0.5 if predicting_head(pipe.comparison).attrs.get("rescale") else 1.0
    term_values: Dict[str, float] = {}
    if (norms > 0).all():
        row = F[0]
        values = row.data * (A[row.indices] @ V[1]) / (norms[0] * norms[1])
        names = tfidf.attrs["table"].terms
        term_values = {names[i]: scale * float(v) for i, v in zip(row.indices, values)}
    return _share(doc, _token_terms(doc, tfidf.attrs["attr"]), term_values)


def _share(doc: Doc, keys: List[str], by_term: Dict[str, float]) -> List[TokenContribution]:
    """Each token's part of its term's contribution: shared evenly among the term's occurrences."""
    counts = Counter(keys)
    return [
        TokenContribution(t.text, t.whitespace_, by_term[key] / counts[key] if key in by_term else 0.0)
        for t, key in zip(doc, keys)
    ]


def _token_terms(doc: Doc, attr: str) -> List[str]:
    """The term string of each token under a term layer's `attr` (lemma falls back to lower case)."""
    keys = doc.to_array([TERM_ATTRS[attr], TERM_ATTRS["lower"]]) if len(doc) else numpy.zeros((0, 2), "uint64")
    return [doc.vocab.strings[int(k if k else lower)] for k, lower in keys]


def _hashed_cosine(
    keys_a: numpy.ndarray, values_a: numpy.ndarray, keys_b: numpy.ndarray, values_b: numpy.ndarray, width: int
) -> Tuple[List[Tuple[int, float]], float]:
    """Terms shared by a and b with their share of the signed-hashed cosine, and the cosine."""
    Y = numpy.zeros((2, width))
    for row, (keys, values) in enumerate([(keys_a, values_a), (keys_b, values_b)]):
        cols, signs = hash_columns(numpy.asarray(keys, dtype="uint64"), width)
        numpy.add.at(Y[row], cols, signs * values)
    norms = numpy.linalg.norm(Y, axis=1)
    if not (norms > 0).all():
        return [], 0.0
    side = dict(zip(keys_b.tolist(), values_b.tolist()))
    shared = [
        (int(key), float(value * side[key] / (norms[0] * norms[1])))
        for key, value in zip(keys_a.tolist(), values_a.tolist())
        if key in side
    ]
    return shared, float(Y[0] @ Y[1] / (norms[0] * norms[1]))


def _tweak_terms(encoder: Model, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float]:
    terms = term_features(encoder, [doc_a, doc_b])
    _, tw = term_weights(terms, encoder.ops.to_numpy(encoder.get_param("w")))
    a, b = terms.doc_ids == 0, terms.doc_ids == 1
    shared, cos = _hashed_cosine(terms.keys[a], tw[a], terms.keys[b], tw[b], encoder.get_dim("nO"))
    return [(doc_a.vocab.strings[key], value) for key, value in shared], cos


def _hashed_terms(tfidf: Model, width: int, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float]:
    rows = csr_matrix(tfidf.predict([doc_a, doc_b]))
    table = tfidf.attrs["table"]
    a, b = rows[0], rows[1]
    shared, cos = _hashed_cosine(table.hashes[a.indices], a.data, table.hashes[b.indices], b.data, width)
    names = dict(zip(table.hashes.tolist(), table.terms))
    return [(names[key], value) for key, value in shared], cos


def _s2net_projection(encoder: Model, doc_a: Doc, doc_b: Doc) -> Tuple[csr_matrix, Any, Any, Any]:
    """S2Net's TF-IDF rows F of two docs, its projection A, their vectors V = F A and norms."""
    tfidf, projection = encoder.layers
    F = csr_matrix(tfidf.predict([doc_a, doc_b]), dtype="f8")
    A = numpy.asarray(projection.ops.to_numpy(projection.get_param("W")), dtype="f8")
    V = numpy.asarray(F @ A)
    return F, A, V, numpy.linalg.norm(V, axis=1)


def _s2net_terms(encoder: Model, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float]:
    F, A, V, norms = _s2net_projection(encoder, doc_a, doc_b)
    if not (norms > 0).all():
        return [], 0.0
    fa, fb = F[0].toarray()[0], F[1].toarray()[0]
    used = numpy.flatnonzero((fa != 0) | (fb != 0))
    # The mean of the two exact one-sided sums, so a term found on one side only counts too.
    values = (fa[used] * (A[used] @ V[1]) + fb[used] * (A[used] @ V[0])) / (2 * norms[0] * norms[1])
    terms = encoder.layers[0].attrs["table"].terms
    return [(terms[i], float(v)) for i, v in zip(used, values)], float(V[0] @ V[1] / (norms[0] * norms[1]))
