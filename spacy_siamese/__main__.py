"""`python -m spacy_siamese`: the package's command line (see spacy_siamese.cli)."""

from .cli import app

if __name__ == "__main__":
    app(prog_name="python -m spacy_siamese")
