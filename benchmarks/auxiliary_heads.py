"""Score both heads of a pipe trained with `spacy-siamese.WithAuxiliary.v1` on the same doc
vectors: the main (Cauchy) head that `doc.similarity` uses, and the auxiliary head that is
only trained. Accuracy is at the best threshold on the file itself, for both heads alike.

    python benchmarks/auxiliary_heads.py training/quora_cauchy/model-best ../shared/data/quora/dev.tsv
"""
import sys

import numpy
import spacy
from spacy_siamese.readers import read_pairs
from spacy_siamese.scoring import best_threshold, pair_metrics


def main(model: str, pairs: str) -> None:
    nlp = spacy.load(model)
    pipe = nlp.get_pipe("siamese_similarity")
    records = list(read_pairs(pairs))
    labels = numpy.asarray([r.label for r in records])
    A = pipe.predict(list(nlp.tokenizer.pipe(r.text1 for r in records)))
    B = pipe.predict(list(nlp.tokenizer.pipe(r.text2 for r in records)))
    for head in ("main", "auxiliary"):
        scores = pipe.model.ops.to_numpy(pipe.comparison.get_ref(head).predict((A, B)))[:, 0]
        metrics = pair_metrics(scores, labels, threshold=best_threshold(scores, labels))
        print(f"{head}: accuracy {metrics['acc']:.4f} (best threshold), ROC AUC {metrics['auc']:.4f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
