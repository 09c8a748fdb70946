"""The registered corpus readers for `spacy train`; each is its class, whose arguments are the
reader's settings in the config."""

from spacy.util import registry

from .document_corpus import DocumentPairs, HierarchyPairs, LabelledDocuments
from .pair_corpus import MultiPairCorpus, PairCorpus

create_pair_corpus = registry.readers("spacy-siamese.PairCorpus.v1")(PairCorpus)
create_multi_pair_corpus = registry.readers("spacy-siamese.MultiPairCorpus.v1")(MultiPairCorpus)
create_document_pairs = registry.readers("spacy-siamese.DocumentPairs.v1")(DocumentPairs)
create_labelled_documents = registry.readers("spacy-siamese.LabelledDocuments.v1")(LabelledDocuments)
create_hierarchy_pairs = registry.readers("spacy-siamese.HierarchyPairs.v1")(HierarchyPairs)
