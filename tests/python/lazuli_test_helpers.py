"""Helpers shared by lazuli's pytest suite: a tensor's values against an independent numpy
expectation."""

import numpy as np

import lazuli as lz


def values(tensor):
    """The tensor's values as a numpy array (a blocking point)."""
    assert isinstance(tensor, lz.Tensor), f"expected a lazuli.Tensor, got {type(tensor)}"
    return np.asarray(tensor)


def assert_close(tensor, expected, rtol=1e-5, atol=1e-6, dtype=None):
    """`tensor` has `expected`'s shape and values (and `dtype`, a lazuli dtype, when given);
    integer and bool values must be equal."""
    expected = np.asarray(expected)
    got = values(tensor)
    if dtype is not None:
        assert tensor.dtype == dtype, f"dtype {tensor.dtype}, expected {dtype}"
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
