from spacy_siamese.corpora import read_pairs, stackexchange_text

from .util import write

STACKEXCHANGE = (
    "duplicate\tHow to add a directory to my path?<p>How do I add a directory to my <code>$PATH</code>"
    " in Ubuntu &amp; make it <em>permanent</em>? </p>  <p>Thanks.</p> "
    "\tHow to add /usr/local/bin to $PATH?<p>Show how you can add it.</p> \n"
    "non-duplicate\tWhat does Package <package> has no installation candidate mean?<p>What does"
    " the above error mean?</p>\tWhy is my screen black?<blockquote><p>Possible duplicate</p></blockquote>\n"
)


def test_stackexchange_strips_html_and_keeps_title(tmp_path):
    path = write(tmp_path, "askubuntu.tsv", STACKEXCHANGE)
    records = list(read_pairs(path, format="stackexchange"))
    assert [r.label for r in records] == [1.0, 0.0]
    assert records[0].text1 == (
        "How to add a directory to my path?\n"
        "How do I add a directory to my $PATH in Ubuntu & make it permanent? Thanks."
    )
    assert records[0].text2 == "How to add /usr/local/bin to $PATH?\nShow how you can add it."
    # Literal <...> in a title is kept; the body starts at the first block tag.
    assert records[1].text1.startswith("What does Package <package> has no installation candidate mean?\n")
    assert records[1].text2 == "Why is my screen black?\nPossible duplicate"
    for r in records:
        assert "<p>" not in r.text1 + r.text2 and "&amp;" not in r.text1


def test_stackexchange_text_without_body():
    assert stackexchange_text("Just a title  ") == "Just a title"
    assert stackexchange_text("Title<p>a<br>b</p><ul><li>c</li><li>d</li></ul>") == "Title\na b c d"
