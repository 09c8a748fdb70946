"""Registered encoders and the feature head, one model family per module (comparisons: `layers/`)."""

from .crosslingual import build_crosslingual_s2net_encoder
from .dae import build_dae_encoder
from .feature_head import build_feature_head
from .hybrid import build_hybrid_encoder
from .lstm import build_lstm_encoder, build_sentence_lstm_encoder
from .mwe import build_mwe_encoder, build_mwe_encoder_v1, build_pooled_tok2vec
from .s2net import build_s2net_encoder
from .static import build_static_encoder, build_static_encoder_v2, build_table_cnn_encoder
from .tweak import build_tweak_encoder

__all__ = [
    "build_crosslingual_s2net_encoder",
    "build_dae_encoder",
    "build_feature_head",
    "build_hybrid_encoder",
    "build_lstm_encoder",
    "build_mwe_encoder",
    "build_mwe_encoder_v1",
    "build_pooled_tok2vec",
    "build_s2net_encoder",
    "build_sentence_lstm_encoder",
    "build_static_encoder",
    "build_static_encoder_v2",
    "build_table_cnn_encoder",
    "build_tweak_encoder",
]
