import spacy
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_siamese.pairs import get_label, get_partner, make_pair_example


def test_partner_keeps_words_spaces_and_tokenizer_norms():
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "Why can't I sleep?", "I can't sleep and don't know why ", 1)
    partner = get_partner(eg)
    expected = nlp.make_doc("I can't sleep and don't know why ")
    assert partner.text == expected.text
    assert [t.norm_ for t in partner] == [t.norm_ for t in expected]
    assert [t.norm_ for t in partner][1:3] == ["can", "not"]
    assert get_label(eg) == 1.0


def test_pair_survives_docbin():
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "a b", "We won't go", 0)
    data = DocBin(docs=[eg.reference], store_user_data=True).to_bytes()
    reference = list(DocBin().from_bytes(data).get_docs(nlp.vocab))[0]
    restored = Example(nlp.make_doc(reference.text), reference)
    assert [t.norm_ for t in get_partner(restored)] == [t.norm_ for t in nlp.make_doc("We won't go")]
    assert get_label(restored) == 0.0
