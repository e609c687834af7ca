#!/usr/bin/env python3
"""The seed texts' training loop from Python, data-parallel across the ranks of an mpirun.

    mpirun -np 2 -x PYTHONPATH=build/release/python -x LZ_NUM_THREADS=1 \\
        python3 examples/python/train_mlp_distributed.py [--epochs N] [--min-test-accuracy A]

Every rank starts from rank 0's parameters, takes its shard of every batch of 64 digits (the
data loader prepares it on a background thread), and steps with the gradients averaged over the
ranks (lz.dist.value_and_grad all-reduces them in buckets while the backward pass computes): all
ranks take the steps one process takes on the whole batches. One loss.item() per minibatch keeps
each rank's frontend from running ahead. Rank 0 prints the loss and test accuracy, both averaged
across the ranks, and the images per second of each epoch.
"""

import argparse
import os
import sys
import time

import lazuli as lz

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
BATCH = 64  # images per step, over all ranks


def load_digits():
    """Every fifth image for testing, the others for training (as examples/train_mlp.cpp)."""
    images = lz.load_npy(os.path.join(DATA, "digits_images.npy")).astype(lz.float32) / 16.0
    labels = lz.load_npy(os.path.join(DATA, "digits_labels.npy")).astype(lz.int64)
    test = list(range(0, labels.shape[0], 5))
    train = [i for i in range(labels.shape[0]) if i % 5 != 0]
    as_index = lambda rows: lz.asarray(rows).astype(lz.int64)  # noqa: E731
    return (lz.take(images, as_index(train), 0), lz.take(labels, as_index(train)),
            lz.take(images, as_index(test), 0), lz.take(labels, as_index(test)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--min-test-accuracy", type=float, default=-1)
    options = parser.parse_args()

    lz.dist.init()
    # Each rank computes on its own device: its GPU where there are GPUs (NCCL moves the
    # collectives), else the CPU (MPI moves them).
    lz.set_default_device(lz.dist.device())
    rank, ranks = lz.dist.rank(), lz.dist.world_size()
    train_images, train_labels, test_images, test_labels = load_digits()
    loader = lz.data.DataLoader([train_images, train_labels], batch_size=BATCH // ranks, seed=1,
                                shards=ranks, shard=rank)
    params = lz.dist.broadcast_parameters(lz.nn.mlp_parameters([64, 128, 10], seed=42))
    adam = lz.optim.Adam(learning_rate=3e-3)

    # This rank's part of the test images: the correct counts are summed across the ranks.
    count = test_labels.shape[0]
    mine = slice(count * rank // ranks, count * (rank + 1) // ranks)
    my_images, my_labels = test_images[mine], test_labels[mine]

    if rank == 0:
        print(f"digits on {ranks} ranks (rank 0 on {lz.dist.device()}): MLP 64-128-10, Adam, "
              f"batch {BATCH} ({BATCH // ranks} per rank)")
    accuracy = 0.0
    for epoch in range(options.epochs):
        start = time.perf_counter()
        total, batches = 0.0, 0
        for images, labels in loader:
            loss, grads = lz.dist.value_and_grad(
                lambda *p: lz.cross_entropy(lz.nn.mlp(list(p), images), labels), params)
            adam.step(params, grads)
            total += loss.item()  # the per-minibatch barrier
            batches += 1
        seconds = time.perf_counter() - start
        mean_loss = lz.dist.all_reduce(lz.asarray(total / batches), "mean").item()
        right = lz.sum((lz.argmax(lz.nn.mlp(params, my_images), 1) == my_labels).astype(lz.int64))
        accuracy = lz.dist.all_reduce(right).item() / count
        if rank == 0:
            print(f"epoch {epoch + 1:3d}  loss {mean_loss:.4f}  test accuracy "
                  f"{100 * accuracy:5.1f}%  {train_labels.shape[0] / seconds:8.0f} images/s")
    lz.dist.finalize()
    if accuracy < options.min_test_accuracy:
        if rank == 0:
            print(f"test accuracy {accuracy:.3f} is below {options.min_test_accuracy:.3f}",
                  file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
