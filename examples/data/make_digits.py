#!/usr/bin/env python3
"""Writes digits_images.npy and digits_labels.npy next to itself, from scikit-learn's copy of the
UCI handwritten digits (see README.md here). Needs numpy and scikit-learn; the files are checked
in, so neither is needed to build or run lazuli.

    python3 examples/data/make_digits.py
"""

import os

import numpy as np
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))

digits = load_digits()
np.save(os.path.join(HERE, "digits_images.npy"), digits.data.astype(np.float32))  # (1797, 64), 0..16
np.save(os.path.join(HERE, "digits_labels.npy"), digits.target.astype(np.int64))  # (1797,), 0..9
