"""trellis.serving.batcher.Batcher on its own (no server, no KServe): batches form by size and by
latency, each request gets its rows back, and the fall-backs (a failing batch, an output whose
first dim is not the batch) give every request its own result or error."""
import asyncio
import threading

import numpy as np
import pytest

pytest.importorskip("trellis", reason="the trellis package was not built")
from trellis.serving.batcher import Batcher  # noqa: E402


class Recorder:
    """A model: Y = X * 2 and Z = X.sum(axis=1), recording the row count of every run."""

    def __init__(self, fail_rows=None, bad_output=False):
        self.runs = []
        self.fail_rows = fail_rows
        self.bad_output = bad_output
        self.lock = threading.Lock()

    def __call__(self, feed):
        x = feed["X"]
        with self.lock:
            self.runs.append(x.shape[0])
        if self.fail_rows is not None and x.shape[0] >= self.fail_rows:
            raise ValueError(f"refused a run of {x.shape[0]} rows")
        if (x < 0).any():
            raise ValueError("negative input")
        z = x.sum(axis=1)
        return [x * 2, z[:1] if self.bad_output else z]


def feed(rows, value):
    return {"X": np.full((rows, 3), value, np.float32)}


async def submit_all(batcher, feeds):
    return await asyncio.gather(*(batcher.submit(f) for f in feeds), return_exceptions=True)


def test_requests_are_batched_up_to_the_size_and_split_back():
    model = Recorder()
    batcher = Batcher("m", model, max_batch_size=4, max_latency_ms=1000)
    feeds = [feed(1, i) for i in range(8)]
    results = asyncio.run(submit_all(batcher, feeds))
    assert sorted(model.runs) == [4, 4]           # two full batches, no 1 s wait
    for f, (y, z) in zip(feeds, results):
        np.testing.assert_array_equal(y, f["X"] * 2)
        np.testing.assert_array_equal(z, f["X"].sum(axis=1))
    assert batcher.batches == 2 and batcher.batched_requests == 8


def test_a_partial_batch_runs_after_the_latency():
    model = Recorder()
    batcher = Batcher("m", model, max_batch_size=8, max_latency_ms=20)
    results = asyncio.run(submit_all(batcher, [feed(2, 1), feed(1, 2)]))
    assert model.runs == [3]
    np.testing.assert_array_equal(results[0][0], np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(results[1][0], np.full((1, 3), 4, np.float32))


def test_large_requests_and_different_shapes_run_apart():
    model = Recorder()
    batcher = Batcher("m", model, max_batch_size=4, max_latency_ms=10)
    other = {"X": np.ones((1, 5), np.float32)}
    results = asyncio.run(submit_all(batcher, [feed(5, 1), feed(1, 1), other]))
    assert sorted(model.runs) == [1, 1, 5]
    assert results[2][0].shape == (1, 5)


def test_a_failing_batch_gives_each_request_its_own_outcome():
    model = Recorder()
    batcher = Batcher("m", model, max_batch_size=3, max_latency_ms=1000)
    results = asyncio.run(submit_all(batcher, [feed(1, 1), feed(1, -1), feed(1, 3)]))
    # The batch fails on the negative row; each request is then run alone.
    assert model.runs[0] == 3 and sorted(model.runs[1:]) == [1, 1, 1]
    assert isinstance(results[1], ValueError)
    np.testing.assert_array_equal(results[0][0], np.full((1, 3), 2, np.float32))
    np.testing.assert_array_equal(results[2][0], np.full((1, 3), 6, np.float32))


def test_an_output_without_the_batch_dim_turns_batching_off():
    model = Recorder(bad_output=True)
    batcher = Batcher("m", model, max_batch_size=2, max_latency_ms=1000)
    results = asyncio.run(submit_all(batcher, [feed(1, 1), feed(1, 2)]))
    assert not batcher.enabled
    assert model.runs[0] == 2 and model.runs[1:] == [1, 1]
    np.testing.assert_array_equal(results[1][0], np.full((1, 3), 4, np.float32))
    asyncio.run(submit_all(batcher, [feed(1, 1), feed(1, 2)]))
    assert model.runs[3:] == [1, 1]               # no batches any more


def test_max_batch_size_below_two_is_refused():
    with pytest.raises(ValueError, match="max_batch_size must be >= 2"):
        Batcher("m", Recorder(), max_batch_size=1, max_latency_ms=5)
