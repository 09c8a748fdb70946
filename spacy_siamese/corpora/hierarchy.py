"""Hierarchy-graded document pairs (Patel 2017): with d the depth of the tree of dotted group
names (`comp.sys.ibm.pc`) and l the depth of the lowest common ancestor (LCA) of a pair's groups,
the pair scores `d / 2^(d - l)` over its maximum d, i.e. `2^(l - d)` in (0, 1]."""

from collections import defaultdict
from itertools import combinations, combinations_with_replacement
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy

from .base import DocRecord
from .sampling import PairIndex

SEPARATOR = "."


def group_path(group: str) -> Tuple[str, ...]:
    """The tree path of a group name: its dot-separated parts. Raises ValueError on an empty
    name or an empty part ("comp..x", ".comp", "comp.")."""
    if not isinstance(group, str) or not group.strip():
        raise ValueError(f"empty group name {group!r}: every document needs a dotted group name, e.g. 'sci.space'")
    parts = tuple(group.split(SEPARATOR))
    if any(not part.strip() for part in parts):
        raise ValueError(f"group name {group!r} has an empty part between dots")
    return parts


def shared_depth(a: Sequence[str], b: Sequence[str]) -> int:
    """Depth of the LCA of two tree paths: the number of leading parts they share."""
    return next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


class GroupTree:
    """The tree of dotted group names and the LCA scores of group pairs. depth (int): d; 0 = one
    level below the deepest node two groups share."""

    def __init__(self, groups: Iterable[str], *, depth: int = 0) -> None:
        self.paths: Dict[str, Tuple[str, ...]] = {g: group_path(g) for g in sorted(set(groups))}
        if not self.paths:
            raise ValueError("GroupTree: no groups")
        if depth < 0:
            raise ValueError(f"GroupTree: depth must be >= 0 (0 = from the groups), got {depth}")
        deepest = max((shared_depth(a, b) for a, b in combinations(self.paths.values(), 2)), default=0)
        self.depth = depth if depth > 0 else deepest + 1

    @property
    def groups(self) -> List[str]:
        return list(self.paths)

    def lca_depth(self, a: str, b: str) -> int:
        """Depth l of the LCA of two groups: d for the same group, else the number of shared
        leading name parts (at most d - 1)."""
        if a == b:
            return self.depth
        return min(shared_depth(self.paths[a], self.paths[b]), self.depth - 1)

    def score(self, a: str, b: str) -> float:
        """`d / 2^(d - l)` normalised by its maximum d: `2^(l - d)`, in (0, 1]."""
        return hierarchy_score(self.lca_depth(a, b), self.depth)

    def levels(self) -> Dict[int, List[Tuple[str, str]]]:
        """Unordered group pairs (a <= b, a == b included) by the depth of their LCA."""
        found: Dict[int, List[Tuple[str, str]]] = defaultdict(list)
        for a, b in combinations_with_replacement(self.groups, 2):
            found[self.lca_depth(a, b)].append((a, b))
        return dict(sorted(found.items()))


def hierarchy_score(lca_depth: int, depth: int) -> float:
    """Patel's `d / 2^(d - l)` divided by d (its value at l = d), so it lies in (0, 1]."""
    if depth < 1 or not 0 <= lca_depth <= depth:
        raise ValueError(f"hierarchy_score: need 0 <= l <= d and d >= 1, got l={lca_depth}, d={depth}")
    return float(2.0 ** (lca_depth - depth))


def group_of(doc: DocRecord) -> str:
    """A document's place in the tree: its group, or its first label if it has no group."""
    return doc.group or (doc.labels[0] if doc.labels else "")


def sample_hierarchy_pairs(
    docs: Sequence[DocRecord], *, n_pairs: int, depth: int = 0, seed: int = 0
) -> Tuple[List[PairIndex], GroupTree]:
    """(`n_pairs` seeded pairs of document indices labelled with their groups' LCA score, about
    as many per score value, in random order; the tree)."""
    if n_pairs < 1:
        raise ValueError(f"sample_hierarchy_pairs: n_pairs must be >= 1, got {n_pairs}")
    by_group: Dict[str, List[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        try:
            group_path(group_of(doc))
        except ValueError as err:  # name the document whose group name is not a dotted path
            raise ValueError(f"document {doc.id or i}: {err}") from None
        by_group[group_of(doc)].append(i)
    tree = GroupTree(by_group, depth=depth)
    levels = {
        level: [(a, b) for a, b in pairs if a != b or len(by_group[a]) > 1] for level, pairs in tree.levels().items()
    }
    levels = {level: pairs for level, pairs in levels.items() if pairs}
    if not levels:
        raise ValueError("sample_hierarchy_pairs: no two documents to pair (one document in all)")
    rng = numpy.random.default_rng(seed)
    counts = numpy.full(len(levels), n_pairs // len(levels))
    counts[: n_pairs % len(levels)] += 1
    sampled: List[PairIndex] = []
    for (level, group_pairs), count in zip(levels.items(), counts):
        score = hierarchy_score(level, tree.depth)
        for k in rng.integers(len(group_pairs), size=int(count)):
            a, b = group_pairs[k]
            members_a, members_b = by_group[a], by_group[b]
            i = members_a[rng.integers(len(members_a))]
            j = i
            while j == i:  # only a same-group pair can draw i twice, and that group has > 1 member
                j = members_b[rng.integers(len(members_b))]
            sampled.append(PairIndex(i, j, score))
    return [sampled[k] for k in rng.permutation(len(sampled))], tree
