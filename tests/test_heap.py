"""heap.release_free_memory: freed heap pages go back to the system (glibc), so a stage's peak
starts from what is live (basispath_graph/heap.py)."""

import numpy as np
import pytest

from basispath_graph import heap


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(heap._TRIM is None, reason="not glibc: nothing to hand back")
def test_freed_heap_pages_are_returned_even_below_a_live_block():
    np.ones(16 << 20, dtype=np.uint8)  # freed at once: glibc raises its mmap threshold to 16 MB
    arrays = [np.ones(1 << 20, dtype=np.uint8) for _ in range(256)]  # 256 MB from the heap
    top = np.ones(1 << 20, dtype=np.uint8)  # live above them: the heap's top cannot shrink
    del arrays
    before = _rss()
    heap.release_free_memory()
    after = _rss()
    assert before - after > 128 << 20, (before, after)
    assert top.sum() == 1 << 20
