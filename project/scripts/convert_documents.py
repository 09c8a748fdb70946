"""Convert a verified document collection into `documents.jsonl` (one labelled
document per line, the "jsonl" collection format of `spacy_siamese.corpora`), which the
"spacy-siamese.DocumentPairs.v1" reader and `python -m spacy_siamese evaluate-retrieval` read.

20news
    The train half of 20 Newsgroups bydate (the mirror's `20news-bydate-train.tar.gz`,
    or the `20news-bydate-train/` members of the official `20news-bydate.tar.gz`; the
    test half is never read). Headers, quoted replies and signatures are stripped.
    Label: the newsgroup.
reuters
    Reuters-21578, ModApte training documents (LEWISSPLIT=TRAIN, TOPICS=YES, at least
    one topic), from the mirror's .sgm files or the official `reuters21578.tar.gz`.
    Labels: the TOPICS categories.

The held-out documents for evaluation are a seeded part of these (split by the
reader and by evaluate-retrieval with the same seed), so the official test halves stay unseen.

Usage:
    python scripts/convert_documents.py 20news corpus/20news/sources.json corpus/20news
"""

import json
from collections import Counter
from pathlib import Path

import typer
from convert_errors import exit_on_error, fail, require_output_dir, require_sources

from spacy_siamese.corpora import read_documents, write_documents

COLLECTIONS = ("20news", "reuters")


def collection_path(sources: Path) -> Path:
    """The archive, or the directory that holds the verified .sgm files."""
    files = [Path(f["path"]) for f in json.loads(sources.read_text(encoding="utf8"))["files"]]
    if len(files) == 1:
        return files[0]
    parents = {f.parent for f in files}
    if len(parents) != 1:
        raise ValueError(f"{sources}: expected one archive or files in one directory, got {files}")
    return parents.pop()


def main(
    collection: str = typer.Argument(..., help="20news or reuters"),
    sources: Path = typer.Argument(..., help="sources.json written by the assets step"),
    output_dir: Path = typer.Argument(..., help="Writes documents.jsonl and stats.json here"),
) -> None:
    if collection not in COLLECTIONS:
        fail(f"unknown collection {collection!r}; choose {', '.join(COLLECTIONS)}.")
    require_sources(sources, "convert-documents")
    require_output_dir(output_dir)
    with exit_on_error(collection, f"{collection} collection", "convert-documents"):
        docs = read_documents(collection, collection_path(sources), split="train")
    output_dir.mkdir(parents=True, exist_ok=True)
    write_documents(docs, output_dir / "documents.jsonl")
    labels = Counter(label for doc in docs for label in doc.labels)
    stats = {
        "collection": collection,
        "documents": len(docs),
        "labels": len(labels),
        "largest_labels": dict(labels.most_common(10)),
    }
    (output_dir / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf8")
    typer.echo(f"{collection}: {len(docs):,} documents, {len(labels)} labels -> {output_dir / 'documents.jsonl'}")


if __name__ == "__main__":
    typer.run(main)
