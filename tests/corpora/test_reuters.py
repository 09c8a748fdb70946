import gzip

import pytest

from spacy_siamese.corpora import DocumentFormatError, read_documents

from .util import make_tar

SGM = """<!DOCTYPE lewis SYSTEM "lewis.dtd">
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="1" NEWID="1">
<DATE>26-FEB-1987</DATE>
<TOPICS><D>cocoa</D></TOPICS>
<TEXT>&#2;
<TITLE>BAHIA COCOA REVIEW</TITLE>
<BODY>Showers continued &lt;in&gt; the cocoa zone.
 Reuter
&#3;</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="2" NEWID="2">
<TOPICS><D>grain</D><D>wheat</D></TOPICS>
<TEXT TYPE="UNPROC">&#2;
WHEAT EXPORTS RISE
</TEXT>
</REUTERS>
<REUTERS TOPICS="NO" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="3" NEWID="3">
<TOPICS></TOPICS>
<TEXT><TITLE>NO TOPIC</TITLE><BODY>Ignored by ModApte.</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="PUBLISHED-TESTSET" OLDID="4" NEWID="4">
<TOPICS><D>wheat</D></TOPICS>
<TEXT><TITLE>WHEAT TEST</TITLE><BODY>A test document.</BODY></TEXT>
</REUTERS>
"""
BAD_BLOCK = """<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" OLDID="5">
<TOPICS><D>grain</D></TOPICS>
<TEXT><TITLE>NO NEWID</TITLE></TEXT>
</REUTERS>
"""


def test_reuters_reader_modapte(tmp_path):
    (tmp_path / "reut2-000.sgm").write_bytes(SGM.encode("latin-1"))
    train = read_documents("reuters", tmp_path, split="train")
    assert [d.id for d in train] == ["NEWID=1", "NEWID=2"]
    assert train[0].text.startswith("BAHIA COCOA REVIEW\nShowers continued <in> the cocoa zone.")
    assert train[1].labels == ("grain", "wheat") and train[1].text == "WHEAT EXPORTS RISE"
    assert [d.id for d in read_documents("reuters", tmp_path, split="test")] == ["NEWID=4"]
    assert len(read_documents("reuters", tmp_path, split="all")) == 3


def test_reuters_malformed_block(tmp_path):
    (tmp_path / "reut2-000.sgm").write_text(SGM + BAD_BLOCK, encoding="latin-1")
    with pytest.raises(DocumentFormatError, match=r"reut2-000.sgm:25: <REUTERS> tag lacks attribute\(s\) NEWID"):
        read_documents("reuters", tmp_path)
    (tmp_path / "reut2-000.sgm").write_text(SGM + '<REUTERS NEWID="9">unclosed', encoding="latin-1")
    with pytest.raises(DocumentFormatError, match="not closed"):
        read_documents("reuters", tmp_path)


def test_reuters_reader_tar_archive(tmp_path):
    """The official reuters21578.tar.gz is read like the directory of .sgm files."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "reut2-000.sgm").write_bytes(SGM.encode("latin-1"))
    archive = make_tar(
        tmp_path / "reuters21578.tar.gz", [("README.txt", "readme"), ("reut2-000.sgm", SGM.encode("latin-1"))]
    )
    assert read_documents("reuters", archive) == read_documents("reuters", tmp_path / "dir")
    bad = make_tar(tmp_path / "bad.tar.gz", [("reut2-000.sgm", (SGM + BAD_BLOCK).encode("latin-1"))])
    with pytest.raises(DocumentFormatError, match=r"bad.tar.gz:reut2-000.sgm:25: <REUTERS> tag lacks"):
        read_documents("reuters", bad)
    empty = make_tar(tmp_path / "empty.tar.gz", [("README.txt", "readme")])
    with pytest.raises(DocumentFormatError, match="no reut2-\\*.sgm files in this archive"):
        read_documents("reuters", empty)


def test_a_gzipped_sgm_file_is_named_as_such(tmp_path):
    path = tmp_path / "reut2-000.sgm.gz"
    path.write_bytes(gzip.compress(SGM.encode("latin-1")))
    with pytest.raises(DocumentFormatError, match=r"reut2-000.sgm.gz: the file is gzip-compressed"):
        read_documents("reuters", path)
