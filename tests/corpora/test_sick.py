from spacy_siamese.corpora import PairRecord, detect_format, read_pairs

from .util import error_for, write

SICK = (
    "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    "1\tA group of kids is playing in a yard\tA group of boys in a yard is playing\t4.5\tNEUTRAL\n"
    "2\tA dog runs\tA cat sleeps\t1\tCONTRADICTION\n"
)


def test_sick_relatedness_becomes_label(tmp_path):
    path = write(tmp_path, "SICK_train.txt", SICK)
    assert detect_format(path) == "sick"
    assert list(read_pairs(path)) == [
        PairRecord("A group of kids is playing in a yard", "A group of boys in a yard is playing", 0.875, 2),
        PairRecord("A dog runs", "A cat sleeps", 0.0, 3),
    ]


def test_sick_reordered_header(tmp_path):
    path = write(tmp_path, "sick.txt", "relatedness_score\tsentence_B\tpair_ID\tsentence_A\n5\tb\t1\ta\n")
    assert list(read_pairs(path, format="sick")) == [PairRecord("a", "b", 1.0, 2)]


def test_sick_errors(tmp_path):
    path = write(tmp_path, "SICK_trial.txt", SICK + "3\ta\tb\t0.5\tNEUTRAL\n")
    err = error_for(path)
    assert str(err).startswith(f"{path}:4: label '0.5' is outside [1, 5]")
    path = write(tmp_path, "bad.txt", "pair_ID\tsentence_A\trelatedness_score\n1\ta\t3\n")
    err = error_for(path, format="sick", lenient=True)
    assert str(err).startswith(f"{path}:1: the SICK header must name the columns sentence_A, sentence_B")
