"""Compact vectors: bytes a text, work-dir and index size and recall of the exact pairs, per precision.

    python benchmarks/compact.py MODEL TEXTS [--n 100000] [--dims 32 64] [--output-json results/compact.json]

For the first N texts of TEXTS (a .txt or .jsonl collection, as `dedupe` reads it), each precision
(and each `--dims` width, if given, at every precision) is run as `dedupe` runs it: the collection is encoded
into a work dir at that precision, the pairs are found on the compact vectors and rescored on full
vectors. The pairs of the float32 run are the exact pairs; a row reports the share of them found
(every reported score is `doc.similarity`, so no pair outside them is ever reported), the bytes of
the learned columns a text, the work dir's size, the size of a saved `SimilarityIndex` of the same
texts, and the seconds of the dedupe and of its rescoring.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy

from spacy_siamese.search import CorpusIndex, SimilarityIndex, encode_collection
from spacy_siamese.search.dedupe import dedupe_threshold
from spacy_siamese.search.precision import PRECISIONS
from spacy_siamese.search.texts import scan_collection


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run(nlp: Any, texts: List[str], precision: str, dims: Optional[int], threshold: float, args: Any) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="compact-") as tmp:
        work = Path(tmp) / "work"
        start = time.perf_counter()
        store = encode_collection(nlp, texts, len(texts), work, precision=precision, dims=dims, progress=False)
        encoded = time.perf_counter()
        index = CorpusIndex(nlp, store, candidates=args.candidates)
        seconds: Dict[str, float] = {}

        def texts_at(ids: Any) -> Dict[int, str]:
            seconds["rescore_start"] = time.perf_counter()
            return {i: texts[i] for i in ids}

        pairs = index.duplicates(threshold, k=args.k, c=args.c, texts_at=texts_at)
        done = time.perf_counter()
        learned = (work / "learned.npy").stat().st_size + sum(f.stat().st_size for f in work.glob("lexical-*"))
        row = {"precision": precision, "dims": store.manifest["dims"], "bytes_a_text": learned / len(texts)}
        row.update(work_dir_bytes=size(work), encode_s=encoded - start, search_s=done - encoded)
        row["rescore_s"] = done - seconds["rescore_start"] if "rescore_start" in seconds else 0.0
        built = SimilarityIndex.build(nlp, texts, progress=False, precision=precision, dims=dims)
        built.save(Path(tmp) / "index")
        row["index_bytes"] = size(Path(tmp) / "index")
    row["pairs"] = pairs
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("texts", type=Path)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--dims", type=int, nargs="+", default=[], help="Also run every precision truncated to each")
    parser.add_argument("--threshold", type=float, default=None, help="Default: the pipe's dedupe threshold")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--c", type=int, default=50)
    parser.add_argument("--candidates", default="auto")
    parser.add_argument("--precisions", default=",".join(PRECISIONS), help="Comma-separated, float32 first")
    parser.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    threshold = dedupe_threshold(nlp.get_pipe("siamese_similarity"), args.threshold)
    collection = scan_collection(args.texts, format="auto", field="text")
    texts = [t for _, t in zip(range(args.n), collection.texts())]
    rows: List[Dict[str, Any]] = []
    print(f"{len(texts):,} texts, threshold {threshold:g}")
    print("precision  dims  bytes/text  work dir  shrink  index  shrink  recall  pairs  encode_s  search_s  rescore_s")
    for dims in [None, *args.dims]:
        for precision in args.precisions.split(","):
            row = run(nlp, texts, precision, dims, threshold, args)
            base = rows[0] if rows else row
            found = {(i, j) for i, j, _ in row.pop("pairs")}
            exact = base.get("exact", found)
            row.update(recall=len(found & exact) / max(1, len(exact)), n_pairs=len(found))
            row["work_dir_shrink"] = base["work_dir_bytes"] / row["work_dir_bytes"]
            row["index_shrink"] = base["index_bytes"] / row["index_bytes"]
            rows.append({**row, "exact": found} if not rows else row)
            print(
                f"{precision:9}  {row['dims']:4}  {row['bytes_a_text']:10.0f}  {row['work_dir_bytes'] / 2**20:7.2f}M"
                f"  {row['work_dir_shrink']:5.2f}x  {row['index_bytes'] / 2**20:4.2f}M  {row['index_shrink']:5.2f}x"
                f"  {row['recall']:6.4f}  {len(found):5}  {row['encode_s']:8.1f}  {row['search_s']:8.1f}"
                f"  {row['rescore_s']:9.1f}",
                flush=True,
            )
    rows[0].pop("exact")
    if args.output_json:
        args.output_json.write_text(json.dumps({"n": len(texts), "threshold": threshold, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
