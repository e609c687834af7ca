"""Fixtures of lazuli's pytest suite (run with the built package first on PYTHONPATH:
PYTHONPATH=build/release/python .venv/bin/python -m pytest -q tests/python)."""

import os
import sys

import numpy as np
import pytest

import lazuli as lz

# The tests import their helpers (lazuli_test_helpers) from this folder, whichever import mode
# pytest runs in.
if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def cuda_device():
    """CUDA device 0, for a test that runs there. Without one the test skips, saying why, or, under
    LAZULI_REQUIRE_CUDA=1 (the run on the CUDA emulation), fails: a GPU run whose tests all
    skipped must not pass."""
    if not lz.cuda.is_available():
        why = "no CUDA device: " + (lz.cuda.unavailable_reason() or "none found")
        if os.environ.get("LAZULI_REQUIRE_CUDA") == "1":
            pytest.fail("LAZULI_REQUIRE_CUDA=1, but this GPU test would skip: " + why)
        pytest.skip(why)
    return lz.Device("cuda:0")


@pytest.fixture(autouse=True)
def _no_background_work_left():
    """Each test starts and ends with no work in flight, so that one test's background failure or
    callback never shows in another."""
    lz.waitall()
    yield
    lz.waitall()
