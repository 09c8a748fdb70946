import numpy
import pytest

from spacy_siamese.space import COSINE, VectorSpace


@pytest.mark.parametrize("magnitude", [1e-30, 1e-3, 1.0, 1e20, 1e37])
def test_cosine_space_normalises_vectors_of_any_float32_magnitude(magnitude):
    """In float32 the squared norm overflowed for huge vectors (which became zeros) and vanished
    for tiny ones (which stayed unnormalised)."""
    vectors = numpy.array([[3.0, 4.0], [-1.0, 0.0], [0.0, 0.0]], dtype="float32") * numpy.float32(magnitude)
    out = VectorSpace(COSINE).transform(vectors)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out, [[0.6, 0.8], [-1.0, 0.0], [0.0, 0.0]], rtol=1e-6)
