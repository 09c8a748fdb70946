import csv

import pytest

from spacy_siamese.corpora import PairRecord, read_pairs
from spacy_siamese.corpora.tsv import MAX_RECORD_LINES

from .util import error_for, read_lenient, write

QUORA_OFFICIAL = (
    "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
    "0\t1\t2\tWhat is the step by step guide to invest in share market?\tHow do I invest in shares?\t0\n"
    '1\t3\t4\t"What does ""positive atheism"" mean?"\t"Is this a question\nspanning two lines?"\t1\n'
    "2\t5\t6\tHow do I lose weight fast?\tWhat is the best way to reduce weight fast?\t1\n"
)
QUORA_MIRROR = (
    "label\tquestion1\tquestion2\tquora_id\n"
    "0\tWhat causes stool color to change to yellow?\tWhat can cause stool to come out as little balls?\t360472\n"
    '0\tHow is being gay less moral than divorce?\t"Why do they confuse it with ""positive atheism""?"\t114030\n'
    '1\t"How do I get rid of acne and acne…?\tHow do I get rid of acne naturally?\t6300\n'
    "1\tWhich are the best motivational videos?\tWhat are some of the best motivational clips?\t\n"
)


def test_official_quora_header_with_quoted_multiline_field(tmp_path):
    path = write(tmp_path, "quora_duplicate_questions.tsv", QUORA_OFFICIAL)
    records = list(read_pairs(path, format="tsv"))
    assert [r.line for r in records] == [2, 3, 5]
    assert [r.label for r in records] == [0.0, 1.0, 1.0]
    assert records[1].text1 == 'What does "positive atheism" mean?'
    assert records[1].text2 == "Is this a question\nspanning two lines?"
    assert records[2].text1 == "How do I lose weight fast?"
    assert all(isinstance(r, PairRecord) and isinstance(r.label, float) for r in records)


def test_mirror_header(tmp_path):
    path = write(tmp_path, "train.tsv", QUORA_MIRROR)
    records = list(read_pairs(path, format="tsv"))
    assert len(records) == 4
    assert records[0] == PairRecord(
        "What causes stool color to change to yellow?", "What can cause stool to come out as little balls?", 0.0, 2
    )
    assert records[1].text2 == 'Why do they confuse it with "positive atheism"?'
    # An opening quote that is never closed is raw text, not CSV quoting.
    assert records[2].text1 == '"How do I get rid of acne and acne…?'
    assert records[2].line == 4 and records[3].line == 5


@pytest.mark.parametrize("c1,c2,cl", [("text1", "text2", "label"), ("Sentence1", "sentence2", "is_duplicate")])
def test_other_column_names_in_any_order(tmp_path, c1, c2, cl):
    path = write(tmp_path, "pairs.tsv", f"{cl}\t{c2}\t{c1}\n0.5\tsecond\tfirst\n")
    assert list(read_pairs(path)) == [PairRecord("first", "second", 0.5, 2)]


def test_duplicated_header_column_is_an_error(tmp_path):
    path = write(tmp_path, "pairs.tsv", "label\tquestion1\tquestion1\tquestion2\n1\ta\tb\tc\n")
    err = error_for(path, format="tsv", lenient=True)
    assert str(err).startswith(f"{path}:1: the header names column 'question1' more than once (columns 2 and 3)")
    # a duplicated column the reader does not use is fine
    path = write(tmp_path, "ok.tsv", "id\tlabel\tquestion1\tquestion2\tid\n7\t1\ta\tb\t7\n")
    assert list(read_pairs(path)) == [PairRecord("a", "b", 1.0, 2)]


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_line_endings_and_bom(tmp_path, end):
    text = "\ufeff" + QUORA_OFFICIAL.replace("\n", end)
    records = list(read_pairs(write(tmp_path, "q.tsv", text)))
    assert [r.line for r in records] == [2, 3, 5]
    assert records[1].text2 == f"Is this a question{end}spanning two lines?"


def test_a_cr_inside_a_line_is_text(tmp_path):
    text = QUORA_OFFICIAL.replace("lose weight", "lose\rweight").replace("\nspanning", "\rspanning")
    records = list(read_pairs(write(tmp_path, "q.tsv", text)))
    assert [r.line for r in records] == [2, 3, 4]
    assert (
        records[1].text2 == "Is this a question\rspanning two lines?"
        and records[2].text1 == "How do I lose\rweight fast?"
    )


# Issue 14, defect 2: an unclosed quote must not swallow the following lines.


def _unclosed_quote_file(tmp_path):
    """62 lines: the header, a line whose first field opens a double quote that never
    closes, 59 ordinary records and one whose first field ends with a quoted word."""
    lines = ["question1\tquestion2\tis_duplicate", '"An opening quote that never closes\tsecond']
    lines += [f"Question number {i}?\tAnother question {i}?\t{i % 2}" for i in range(3, 62)]
    lines += ['The last one, "quoted"\tpartner\t1']
    return write(tmp_path, "quora.tsv", "\n".join(lines) + "\n")


def test_unclosed_quote_does_not_swallow_lines(tmp_path):
    path = _unclosed_quote_file(tmp_path)
    err = error_for(path)
    assert str(err).startswith(f"{path}:2: expected 3 tab-separated fields")
    assert "field 1 opens a double quote that is not closed" in str(err)
    records, skipped = read_lenient(path)
    assert skipped == 1 and len(records) == 60
    assert [r.line for r in records] == list(range(3, 63))
    assert records[-1] == PairRecord('The last one, "quoted"', "partner", 1.0, 62)


def test_unclosed_quote_at_end_of_file(tmp_path):
    path = write(tmp_path, "q.tsv", 'label\tquestion1\tquestion2\n1\ta\tb\n0\t"never closed\n')
    err = error_for(path)
    assert str(err).startswith(f"{path}:3: expected 3 tab-separated fields")
    assert "field 2 opens a double quote that is never closed" in str(err)


def test_quote_that_closes_after_a_record_of_its_own_is_ambiguous(tmp_path):
    # Read as CSV, lines 2-3 are one record; read line by line, they are two.
    path = write(tmp_path, "q.tsv", 'label\tquestion1\tquestion2\n0\t"a\tb\n1\tc"\td\n')
    err = error_for(path)
    assert str(err).startswith(f"{path}:2: field 2 (question1) opens a double quote that closes on line 3")
    assert "line 3 reads as a record of its own" in str(err)


def test_quoted_field_over_many_lines(tmp_path):
    body = "\n".join(f"line {i} of a long question" for i in range(300))
    path = write(tmp_path, "q.tsv", f'label\tquestion1\tquestion2\n1\t"{body}"\tshort\n0\tx\ty\n')
    assert list(read_pairs(path)) == [PairRecord(body, "short", 1.0, 2), PairRecord("x", "y", 0.0, 302)]


def test_quoted_field_over_too_many_lines(tmp_path):
    body = "\n".join(["x"] * (MAX_RECORD_LINES + 5))
    path = write(tmp_path, "q.tsv", f'label\tquestion1\tquestion2\n1\t"{body}"\tshort\n')
    err = error_for(path)
    assert str(err).startswith(f"{path}:2: expected 3 tab-separated fields (label, question1, question2), found 2")
    assert f"is not closed within {MAX_RECORD_LINES} lines" in str(err)


def test_multiline_record_with_wrong_field_count_names_its_lines(tmp_path):
    text = QUORA_OFFICIAL + '3\t7\t8\t"An open quote\nover\nlines"\t9\n'
    path = write(tmp_path, "quora.tsv", text)
    err = error_for(path)
    assert str(err).startswith(f"{path}:6: expected 6 tab-separated fields")
    assert "read as CSV with a quoted field over lines 6-8, the record has 5 fields" in str(err)


def test_strict_never_returns_fewer_records_than_data_lines(tmp_path):
    lines = ["label\tquestion1\tquestion2"] + [f'{i % 2}\t"q{i}\tp{i}' for i in range(50)]
    path = write(tmp_path, "q.tsv", "\n".join(lines) + "\n")
    records = list(read_pairs(path))  # each line has 3 fields: its quotes are raw text
    assert len(records) == 50 and records[7].text1 == '"q7'


def test_quoted_record_over_lines_beyond_the_csv_field_limit_names_the_line(tmp_path):
    huge = "x" * (csv.field_size_limit() + 1)
    path = write(tmp_path, "q.tsv", f'label\tquestion1\tquestion2\n1\t"{huge}"\t"two\nlines"\n')
    err = error_for(path)
    assert str(err).startswith(f"{path}:2: field 3 (question2) opens a double quote that cannot be read as CSV")
    assert "field larger than field limit" in str(err)
    # on one line the field is read without the csv module
    path = write(tmp_path, "q.tsv", f'label\tquestion1\tquestion2\n1\t"{huge}"\t"one line"\n')
    assert list(read_pairs(path)) == [PairRecord(huge, "one line", 1.0, 2)]
