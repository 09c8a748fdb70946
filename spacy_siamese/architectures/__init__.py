"""Registered encoders and the feature head, one model family per module. The comparisons
(Cauchy, cosine, WithAuxiliary, TrainCalibrated) and the Siamese wrapper are registered in
their own files in `layers/`."""

from .feature_head import Comparison, build_feature_head
from .mwe import build_mwe_encoder, build_mwe_encoder_v1
from .s2net import build_s2net_encoder

__all__ = ["Comparison", "build_feature_head", "build_mwe_encoder", "build_mwe_encoder_v1", "build_s2net_encoder"]
