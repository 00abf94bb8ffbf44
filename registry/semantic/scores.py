"""The matrix's scoring (registry/semantic/index.py): a query's byte dot product with each
row, and the rows of the k best at a floor or above."""

from typing import NamedTuple


class Found(NamedTuple):
    """A search's hits, nearest first: their matrix rows, their byte dot products with the
    query, and the matrix's ids as text and as UUIDs (``texts`` and ``ids``, by row)."""

    rows: list[int]
    dots: list[int]
    texts: list[str]
    ids: list


def dots_of(query, matrix):
    """The dot product of the byte vector ``query`` with each row of the byte ``matrix``:
    integers (of at most 256 x 127² each)."""
    import numpy as np
    import simsimd

    if not len(matrix):
        return np.zeros(0, dtype=np.int32)
    return np.asarray(simsimd.cdist(query[None], matrix, metric="dot", out_dtype="int32"))[0]


def best_of(scores, k: int, lowest: int, skipped=None):
    """The places in ``scores`` of the k highest at ``lowest`` or above, with every score
    equal to the k-th (ties are common among integers: the caller sorts them by id), but
    the places ``skipped`` marks (a boolean array by place, or None). Those at the floor
    are found first: a query is near a few per cent of the agents, and the k-th among them
    (the k-th of all, when more than k are there) took a third of the time of a partition
    of every score (0.35 against 1.08 ms at 200,000 vectors: bench/README.md)."""
    import numpy as np

    best = np.flatnonzero(scores >= lowest)
    if skipped is not None and len(best):
        best = best[~skipped[best]]
    if len(best) > k:
        kept = scores[best]
        best = best[kept >= np.partition(kept, len(kept) - k)[len(kept) - k]]
    return best
