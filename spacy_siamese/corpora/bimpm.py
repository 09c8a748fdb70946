"""BiMPM's Quora split: no header, `label<TAB>text1<TAB>text2<TAB>id`, labels 0/1,
text tokenized by Stanford CoreNLP. PTB escapes are undone and the text detokenized."""

import re
from pathlib import Path
from typing import Iterator, List, Tuple

from .base import PairItem, parse_lines, scaled_label, split_fields

NAME = "bimpm"
COLUMNS = ("label", "text1", "text2", "id")


def read_bimpm(path: Path) -> Iterator[PairItem]:
    return parse_lines(path, _parse_line)


def looks_like(fields: List[str]) -> bool:
    return len(fields) == 4 and fields[0].strip() in ("0", "1")


def _parse_line(line: str) -> Tuple[str, str, float]:
    label, text1, text2, _ = split_fields(line, COLUMNS)
    return detokenize_ptb(text1), detokenize_ptb(text2), scaled_label(label, binary=True)


_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_PTB_QUOTES = ("``", "''")
_CLITICS = {"'s", "'m", "'re", "'ve", "'ll", "'d", "n't"}
_APOSTROPHE_SUFFIXES = {"s", "t", "m", "re", "ve", "ll", "d"}
_NO_SPACE_BEFORE = re.compile(r"^(?:[.,?!:;]+|[)\]}%])$")
_NO_SPACE_AFTER = {"(", "[", "{", "$", "\\"}
_MATH_CLOSE = re.compile(r"\[/ math\]")


def detokenize_ptb(text: str) -> str:
    """Undo Stanford CoreNLP / PTB tokenization: escapes, quotes and the spaces
    around punctuation, so the text reads like the raw original."""
    tokens = _undo_csv_quoting([_PTB_ESCAPES.get(t, t) for t in text.split(" ") if t])
    out: List[str] = []
    glue = False  # the previous token asked for no space after it
    double_open = single_open = False
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        attach, glue_next = glue, False
        if tok == "``":
            tok, double_open, glue_next = '"', True, True
        elif tok in ("''", '"'):
            if double_open:
                attach, double_open = True, False
            elif prev[-1:].isdigit() and (tokens[i - 2 : i - 1] == ["'"] or _NO_SPACE_BEFORE.match(nxt or ".")):
                attach = True  # inches: 5'8" or 6"
            else:  # an opening quote written as ''
                double_open, glue_next = True, True
            tok = '"'
        elif tok in ("`", "'") and nxt.lower() in _APOSTROPHE_SUFFIXES:  # what ' s
            tok, attach, glue_next = "'", True, True
        elif tok == "`":
            tok, single_open, glue_next = "'", True, True
        elif tok == "'":
            if single_open:
                attach, single_open = True, False
            elif prev[-1:].isdigit():  # feet: 5'8"
                attach, glue_next = True, nxt[:1].isdigit()
            elif prev[-1:] in ("s", "S"):  # plural possessive: the Jews'
                attach = True
        elif tok.lower() in _CLITICS or _NO_SPACE_BEFORE.match(tok):
            attach = True
        elif tok in _NO_SPACE_AFTER:
            glue_next = True
        if out and not attach:
            out.append(" ")
        out.append(tok)
        glue = glue_next
    return _MATH_CLOSE.sub("[/math]", "".join(out))


def _undo_csv_quoting(tokens: List[str]) -> List[str]:
    """BiMPM tokenized some Quora texts with their CSV quoting: `"say ""hi"" now"`
    became `` `` say '' `` hi '' '' now '' ``. Drop the outer quotes and turn each
    doubled quote back into one '"' (opening or closing, decided later)."""
    if len(tokens) < 3 or tokens[0] != "``" or tokens[-1] != "''":
        return tokens
    inner, out, i = tokens[1:-1], [], 0
    while i < len(inner):
        if inner[i] in _PTB_QUOTES and i + 1 < len(inner) and inner[i + 1] in _PTB_QUOTES:
            out.append('"')
            i += 2
        else:
            out.append(inner[i])
            i += 1
    return out if len(out) < len(inner) else tokens
