from .auxiliary import with_auxiliary
from .calibrated import train_calibrated
from .cauchy import cauchy_similarity
from .cosine import cosine_similarity
from .pair_features import pair_features
from .pooling import mean_max_pool
from .projection import projection
from .siamese import siamese
from .tfidf import tfidf

__all__ = ["cauchy_similarity", "cosine_similarity", "pair_features", "mean_max_pool", "projection", "siamese", "tfidf", "train_calibrated", "with_auxiliary"]
