#!/usr/bin/env python3
"""The Python side of lazuli-bench's memory suite: one framework's training steps, in a process
of its own, and what they cost in memory.

    python training_memory.py FRAMEWORK OPTIMIZER STEPS

FRAMEWORK is lazuli (the Python package, found through PYTHONPATH), torch or jax; OPTIMIZER adam
or sgd. The model is memory_suite.cpp's: an MLP 2048-4096-4096-4096-10 (160 MiB of float32
parameters) at batch 256, Glorot-uniform weights and zero biases, labels i % 10. Each step ends
with the loss read back (one barrier per step). Prints, one per line: `peak_growth_bytes N` (the
peak resident memory over the steps, VmHWM reset through /proc/self/clear_refs, less the
resident memory before the parameters existed), `step_seconds S...`, `losses L...` and
`page_faults F...` (minor page faults of each step: pages of fresh memory touched). Exits with
3 when the framework does not import.

PyTorch is eager with torch.optim; JAX is one jitted step with the parameters and the optimizer
state donated.
"""

import os
import resource
import sys
import time

from peer_reference import mlp_logits  # the same directory, here and in the build folder

LAYERS = [2048, 4096, 4096, 4096, 10]
BATCH = 256
RATE = 1e-3


def resident_bytes(field):
    """VmRSS or VmHWM of this process, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field + " not in /proc/self/status")


def reset_peak():
    """Sets VmHWM to the current VmRSS (Linux 4.0 and later)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def lazuli_steps(optimizer, steps, record):
    import lazuli as lz
    import numpy as np

    x = lz.random_normal([BATCH, LAYERS[0]], 1)
    labels = lz.asarray(np.arange(BATCH) % LAYERS[-1])
    lz.waitall()
    record("baseline")
    params = []
    for layer, (fan_in, fan_out) in enumerate(zip(LAYERS[:-1], LAYERS[1:])):
        params += [lz.nn.glorot_uniform([fan_in, fan_out], 7 + layer), lz.zeros([fan_out])]
    lz.waitall()
    opt = lz.optim.Adam(learning_rate=RATE) if optimizer == "adam" else lz.optim.SGD(learning_rate=RATE)

    def loss_of(*p):
        return lz.cross_entropy(lz.nn.mlp(list(p), x), labels)

    for _ in range(steps):
        loss, grads = lz.value_and_grad(loss_of, params)
        opt.step(params, grads)
        del grads
        record(loss.item())


def torch_steps(optimizer, steps, record):
    import torch

    torch.set_num_threads(int(os.environ.get("LZ_NUM_THREADS", os.cpu_count())))
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, LAYERS[0], generator=generator)
    labels = torch.arange(BATCH) % LAYERS[-1]
    record("baseline")
    params = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:]):
        bound = (6.0 / (fan_in + fan_out)) ** 0.5
        params.append((torch.rand(fan_in, fan_out, generator=generator) * 2 - 1).mul_(bound).requires_grad_())
        params.append(torch.zeros(fan_out, requires_grad=True))
    opt = torch.optim.Adam(params, lr=RATE) if optimizer == "adam" else torch.optim.SGD(params, lr=RATE)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(mlp_logits(params, x, torch.relu), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        record(loss.item())


def jax_steps(optimizer, steps, record):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(1)
    x = jax.random.normal(key, (BATCH, LAYERS[0]))
    labels = jnp.arange(BATCH) % LAYERS[-1]
    x.block_until_ready()
    record("baseline")
    params = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:]):
        key, sub = jax.random.split(key)
        bound = (6.0 / (fan_in + fan_out)) ** 0.5
        params.append(jax.random.uniform(sub, (fan_in, fan_out), minval=-bound, maxval=bound))
        params.append(jnp.zeros(fan_out))

    def loss_of(p):
        logp = jax.nn.log_softmax(mlp_logits(p, x, jax.nn.relu))
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    if optimizer == "adam":
        state = ([jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0)

        def step(p, state):
            m, v, t = state
            loss, g = jax.value_and_grad(loss_of)(p)
            t = t + 1
            m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
            v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
            c1 = 1 - 0.9**t
            c2 = 1 - 0.999**t
            p = [q - RATE * (a / c1) / (jnp.sqrt(b / c2) + 1e-8) for q, a, b in zip(p, m, v)]
            return loss, p, (m, v, t)

        step = jax.jit(step, donate_argnums=(0, 1))
    else:
        state = ()

        def step(p, state):
            loss, g = jax.value_and_grad(loss_of)(p)
            return loss, [q - RATE * d for q, d in zip(p, g)], state

        step = jax.jit(step, donate_argnums=(0,))
    for _ in range(steps):
        loss, params, state = step(params, state)
        record(float(loss))


def main():
    framework, optimizer, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    step_seconds, losses, page_faults = [], [], []
    clock = [0.0]
    baseline = [0]
    faults = [0]

    def record(event):
        if event == "baseline":
            baseline[0] = resident_bytes("VmRSS")
            reset_peak()
        else:
            step_seconds.append(time.perf_counter() - clock[0])
            losses.append(event)
            page_faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults[0])
        clock[0] = time.perf_counter()
        faults[0] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    try:
        {"lazuli": lazuli_steps, "torch": torch_steps, "jax": jax_steps}[framework](optimizer, steps, record)
    except ImportError as missing:
        print(f"{framework} does not import: {missing}", file=sys.stderr)
        sys.exit(3)
    print("peak_growth_bytes", resident_bytes("VmHWM") - baseline[0])
    print("step_seconds", *step_seconds)
    print("losses", *losses)
    print("page_faults", *page_faults)


if __name__ == "__main__":
    main()
