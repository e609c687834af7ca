"""The numpy column of lazuli-bench: times one workload at one size and prints the median.

usage: numpy_reference.py WORKLOAD WARMUP REPEAT NAME:D0xD1:LOW:HIGH ...
Each input is float32, uniform in [LOW, HIGH), with the shape D0xD1 ("" for a 0-d input).
Prints the median wall time of REPEAT runs, in milliseconds, on the last line of stdout.
"""
import sys
import time

import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + np.float32(1e-5))


def mlp(x, w1, b1, w2, b2):
    hidden = np.maximum(x @ w1 + b1, np.float32(0))
    return softmax(hidden @ w2 + b2)


WORKLOADS = {
    "chain7": lambda a, b, c: ((a * b + c) * a - b) * np.float32(0.5) + c * c,
    "fma": lambda a, b, c: a * b + c,
    "sum": lambda a: a.sum(),
    "softmax": softmax,
    "layernorm": layernorm,
    "mlp": mlp,
}


def make_input(spec, rng):
    _, dims, low, high = spec.split(":")
    shape = tuple(int(d) for d in dims.split("x")) if dims else ()
    return rng.uniform(float(low), float(high), size=shape).astype(np.float32)


def main():
    workload, warmup, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    inputs = [make_input(spec, rng) for spec in sys.argv[4:]]
    function = WORKLOADS[workload]
    for _ in range(warmup):
        function(*inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function(*inputs)
        times.append((time.perf_counter() - start) * 1e3)
    print(float(np.median(times)))


if __name__ == "__main__":
    main()
