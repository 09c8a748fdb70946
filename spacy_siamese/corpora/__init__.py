"""Labelled pairs (`read_pairs`) and document collections (`read_documents`) from their
published formats, seeded document-pair sampling and the registered readers for `spacy train`."""

from .base import DocRecord, DocumentFormatError, EmptyTextWarning, PairFormatError, PairRecord
from .bimpm import detokenize_ptb
from .document_corpus import COLLECTIONS, DocumentPairs, HierarchyPairs, LabelledDocuments, read_documents
from .jsonl import write_documents
from .newsgroups import strip_header, strip_quoting, strip_signature
from .pair_corpus import MultiPairCorpus, PairCorpus
from .pair_files import PAIR_FORMATS, detect_format, read_pairs
from .parallel import ParallelCorpus, ParallelPair, read_parallel, read_parallel_jsonl
from .readers import create_document_pairs, create_multi_pair_corpus, create_pair_corpus
from .sampling import PairIndex, doc_pair_examples, sample_pairs, split_documents
from .stackexchange import html_to_text, stackexchange_text

__all__ = [
    "COLLECTIONS",
    "PAIR_FORMATS",
    "DocRecord",
    "DocumentFormatError",
    "DocumentPairs",
    "EmptyTextWarning",
    "HierarchyPairs",
    "LabelledDocuments",
    "MultiPairCorpus",
    "PairCorpus",
    "PairFormatError",
    "PairIndex",
    "PairRecord",
    "ParallelCorpus",
    "ParallelPair",
    "create_document_pairs",
    "create_multi_pair_corpus",
    "create_pair_corpus",
    "detect_format",
    "detokenize_ptb",
    "doc_pair_examples",
    "html_to_text",
    "read_documents",
    "read_pairs",
    "read_parallel",
    "read_parallel_jsonl",
    "sample_pairs",
    "split_documents",
    "stackexchange_text",
    "strip_header",
    "strip_quoting",
    "strip_signature",
    "write_documents",
]
