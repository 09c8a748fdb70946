import gzip

import pytest

from spacy_siamese.corpora import DocumentFormatError, read_documents

NEWS = (
    "ID,TITLE,URL,PUBLISHER,CATEGORY,STORY,HOSTNAME,TIMESTAMP\n"
    "1,Fed official says weak data caused by weather,http://a,A,b,s1,a.com,1\n"
    '2,"Fed\'s Plosser: taper, not pause",http://b,B,b,s1,b.com,2\n'
    "3,Stocks fall in Europe,http://c,C,b,s2,c.com,3\n"
    "4,New phone unveiled,http://d,D,t,s3,d.com,4\n"
    "5,Phone maker shows new phone,http://e,E,t,s3,e.com,5\n"
)


def test_news_reader(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text(NEWS, encoding="utf8")
    docs = read_documents("news", path)
    assert len(docs) == 5 and docs[1].text == "Fed's Plosser: taper, not pause"
    assert docs[0].labels == ("s1",) and docs[0].group == "b"
    path.write_text(NEWS + "6,Too few fields,http://f\n7,,http://g,G,e,s4,g.com,7\n", encoding="utf8")
    with pytest.raises(DocumentFormatError, match=r"news.csv:7: expected 8 fields, found 3"):
        read_documents("news", path)
    with pytest.warns(UserWarning, match=r"Skipped 2 .*8: empty field\(s\) TITLE"):
        assert len(read_documents("news", path, lenient=True)) == 5
    path.write_text("id,title\n1,x\n", encoding="utf8")
    with pytest.raises(DocumentFormatError, match="header"):
        read_documents("news", path)


def test_news_line_endings_bom_and_multiline_title(tmp_path):
    path = tmp_path / "news.csv"
    text = "\ufeff" + NEWS.replace("Stocks fall in Europe", '"Stocks fall\nin Europe"')
    path.write_text(text.replace("\n", "\r\n"), encoding="utf8", newline="")
    docs = read_documents("news", path)
    assert [d.id for d in docs] == ["1", "2", "3", "4", "5"] and docs[2].text == "Stocks fall\r\nin Europe"


def test_news_a_cr_inside_a_line_is_text_or_named(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text(NEWS.replace("Stocks fall", '"Stocks\rfall').replace("Europe,", 'Europe",'), encoding="utf8")
    docs = read_documents("news", path)
    assert [d.id for d in docs] == ["1", "2", "3", "4", "5"] and docs[2].text == "Stocks\rfall in Europe"
    path.write_text(NEWS.replace("Stocks fall", "Stocks\rfall"), encoding="utf8")
    with pytest.raises(
        DocumentFormatError, match=r"news.csv:4: not valid CSV: a carriage return \(\\r\) inside an unquoted"
    ):
        read_documents("news", path)


def test_news_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "news.csv"
    path.write_bytes(NEWS.encode("utf8") + b"6,caf\xe9,http://f,F,e,s4,f.com,6\n")
    with pytest.raises(DocumentFormatError, match=r"news.csv:7: invalid UTF-8"):
        read_documents("news", path)
    with pytest.warns(UserWarning, match="Skipped 1"):
        assert len(read_documents("news", path, lenient=True)) == 5


def test_a_stray_quote_names_every_line_its_record_swallows(tmp_path):
    """An opening quote that closes lines later makes one record of several lines: the error
    names them all, so the stories on the swallowed lines are not lost without a word."""
    path = tmp_path / "news.csv"
    path.write_text(NEWS + '6,"Stray quote,http://f,F,e,s4,f.com,6\n7,Next story,http://g,G,e,s4,g.com,7\n8,x",u\n')
    with pytest.warns(UserWarning, match=r"7: expected 8 fields, found 3 \(one quoted field runs over lines 7-9\)"):
        assert len(read_documents("news", path, lenient=True)) == 5


def test_a_quote_inside_an_unquoted_title_is_not_silently_dropped(tmp_path):
    """`"He" said` is not valid CSV: Python's lax csv reader would read it as `He said`."""
    path = tmp_path / "news.csv"
    path.write_text(NEWS + '6,"Obama" says no,http://f,F,e,s4,f.com,6\n7,Next story,http://g,G,e,s4,g.com,7\n')
    with pytest.raises(DocumentFormatError, match=r"news.csv:7: not valid CSV: a quoted field's closing double quote"):
        read_documents("news", path)
    with pytest.warns(UserWarning, match="Skipped 1"):
        docs = read_documents("news", path, lenient=True)
    assert [d.id for d in docs] == ["1", "2", "3", "4", "5", "7"]


def test_a_field_over_the_csv_limit_is_one_skipped_record(tmp_path):
    path = tmp_path / "news.csv"
    path.write_text(NEWS + '6,"' + "x" * 200_000 + '",http://f,F,e,s4,f.com,6\n7,Next,http://g,G,e,s4,g.com,7\n')
    with pytest.raises(DocumentFormatError, match=r"news.csv:7: not valid CSV: field larger than field limit"):
        read_documents("news", path)
    with pytest.warns(UserWarning, match="Skipped 1"):
        assert [d.id for d in read_documents("news", path, lenient=True)][-1] == "7"


def test_a_gzipped_news_file_is_named_as_such(tmp_path):
    path = tmp_path / "news.csv.gz"
    path.write_bytes(gzip.compress(NEWS.encode("utf8")))
    with pytest.raises(DocumentFormatError, match=r"news.csv.gz:1: the file is gzip-compressed: decompress it first"):
        read_documents("news", path)
