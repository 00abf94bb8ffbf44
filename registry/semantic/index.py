"""The nearest agents to a text: every stored vector (one signed byte per dimension in the
database) in one float32 matrix, 100 MB at 100,000 agents, scored against the query's
vector by one matrix-vector product (a byte matrix converted block by block measured four
times slower).

The matrix follows the stored vectors: before each search it reads their count and newest
time (one index-only read), and when either moved, the rows written since it last looked
(an index range of ``AgentVector.updated_at``, from a minute before, so a transaction that
committed late is not missed). Agents deleted since stay in the matrix until it is
reloaded (hourly); a search's candidates are always intersected with the agents the
query's filters select, so they never show."""

import threading
import time
import uuid
from datetime import timedelta

from django.db.models import Count, Max

from registry.semantic.embedder import DIMENSIONS, SCALE, embed
from registry.semantic.models import AgentVector

# Re-read what changed in this span before the last read (transactions commit late).
OVERLAP = timedelta(seconds=60)
# A full reload (dropping deleted agents) at most this often.
RELOAD_SECONDS = 3600


class VectorIndex:
    def __init__(self):
        import numpy as np

        self._np = np
        self._lock = threading.Lock()
        self._ids: list[uuid.UUID] = []
        self._row: dict[uuid.UUID, int] = {}
        self._matrix = np.zeros((0, DIMENSIONS), dtype=np.float32)
        self._seen = None
        self._stamp = None
        self._loaded_at = 0.0
        self._model = None

    def refresh(self) -> None:
        from registry.semantic.embedder import model_name

        np = self._np
        with self._lock:
            if time.monotonic() - self._loaded_at > RELOAD_SECONDS:
                self._ids, self._row, self._seen, self._stamp = [], {}, None, None
                self._matrix = np.zeros((0, DIMENSIONS), dtype=np.float32)
                self._loaded_at = time.monotonic()
            rows = AgentVector.objects.filter(model=model_name())
            # Nothing written since the last look: the same newest time and count.
            stamp = tuple(rows.aggregate(last=Max("updated_at"), count=Count("pk")).values())
            if stamp == self._stamp:
                return
            self._stamp = stamp
            if self._seen is not None:
                rows = rows.filter(updated_at__gte=self._seen - OVERLAP)
            found = list(rows.values_list("agent_id", "vector", "updated_at"))
            if not found:
                return
            self._seen = max(row[2] for row in found)
            added, replaced = [], []
            for agent_id, vector, _ in found:
                at = self._row.get(agent_id)
                if at is None:
                    self._row[agent_id] = len(self._ids) + len(added)
                    added.append((agent_id, bytes(vector)))
                else:
                    replaced.append((at, bytes(vector)))
            for at, vector in replaced:
                self._matrix[at] = np.frombuffer(vector, dtype=np.int8) / np.float32(SCALE)
            if added:
                block = np.frombuffer(b"".join(v for _, v in added), dtype=np.int8)
                block = block.reshape(len(added), DIMENSIONS).astype(np.float32) / SCALE
                self._matrix = np.vstack([self._matrix, block])
                self._ids.extend(agent_id for agent_id, _ in added)

    def __len__(self) -> int:
        return len(self._ids)

    def nearest(
        self, text: str, k: int, among: list[uuid.UUID] | None = None, floor: float = -1.0
    ) -> list[tuple[uuid.UUID, float]]:
        """Up to ``k`` (agent id, cosine) pairs of cosine ``floor`` or more, nearest first,
        ties by id; only the agents of ``among`` when given."""
        np = self._np
        self.refresh()
        query = embed([text])[0]
        if not query.any():
            return []
        with self._lock:
            matrix, ids = self._matrix, self._ids
            if among is not None:
                rows = np.fromiter(
                    (r for r in map(self._row.get, among) if r is not None), dtype=np.int64
                )
                matrix = matrix[rows]
                ids = [ids[r] for r in rows]
        scores = matrix @ query
        best = np.flatnonzero(scores >= floor)
        if len(best) > k:
            best = best[np.argpartition(-scores[best], k - 1)[:k]]
        # Nearest first; equal scores by id, so every process answers in the same order.
        found = [(round(float(scores[r]), 6), ids[r]) for r in best.tolist()]
        found.sort(key=lambda hit: (-hit[0], hit[1].int))
        return [(pk, score) for score, pk in found]


_index = None
_index_lock = threading.Lock()


def local_index() -> VectorIndex:
    global _index
    with _index_lock:
        if _index is None:
            _index = VectorIndex()
        return _index
