"""Experiment (README, "What was tried to close the gap"): train on the Quora pairs plus the pairs
implied by the duplicate clusters of the training labels. Not part of the package: it made the
Cauchy model worse. Use it with `spacy train ... --code benchmarks/quora_cluster_pairs.py` and

    [corpora.train]
    @readers = "benchmarks.ClusterPairs.v1"
    path = ${paths.train}
    pos_per_question = 4
    neg_per_pair = 6
    seed = 0

Within each cluster of questions joined by duplicate labels, up to `pos_per_question` x size
new positive pairs are sampled; each labelled negative (a, b) adds up to `neg_per_pair` pairs
of a with b's duplicates or b with a's.
"""
from spacy.util import registry

import random
from collections import defaultdict
from spacy_siamese.readers import read_pairs
from spacy_siamese.pairs import make_pair_example


def transitive_augment(records, pos_per_question=2, neg_per_pair=2, seed=0):
    """Original pairs + pairs implied by the duplicate clusters of the training labels."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in records:
        if r.label == 1:
            parent[find(r.text1)] = find(r.text2)
        else:
            find(r.text1), find(r.text2)
    members = defaultdict(list)
    for q in sorted(parent):
        members[find(q)].append(q)
    seen = {frozenset((r.text1, r.text2)) for r in records}
    rng = random.Random(seed)
    out = [(r.text1, r.text2, r.label) for r in records]
    n_pos = n_neg = 0
    for root in sorted(members):
        qs = members[root]
        if len(qs) < 3:
            continue
        cands = [(a, b) for i, a in enumerate(qs) for b in qs[i + 1:] if frozenset((a, b)) not in seen]
        if len(cands) > pos_per_question * len(qs):
            cands = rng.sample(cands, pos_per_question * len(qs))
        for a, b in cands:
            seen.add(frozenset((a, b)))
            out.append((a, b, 1.0))
            n_pos += 1
    for r in records:
        if r.label != 0:
            continue
        ra, rb = find(r.text1), find(r.text2)
        if ra == rb:
            continue
        cands = [(x, r.text2) for x in members[ra] if x != r.text1] + [(r.text1, y) for y in members[rb] if y != r.text2]
        cands = [c for c in cands if frozenset(c) not in seen]
        for a, b in rng.sample(cands, min(neg_per_pair, len(cands))):
            seen.add(frozenset((a, b)))
            out.append((a, b, 0.0))
            n_neg += 1
    print(f"transitive_augment: {len(records)} pairs + {n_pos} positive + {n_neg} negative", flush=True)
    return out


@registry.readers("benchmarks.ClusterPairs.v1")
def transitive_pairs(path: str, pos_per_question: int = 2, neg_per_pair: int = 2, seed: int = 0):
    cache = []

    def corpus(nlp):
        if not cache:
            cache.extend(transitive_augment(list(read_pairs(path)), pos_per_question, neg_per_pair, seed))
        for a, b, y in cache:
            yield make_pair_example(nlp, a, b, y)

    return corpus
