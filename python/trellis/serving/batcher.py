"""Server-side batching of concurrent requests for ``trellis.serving``, on asyncio.

KServe's batcher is a sidecar (the ``batcher:`` field of an InferenceService, KServe's agent in
front of the model container) that is not part of the in-process ``kserve.Model`` API, so the
server batches itself: requests to one model whose inputs agree in everything but the first
(batch) dim wait in a queue until the rows waiting reach ``max_batch_size`` or the first of them
has waited ``max_latency_ms``; their inputs are then concatenated along dim 0, run once, and each
request gets back its slice of every output.

A request of ``max_batch_size`` rows or more runs alone. If a batched run fails, or an output
does not have the batch's row count as its first dim, every request of that batch is run on its
own (so each gets its own result or error), and batching is turned off for the model in the
latter case. Batching assumes the rows of a batch do not affect each other, which holds for
inference graphs whose first dim is the batch; turn it off for a model (``max_batch_size`` 1)
where it does not.
"""

import asyncio
import logging
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["Batcher"]

log = logging.getLogger("trellis.serving")

Feed = Dict[str, np.ndarray]
RunFn = Callable[[Feed], List[np.ndarray]]


class _Pending:
    __slots__ = ("items", "rows", "timer")

    def __init__(self) -> None:
        self.items: List[Tuple[Feed, int, asyncio.Future]] = []
        self.rows = 0
        self.timer: Optional[asyncio.TimerHandle] = None


class Batcher:
    """Collects concurrent ``submit`` calls into batched runs of ``run``.

    Args:
        name: the model's name (for log messages).
        run: a blocking, thread-safe function running the model on a feed (``InferenceSession.run``
            with all outputs); it is called in the event loop's default executor.
        max_batch_size: the most rows one batched run takes (>= 2).
        max_latency_ms: the longest a request waits for others before its batch runs.
    """

    def __init__(self, name: str, run: RunFn, max_batch_size: int, max_latency_ms: float) -> None:
        if max_batch_size < 2:
            raise ValueError(f"Batcher for model '{name}': max_batch_size must be >= 2, got {max_batch_size}")
        self.name = name
        self._run = run
        self.max_batch_size = max_batch_size
        self.max_latency_s = max_latency_ms / 1000.0
        self.enabled = True
        self._pending: Dict[tuple, _Pending] = {}
        # Counters, for tests and logs: batched runs, the requests and rows they held.
        self.batches = 0
        self.batched_requests = 0

    @staticmethod
    def _key(feed: Feed) -> tuple:
        return tuple(sorted((name, a.dtype.str, a.shape[1:]) for name, a in feed.items()))

    async def submit(self, feed: Feed) -> List[np.ndarray]:
        """Runs ``feed`` (every input with the same first dim, its row count), alone or in a
        batch, and returns all outputs for it."""
        loop = asyncio.get_running_loop()
        rows = next(iter(feed.values())).shape[0]
        if not self.enabled or rows >= self.max_batch_size:
            return await loop.run_in_executor(None, self._run, feed)
        key = self._key(feed)
        pending = self._pending.get(key)
        if pending is not None and pending.rows + rows > self.max_batch_size:
            self._flush(key)
            pending = None
        if pending is None:
            pending = self._pending[key] = _Pending()
        future = loop.create_future()
        pending.items.append((feed, rows, future))
        pending.rows += rows
        if pending.rows >= self.max_batch_size or self.max_latency_s == 0:
            self._flush(key)
        elif pending.timer is None:
            pending.timer = loop.call_later(self.max_latency_s, self._flush, key)
        return await future

    def _flush(self, key: tuple) -> None:
        pending = self._pending.pop(key, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        asyncio.get_running_loop().create_task(self._run_batch(pending.items))

    async def _run_batch(self, items: Sequence[Tuple[Feed, int, asyncio.Future]]) -> None:
        loop = asyncio.get_running_loop()
        if len(items) == 1:
            await self._run_alone(items)
            return
        total = sum(rows for _, rows, _ in items)
        try:
            names = list(items[0][0])
            feed = {n: np.concatenate([f[n] for f, _, _ in items], axis=0) for n in names}
            outputs = await loop.run_in_executor(None, self._run, feed)
        except Exception as e:  # noqa: BLE001 - each request is rerun alone and gets its own error
            log.warning("model '%s': a batched run of %d requests failed (%s); running them one by one",
                        self.name, len(items), e)
            await self._run_alone(items)
            return
        bad = [i for i, out in enumerate(outputs) if out.ndim == 0 or out.shape[0] != total]
        if bad:
            self.enabled = False
            log.warning("model '%s': output %d has shape %s for a batch of %d rows (its first dim is not the batch); "
                        "batching is turned off for this model", self.name, bad[0], outputs[bad[0]].shape, total)
            await self._run_alone(items)
            return
        self.batches += 1
        self.batched_requests += len(items)
        log.debug("model '%s': ran a batch of %d requests (%d rows)", self.name, len(items), total)
        offsets = np.cumsum([rows for _, rows, _ in items])[:-1]
        parts = [np.split(out, offsets, axis=0) for out in outputs]
        for i, (_, _, future) in enumerate(items):
            if not future.done():
                future.set_result([p[i] for p in parts])

    async def _run_alone(self, items: Sequence[Tuple[Feed, int, asyncio.Future]]) -> None:
        loop = asyncio.get_running_loop()

        async def one(feed: Feed, future: asyncio.Future) -> None:
            try:
                result = await loop.run_in_executor(None, self._run, feed)
            except Exception as e:  # noqa: BLE001 - handed to the request that caused it
                if not future.done():
                    future.set_exception(e)
                return
            if not future.done():
                future.set_result(result)

        await asyncio.gather(*(one(feed, future) for feed, _, future in items))
