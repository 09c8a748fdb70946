import pytest

from spacy_siamese.corpora import PairRecord, detect_format, read_pairs

from .util import error_for, write

STS = (
    "main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane is taking off.\tAn air plane is taking off.\n"
    'main-news\theadlines\t2013\t0004\t1.250\tSay "no" to "quotes"\t"Quoted" at the start\tsource\tlicence\n'
    "main-forum\tdeft-forum\t2014\t0002\t0.000\tSame.\tDifferent.\n"
)


def test_sts_scores_become_labels_and_source_files_groups(tmp_path):
    path = write(tmp_path, "sts-train.csv", STS)
    assert detect_format(path) == "sts"
    assert list(read_pairs(path)) == [
        PairRecord("A plane is taking off.", "An air plane is taking off.", 1.0, 1, "MSRvid"),
        PairRecord('Say "no" to "quotes"', '"Quoted" at the start', 0.25, 2, "headlines"),
        PairRecord("Same.", "Different.", 0.0, 3, "deft-forum"),
    ]


@pytest.mark.parametrize(
    "line,reason",
    [
        ("main-news\th\t2013\t1\t5.5\ta\tb", "label '5.5' is outside [0, 5]"),
        ("main-news\th\t2013\t1\thigh\ta\tb", "label 'high' is not a number"),
        ("main-news\th\t2013\t1\t2.0\ta\tb\tc", "expected 7 tab-separated fields"),
    ],
)
def test_sts_malformed(tmp_path, line, reason):
    path = write(tmp_path, "sts-dev.csv", STS + line + "\n")
    err = error_for(path, format="sts")
    assert str(err).startswith(f"{path}:4: ") and reason in str(err)
