from spacy_siamese.corpora import PairRecord, detect_format, read_pairs

from .util import error_for, write

MRPC = (
    "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    '1\t702876\t702977\tAmrozi accused his brother, whom he called "the witness".\tReferring to him as "the witness".\n'
    "0\t2108705\t2108831\t\"Yucaipa owned Dominick's.\tYucaipa bought Dominick's in 1995.\n"
)


def test_mrpc_with_bom_and_raw_quotes(tmp_path):
    path = write(tmp_path, "msr_paraphrase_train.txt", MRPC)
    assert detect_format(path) == "mrpc"
    assert list(read_pairs(path)) == [
        PairRecord(
            'Amrozi accused his brother, whom he called "the witness".', 'Referring to him as "the witness".', 1.0, 2
        ),
        PairRecord("\"Yucaipa owned Dominick's.", "Yucaipa bought Dominick's in 1995.", 0.0, 3),
    ]


def test_mrpc_label_must_be_binary(tmp_path):
    path = write(tmp_path, "msr_paraphrase_train.txt", MRPC + "0.5\t1\t2\ta\tb\n")
    err = error_for(path)
    assert str(err).startswith(f"{path}:4: expected label 0 or 1, found '0.5'")
