from ..search.conftest import models  # noqa: F401  (the search tests' trained pipelines)
