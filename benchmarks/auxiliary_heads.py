"""Score both heads of a pipe trained with `spacy-siamese.WithAuxiliary.v1` on the same doc
vectors: the main (Cauchy) head that `doc.similarity` uses, and the auxiliary head that is
only trained. Accuracy is at the best threshold on the file itself, for both heads alike.

    python benchmarks/auxiliary_heads.py training/quora_cauchy/model-best ../shared/data/quora/dev.tsv
"""
import sys

import numpy
import spacy
from sklearn.metrics import roc_auc_score

from spacy_siamese.readers import read_pairs
from spacy_siamese.scoring import best_threshold


def main(model: str, pairs: str) -> None:
    nlp = spacy.load(model)
    pipe = nlp.get_pipe("siamese_similarity")
    records = list(read_pairs(pairs))
    labels = numpy.asarray([r.label for r in records])
    A = pipe.predict(list(nlp.tokenizer.pipe(r.text1 for r in records)))
    B = pipe.predict(list(nlp.tokenizer.pipe(r.text2 for r in records)))
    for head in ("main", "auxiliary"):
        scores = pipe.model.ops.to_numpy(pipe.comparison.get_ref(head).predict((A, B)))[:, 0]
        acc = float(((scores >= best_threshold(scores, labels)) == labels).mean())
        print(f"{head}: accuracy {acc:.4f} (best threshold), ROC AUC {roc_auc_score(labels, scores):.4f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
