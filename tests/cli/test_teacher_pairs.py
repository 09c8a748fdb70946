"""`python -m spacy_siamese teacher-pairs`: its arguments (the pairs themselves are tested in
tests/teacher/test_pairs.py)."""

import pytest

from .conftest import invoke


@pytest.mark.parametrize(
    "option,value",
    [("--max-texts", -1), ("--max-pairs", -1), ("--top-k", 0), ("--random-pairs", -1)],  # -1 texts dropped the last one
)
def test_counts_out_of_range_are_refused_before_the_teacher_runs(files, tmp_path, option, value):
    result = invoke("teacher-pairs", "any-teacher", files / "dev.jsonl", "-o", tmp_path / "t.jsonl", option, value)
    assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output
    assert not (tmp_path / "t.jsonl").exists()
