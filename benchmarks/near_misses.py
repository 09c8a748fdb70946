"""Near misses: does a model score an anchor's duplicate above a near miss of it?

A triples file holds one JSON object a line: `{"anchor": str, "duplicate": str, "near_miss": str,
"kind": str}`, where the near miss shares most of the anchor's words but not its meaning
(`../shared/near-misses.jsonl`: negation, numbers, swapped roles, antonyms, entities). For each
model, overall and per kind: the triples where sim(anchor, duplicate) > sim(anchor, near miss)
(a tie is not a win), the mean margin sim(anchor, duplicate) - sim(anchor, near miss), and for a
spaCy pipeline how often the near miss still gets the pipe's duplicate verdict (`pipe.verdict`, at
its stored threshold). Models: trained spaCy pipelines (`doc.similarity` through the
`siamese_similarity` pipe, the texts batched with `nlp.pipe`) and, with `--teacher`,
sentence-transformers models (a bi-encoder's cosine, a CrossEncoder directory's probability;
`spacy_siamese.teacher.models`), which have no verdict.

Usage (from the repository root):
    python benchmarks/near_misses.py ../shared/near-misses.jsonl project/training/quora/model-best \
        --teacher all-MiniLM-L6-v2 --output-json benchmarks/results/near_misses.json --output-md near_misses.md
"""

import json
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy
import spacy
import typer

from spacy_siamese.cli.app import versions
from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.corpora import PairFormatError
from spacy_siamese.corpora.base import Malformed, check_path, json_object, json_type, numbered_lines
from spacy_siamese.files import atomic_write, check_outputs
from spacy_siamese.teacher.models import is_cross_encoder, teacher_label, teacher_pair_scores
from spacy_siamese.util import distinct_texts, given_path

FIELDS = ("anchor", "duplicate", "near_miss", "kind")


class Triple(NamedTuple):
    anchor: str
    duplicate: str
    near_miss: str
    kind: str
    line: int


def read_triples(path: Path) -> List[Triple]:
    """The triples of a JSONL file (blank lines skipped). Raises PairFormatError naming the file
    and line of a line that is not an object of four non-blank strings, and ValueError for a file
    without triples."""
    path = check_path(path, what="triples file")
    triples = []
    for line in numbered_lines(path):
        if line.error:
            raise PairFormatError(path, line.number, line.error)
        if not line.text.strip():
            continue
        try:
            obj = json_object(line.text)
            missing = [key for key in FIELDS if key not in obj]
            if missing:
                raise Malformed(f"missing key(s) {', '.join(map(repr, missing))}; keys found: {list(obj)}")
            for key in FIELDS:
                if not isinstance(obj[key], str) or not obj[key].strip():
                    found = json_type(obj[key]) if not isinstance(obj[key], str) else "a blank string"
                    raise Malformed(f"{key!r} must be a non-blank string, found {found}")
        except Malformed as err:
            raise PairFormatError(path, line.number, str(err)) from None
        triples.append(Triple(obj["anchor"], obj["duplicate"], obj["near_miss"], obj["kind"], line.number))
    if not triples:
        raise ValueError(f"{path}: no triples (expected JSON lines with the keys {', '.join(FIELDS)})")
    return triples


def pipeline_scores(nlp: spacy.Language, triples: Sequence[Triple]) -> Tuple[numpy.ndarray, numpy.ndarray, float]:
    """(duplicate scores, near-miss scores, threshold) of a trained pipeline: each a
    `pipe.verdict` of the anchor's doc with the other's, every text processed once by `nlp.pipe`."""
    pipe = get_similarity_pipe(nlp, initialized=True)
    texts = distinct_texts((t for triple in triples for t in triple[:3]), keep_blank=True)
    docs = dict(zip(texts, nlp.pipe(texts)))
    duplicate = [pipe.verdict(docs[t.anchor], docs[t.duplicate]).score for t in triples]
    near_miss = [pipe.verdict(docs[t.anchor], docs[t.near_miss]).score for t in triples]
    return numpy.asarray(duplicate, dtype="f8"), numpy.asarray(near_miss, dtype="f8"), pipe.threshold


def teacher_scores(teacher: str, triples: Sequence[Triple]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(duplicate scores, near-miss scores) of a sentence-transformers model: a bi-encoder's
    cosine or a CrossEncoder's probability (`teacher_pair_scores`)."""
    pairs = [(t.anchor, t.duplicate) for t in triples] + [(t.anchor, t.near_miss) for t in triples]
    scores = teacher_pair_scores(teacher, pairs)
    return scores[: len(triples)], scores[len(triples) :]


def tally(
    triples: Sequence[Triple], duplicate: numpy.ndarray, near_miss: numpy.ndarray, threshold: Optional[float]
) -> Dict[str, Any]:
    """Wins (duplicate scored strictly above the near miss), mean margin and near misses at or
    above `threshold` (None without a threshold), overall and per kind (in first-seen order);
    and the triples the model gets wrong, by line."""

    def counts(rows: numpy.ndarray) -> Dict[str, Any]:
        return {
            "wins": int((duplicate[rows] > near_miss[rows]).sum()),
            "total": int(len(rows)),
            "mean_margin": float((duplicate[rows] - near_miss[rows]).mean()),
            "near_miss_duplicate": None if threshold is None else int((near_miss[rows] >= threshold).sum()),
        }

    kinds = numpy.asarray([t.kind for t in triples])
    losses = [
        {"line": t.line, "kind": t.kind, "duplicate": float(d), "near_miss": float(n)}
        for t, d, n in zip(triples, duplicate, near_miss)
        if not d > n
    ]
    return {
        "threshold": threshold,
        "overall": counts(numpy.arange(len(triples))),
        "kinds": {kind: counts(numpy.flatnonzero(kinds == kind)) for kind in dict.fromkeys(kinds.tolist())},
        "losses": losses,
    }


def markdown(results: Sequence[Dict[str, Any]]) -> str:
    """One row per model: overall and per-kind wins, near misses judged duplicates, mean margin."""
    kinds = list(dict.fromkeys(kind for result in results for kind in result["kinds"]))
    head = ["model", "duplicate wins", *kinds, "near miss judged duplicate", "mean margin"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        overall = result["overall"]
        judged = overall["near_miss_duplicate"]
        cells = [
            result["model"],
            f"{overall['wins']}/{overall['total']}",
            *(f"{c['wins']}/{c['total']}" if c else "" for c in (result["kinds"].get(k) for k in kinds)),
            "n/a" if judged is None else f"{judged}/{overall['total']} (threshold {result['threshold']:.3f})",
            f"{overall['mean_margin']:+.3f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(
    triples_file: Path = typer.Argument(..., help="JSON lines of anchor, duplicate, near_miss, kind"),
    models: List[Path] = typer.Argument(None, help="Trained spaCy pipelines with a siamese_similarity pipe"),
    teacher: List[str] = typer.Option(
        [], help="A sentence-transformers bi-encoder (name or directory) or CrossEncoder directory (repeat for several)"
    ),
    output_json: Optional[Path] = typer.Option(None, help="Write the results here"),
    output_md: Optional[Path] = typer.Option(None, help="Write the Markdown table here"),
) -> None:
    """Count, per model, the triples whose duplicate outscores the near miss (see the module docstring)."""
    if not models and not teacher:
        raise typer.BadParameter("give at least one pipeline or --teacher", param_hint="MODELS")
    try:
        check_outputs([triples_file, *(models or [])], [output_json, output_md])
        triples = read_triples(triples_file)
        results = []
        for path in models or []:
            duplicate, near_miss, threshold = pipeline_scores(spacy.load(path), triples)
            results.append({"model": given_path(path, parts=2), "type": "pipeline"})
            results[-1].update(tally(triples, duplicate, near_miss, threshold))
        for name in teacher:
            duplicate, near_miss = teacher_scores(name, triples)
            kind = "cross-encoder" if is_cross_encoder(name) else "bi-encoder"
            results.append({"model": teacher_label(name), "type": kind})
            results[-1].update(tally(triples, duplicate, near_miss, None))
    except (OSError, ValueError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1) from None
    table = markdown(results)
    typer.echo(table, nl=False)
    report = {"triples": given_path(triples_file), "n_triples": len(triples), "models": results, "versions": versions()}
    for path, text in ((output_md, table), (output_json, json.dumps(report, indent=2) + "\n")):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_write(path) as file:
                file.write(text.encode("utf8"))


if __name__ == "__main__":
    typer.run(main)
