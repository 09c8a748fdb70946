"""Pair losses, one per module. Each takes (scores, labels) and returns (d_scores, loss). The
teacher's loss, TeacherScores.v1, lives with the teacher (`spacy_siamese.teacher.loss`)."""

from ._util import in_batch_columns
from .cosent import CoSENTLoss, make_cosent_loss
from .dataset_losses import DatasetLosses, PairColumns, make_dataset_losses
from .in_batch_negatives import LOGITS, InBatchNegativesLoss, make_in_batch_negatives, ranking_loss
from .log_loss import PairLogLoss, make_log_loss, make_log_loss_v1
from .matryoshka import MatryoshkaLoss, make_matryoshka_loss
from .pairwise_logistic import PairwiseLogisticLoss, make_pairwise_logistic_loss
from .squared_error import PairSquaredError, make_squared_error
from .triplet import (
    MINING,
    TRIPLET_FORMS,
    Penalty,
    TripletLoss,
    batch_all_triplets,
    batch_hard_triplets,
    make_triplet_loss,
)

__all__ = [
    "LOGITS",
    "MINING",
    "TRIPLET_FORMS",
    "CoSENTLoss",
    "DatasetLosses",
    "InBatchNegativesLoss",
    "MatryoshkaLoss",
    "PairColumns",
    "PairLogLoss",
    "PairSquaredError",
    "PairwiseLogisticLoss",
    "Penalty",
    "TripletLoss",
    "batch_all_triplets",
    "batch_hard_triplets",
    "in_batch_columns",
    "make_cosent_loss",
    "make_dataset_losses",
    "make_in_batch_negatives",
    "make_log_loss",
    "make_log_loss_v1",
    "make_matryoshka_loss",
    "make_pairwise_logistic_loss",
    "make_squared_error",
    "make_triplet_loss",
    "ranking_loss",
]
