from .cauchy import cauchy_similarity
from .pair_features import pair_features
from .pooling import mean_max_pool
from .siamese import siamese

__all__ = ["cauchy_similarity", "pair_features", "mean_max_pool", "siamese"]
