"""The library's defaults and choices that the command line shows, in a module that imports
nothing: `--help` stays quick, and an option and the library share one value."""

# Collections: a .jsonl, .ndjson or .json file is JSON lines (.json: as pair files; datasets'
# to_json writes JSON lines).
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
BATCH_SIZE = 256  # docs per batch when encoding
CHUNK_SIZE = 8192  # docs per chunk of a vector store
# Where candidates come from, for `index`, `search` and `dedupe` alike: every item ("flat", exact),
# a faiss IVF index or HNSW graph (approximate), or "auto": flat up to FLAT_LIMIT items, then IVF.
FAISS_KINDS = ("ivf", "hnsw")  # the candidate kinds that are a faiss index
CANDIDATE_KINDS = ("auto", "flat", *FAISS_KINDS)
FLAT_LIMIT = 30_000
CANDIDATES = 50  # candidates per item that ivf and hnsw re-score
GROUP_METHODS = ("communities", "components")
EXPLAIN_METHODS = ("auto", "exact", "shapley", "occlusion")
SAMPLES = 32  # Shapley permutations per text
EXPLAIN_BUDGET = 20.0  # seconds the page gives an explanation
TEACHER_KINDS = ("cross-encoder", "mnrl", "cosent")
