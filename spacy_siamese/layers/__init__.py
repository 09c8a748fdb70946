"""Hand-written Thinc layers, one per file. The comparisons (cauchy, cosine, dot, expl1, hybrid,
auxiliary, calibrated, in_batch, matryoshka) and the siamese wrapper are registered as architectures in their files."""

from .add_ragged import add_ragged
from .auxiliary import with_auxiliary
from .bag_of_words import bag_of_words
from .calibrated import train_calibrated
from .cauchy import cauchy_similarity
from .cosine import cosine_similarity
from .dae import denoising_autoencoder
from .dot import dot_similarity
from .expl1 import exp_l1_similarity
from .hashed_mean import hashed_mean
from .hashed_tfidf import hashed_tfidf
from .hybrid import hybrid_similarity
from .matryoshka import matryoshka_scores
from .mean_pool import mean_pool
from .ngram_tfidf import ngram_tfidf
from .pair_features import pair_features
from .pooling import mean_max_pool
from .projection import projection
from .recurrent import lstm
from .sentence_vectors import sentence_vectors
from .sequence_pool import sequence_pool
from .siamese import siamese
from .skip_empty import skip_empty
from .table_embed import table_embed
from .table_mean import table_mean
from .tfidf import tfidf

__all__ = [
    "add_ragged",
    "bag_of_words",
    "denoising_autoencoder",
    "dot_similarity",
    "cauchy_similarity",
    "cosine_similarity",
    "exp_l1_similarity",
    "hashed_mean",
    "hashed_tfidf",
    "hybrid_similarity",
    "lstm",
    "matryoshka_scores",
    "mean_max_pool",
    "mean_pool",
    "ngram_tfidf",
    "pair_features",
    "projection",
    "sentence_vectors",
    "table_embed",
    "table_mean",
    "sequence_pool",
    "siamese",
    "skip_empty",
    "tfidf",
    "train_calibrated",
    "with_auxiliary",
]
