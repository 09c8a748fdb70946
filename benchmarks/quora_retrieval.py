"""Duplicate retrieval on the BiMPM Quora dev questions, for a trained pipeline and TF-IDF cosine.

The measure of `spacy_siamese.evaluation.evaluate_duplicates`: the distinct questions of the pair
file are the collection; for 1,000 labelled duplicate pairs (seed 0) side A queries all other
questions and the rank of side B gives MRR, MRR@10 and recall@1/10. TF-IDF cosine is the
package's `tfidf` layer fitted on the first 100,000 distinct questions of `--fit-texts`.

    python benchmarks/quora_retrieval.py training/quora_cauchy/model-best ../shared/data/quora/dev.tsv \\
        --fit-texts ../shared/data/quora/train.tsv --output-json OUT.json
"""

from spacy_siamese.evaluation.duplicates import main

if __name__ == "__main__":
    main()
