"""The peer columns of lazuli-bench: one workload, in one framework, on the inputs lazuli-bench
wrote, timed; the result of the last run is written back for lazuli-bench to check.

usage: peer_reference.py FRAMEWORK WORKLOAD WARMUP REPEAT THREADS INPUTS OUTPUT SHAPE...
FRAMEWORK: numpy, jax (jax.jit), torch (eager), torch.compile or drjit (LLVM backend).
WORKLOAD: a name, or NAME:N for a loop of N iterations: those of the async suite (numpy), and
"train" (jax, torch): N SGD steps of an MLP classifier, the train suite's, whose result is the
last step's loss. "normal" draws standard normal numbers of its input's shape (numpy, torch,
jax), which the random suite checks by their moments.
INPUTS: the float32 inputs one after another, row-major, each of shape SHAPE (D0xD1, "" for 0-d).
OUTPUT: receives the last run's result, float32 row-major.
Prints the median wall time of REPEAT runs, in milliseconds, on the last line of stdout.
Exit status 3: the framework cannot be imported; 4: it has no form of the workload.
"""
import os
import sys
import time

import numpy as np


def mlp_logits(params, x, relu):
    """The logits of an MLP whose params are (weight (in, out), bias) per layer, `relu` between
    layers: the train suite's model, and the memory suite's (training_memory.py)."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = relu(h)
    return h


def numpy_framework(threads):
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def layernorm(x):
        centred = x - x.mean(axis=-1, keepdims=True)
        variance = (centred * centred).mean(axis=-1, keepdims=True)
        return centred / np.sqrt(variance + np.float32(1e-5))

    workloads = {
        "chain7": lambda a, b, c: ((a * b + c) * a - b) * np.float32(0.5) + c * c,
        "fma": lambda a, b, c: a * b + c,
        "sum": lambda a: a.sum(),
        "softmax": softmax,
        "layernorm": layernorm,
        "mlp": lambda x, w1, b1, w2, b2: softmax(np.maximum(x @ w1 + b1, np.float32(0)) @ w2 + b2),
        "wait_each": wait_each,
        "chain": chain,
        "train_step": train_steps,
        "normal": lambda x, rng=np.random.default_rng(7): rng.standard_normal(x.shape, dtype=np.float32),
    }
    return workloads, (lambda arrays: arrays), (lambda f, inputs: f(*inputs)), np.asarray


# The loops of the async suite, eager: each takes its iteration count first.


def wait_each(iterations, x):
    y = x
    for _ in range(iterations):
        y = x + np.float32(1)
    return y


def chain(iterations, x):
    for _ in range(iterations):
        x = x + np.float32(1)
    return x


def train_steps(steps, x, targets, w1, b1, w2, b2):
    """A 64-128-10 MLP trained `steps` SGD steps on one batch (training_step.h); returns w2."""
    rate = np.float32(0.1)
    scale = np.float32(1.0 / x.shape[0])
    for _ in range(steps):
        h = np.maximum(x @ w1 + b1, np.float32(0))
        logits = h @ w2 + b2
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        g = (e / e.sum(axis=-1, keepdims=True) - targets) * scale
        gh = np.where(h > 0, g @ w2.T, np.float32(0))
        w2 = w2 - rate * (h.T @ g)
        b2 = b2 - rate * g.sum(axis=0)
        w1 = w1 - rate * (x.T @ gh)
        b1 = b1 - rate * gh.sum(axis=0)
    return w2


def jax_framework(threads):
    import jax
    import jax.numpy as jnp

    def softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def layernorm(x):
        centred = x - x.mean(axis=-1, keepdims=True)
        variance = (centred * centred).mean(axis=-1, keepdims=True)
        return centred / jnp.sqrt(variance + jnp.float32(1e-5))

    plain = {
        "chain7": lambda a, b, c: ((a * b + c) * a - b) * jnp.float32(0.5) + c * c,
        "fma": lambda a, b, c: a * b + c,
        "sum": lambda a: a.sum(),
        "softmax": softmax,
        "layernorm": layernorm,
        "mlp": lambda x, w1, b1, w2, b2: softmax(jnp.maximum(x @ w1 + b1, 0) @ w2 + b2),
        "normal": lambda x: jax.random.normal(jax.random.PRNGKey(7), x.shape),
    }
    workloads = {name: jax.jit(f) for name, f in plain.items()}

    def loss_of(params, x, labels):
        h = mlp_logits(params, x, lambda h: jnp.maximum(h, 0))
        return jnp.mean(jax.nn.logsumexp(h, axis=-1) - jnp.take_along_axis(h, labels[:, None], -1)[:, 0])

    @jax.jit
    def train_step(params, x, labels):
        loss, grads = jax.value_and_grad(loss_of)(params, x, labels)
        return loss, [p - jnp.float32(0.1) * g for p, g in zip(params, grads)]

    def train(steps, x, labels, *params):
        labels = labels.astype(jnp.int32)
        params = list(params)
        for _ in range(steps):
            loss, params = train_step(params, x, labels)
            float(loss)  # the barrier of each step
        return loss.reshape(1)

    workloads["train"] = train
    prepare = lambda arrays: [jax.device_put(a) for a in arrays]
    run = lambda f, inputs: f(*inputs).block_until_ready()
    return workloads, prepare, run, np.asarray


def torch_framework(threads, compiled=False):
    import torch

    torch.set_num_threads(threads)

    def softmax(x):
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)

    def layernorm(x):
        centred = x - x.mean(dim=-1, keepdim=True)
        variance = (centred * centred).mean(dim=-1, keepdim=True)
        return centred / torch.sqrt(variance + 1e-5)

    plain = {
        "chain7": lambda a, b, c: ((a * b + c) * a - b) * 0.5 + c * c,
        "fma": lambda a, b, c: a * b + c,
        "sum": lambda a: a.sum(),
        "softmax": softmax,
        "layernorm": layernorm,
        "mlp": lambda x, w1, b1, w2, b2: softmax(torch.relu(x @ w1 + b1) @ w2 + b2),
    }
    workloads = {name: torch.compile(f) for name, f in plain.items()} if compiled else plain
    if not compiled:
        workloads["normal"] = lambda x: torch.randn(x.shape)

    @torch.enable_grad()  # run() turns gradients off for the other workloads
    def train(steps, x, labels, *initial):
        labels = labels.long()
        params = [p.clone().requires_grad_() for p in initial]
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy(mlp_logits(params, x, torch.relu), labels)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= 0.1 * g
            loss.item()  # the barrier of each step
        return loss.detach().reshape(1)

    if not compiled:
        workloads["train"] = train
    prepare = lambda arrays: [torch.from_numpy(a) for a in arrays]

    def run(f, inputs):
        with torch.no_grad():
            return f(*inputs)

    return workloads, prepare, run, lambda t: t.numpy()


def drjit_framework(threads):
    import drjit as dr
    from drjit.llvm import TensorXf

    dr.set_thread_count(threads)

    def softmax(x):
        e = dr.exp(x - dr.max(x, axis=1)[:, None])
        return e / dr.sum(e, axis=1)[:, None]

    def layernorm(x):
        columns = x.shape[1]
        centred = x - (dr.sum(x, axis=1) / columns)[:, None]
        variance = dr.sum(centred * centred, axis=1) / columns
        return centred / dr.sqrt(variance + 1e-5)[:, None]

    workloads = {
        "chain7": lambda a, b, c: ((a * b + c) * a - b) * 0.5 + c * c,
        "fma": lambda a, b, c: dr.fma(a, b, c),
        "sum": lambda a: dr.sum(a, axis=None),
        "softmax": softmax,
        "layernorm": layernorm,
        "mlp": lambda x, w1, b1, w2, b2: softmax(dr.maximum(x @ w1 + b1, 0) @ w2 + b2),
    }
    prepare = lambda arrays: [TensorXf(a) for a in arrays]

    def run(f, inputs):
        result = f(*inputs)
        dr.eval(result)
        dr.sync_thread()  # the LLVM backend runs kernels asynchronously
        return result

    return workloads, prepare, run, lambda t: np.array(t)


FRAMEWORKS = {
    "numpy": numpy_framework,
    "jax": jax_framework,
    "torch": torch_framework,
    "torch.compile": lambda threads: torch_framework(threads, compiled=True),
    "drjit": drjit_framework,
}


def read_inputs(path, shapes):
    flat = np.fromfile(path, dtype=np.float32)
    arrays, offset = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        arrays.append(flat[offset:offset + size].reshape(shape).copy())
        offset += size
    return arrays


def main():
    framework, workload = sys.argv[1], sys.argv[2]
    warmup, repeat, threads = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    inputs_path, output_path = sys.argv[6], sys.argv[7]
    shapes = [tuple(int(d) for d in text.split("x")) if text else () for text in sys.argv[8:]]
    try:
        workloads, prepare, run, to_numpy = FRAMEWORKS[framework](threads)
    except ImportError as error:
        print(f"{framework} cannot be imported: {error}", file=sys.stderr)
        sys.exit(3)
    name, _, iterations = workload.partition(":")
    if name not in workloads or (iterations and framework != "numpy" and name != "train"):
        print(f"{framework} has no form of {workload} here", file=sys.stderr)
        sys.exit(4)
    function = workloads[name]
    if iterations:
        function = lambda *arrays, loop=function: loop(int(iterations), *arrays)
    inputs = prepare(read_inputs(inputs_path, shapes))
    result = None
    for _ in range(max(warmup, 1)):  # at least one: jit compilation is not timed
        result = run(function, inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run(function, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    np.asarray(to_numpy(result), dtype=np.float32).tofile(output_path)
    print(float(np.median(times)))


if __name__ == "__main__":
    main()
