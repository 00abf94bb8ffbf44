"""The nearest agents to a text: every stored vector (one signed byte per dimension in the
database) in one byte matrix, 25 MB at 100,000 agents, scored against the query's vector,
quantized the same way, by SimSIMD's integer dot product (0.85 ms for 100,000 agents
where a float32 matrix-vector product over the same vectors took 3.4 ms and read four
times the memory; a 64- or 128-dimension first pass and an approximate graph index,
usearch, measured faster than the float scan but missed a tenth to half of the exact
nearest 200 on the benchmark's cards: bench/README.md, "Search by meaning"). A score is
the two vectors' byte dot product over 127², their cosine within about 1 %, the same in
every process.

The matrix follows the stored vectors: a look reads their newest time and, when it moved,
the rows written since the last look (an index range of ``AgentVector.updated_at``, from a
minute before, so a transaction that committed late is not missed). A search gives the data
generation it read (registry/discovery/generation.py: every write bumps it in its
transaction, vectors included; the page it finds is cached at it): a look begun after the
search arrived reads every vector of that generation, so the index remembers it as the
generation it holds, and searches of the same generation need no look. In the embedding
service a thread of its own does the looking, on a connection it keeps (``watch``): every
``WATCH_SECONDS``, and for a search whose generation the matrix does not hold, which waits
for a look begun after it arrived (searches that arrive together share one); while the
database is away a look fails fast and the search answers from the matrix it has (waiting
at most ``LOOK_WAIT_SECONDS``). A process without the service looks itself.

The matrix holds the agents discovery finds, no others: a retired or deleted agent has a
tombstone (registry.agents.lifecycle, removal; neither comes back), written in the same
transaction, and a look reads the tombstones written since the last one (the same range as
the vectors) and drops their agents' rows, and never reads a tombstoned agent's vector. So
a search answered from a matrix that holds the generation a page read finds only agents
that page may show, and the lean lane's default mode skips its look-up of the nearest when
no filter asks one (registry.discovery.first). Copies of a duplicate group are held too,
marked (a query with collapse=false finds them by meaning), and a ``canonical`` search (the
lane's collapsed queries) skips them; a regroup writes the vectors' ``updated_at`` of the
agents whose ``duplicate_of`` changed (registry.trust.duplicates), so a look reads them
again with their mark."""

import hashlib
import logging
import threading
import time
import uuid
from collections import OrderedDict
from datetime import timedelta

from django.db import Error as DatabaseError
from django.db import connections
from django.db.models import Exists, Max, OuterRef

from registry.agents.models import Tombstone
from registry.semantic.embedder import DIMENSIONS, SCALE, cosine_of, embed, quantize
from registry.semantic.models import AgentVector
from registry.semantic.scores import Found, best_of, dots_of

log = logging.getLogger(__name__)
# Re-read what changed in this span before the last read (transactions commit late).
OVERLAP = timedelta(seconds=60)
# A full reload at most this often: every vector read again, of the agents with no tombstone
# (what a look's overlap could have missed: a write that committed more than OVERLAP late).
RELOAD_SECONDS = 3600
# How often the service's watcher looks for new vectors: a new agent is found by meaning
# within this time of its registration.
WATCH_SECONDS = 1.0
# The longest a search waits for the look it asked for (then it answers from the matrix).
LOOK_WAIT_SECONDS = 2.0
# Answers kept for repeated searches of all agents (the same words with other filters),
# until the matrix changes.
REMEMBERED = 2048
# The matrix rows of the agents to search among, sent packed, kept by the digest of what
# was sent until the matrix changes: the agents of a tag, asked for again with other words,
# are mapped to rows once (1.5 ms for 10,000 agents). At most this many rows in all.
AMONG_REMEMBERED_ROWS = 2_000_000


class VectorIndex:
    def __init__(self):
        import numpy as np

        self._np = np
        self._lock = threading.Lock()  # the matrix, its ids and the remembered answers
        self._reading = threading.Lock()  # one look at the database at a time
        self._ids: list[uuid.UUID] = []
        self._texts: list[str] = []  # the same ids as text, as the service answers them
        self._row: dict[bytes, int] = {}  # an agent's id (its 16 bytes): its row
        self._matrix = np.zeros((0, DIMENSIONS), dtype=np.int8)
        self._copies = np.zeros(0, dtype=bool)  # by row: a copy of a duplicate group
        self._seen = None
        self._gone_seen = None  # the newest tombstone read
        self._stamp = None
        # A data generation that a search read before the last look it asked for began: the
        # matrix holds every vector written by then (registry/discovery/generation.py).
        self.generation = None
        self._requested = None
        self._loaded_at = 0.0
        self._remembered: OrderedDict = OrderedDict()
        self._among_rows: OrderedDict = OrderedDict()  # digest of packed ids: their rows
        self._among_kept = 0  # rows in _among_rows
        # True while a watcher follows the vectors (searches then ask it to look).
        self.watched = False
        self._asked = threading.Event()
        self._looks = threading.Condition()
        self._looks_begun = 0
        self._looks_done = 0

    def refresh(self, covering: int | None = None) -> None:
        """Read the vectors written since the last look into the matrix. ``covering``: a
        data generation read before this look began (by the search that asked for it): the
        rows are read whatever the newest time, and the matrix then holds that generation."""
        from registry.semantic.embedder import model_name

        with self._reading:
            reload = time.monotonic() - self._loaded_at > RELOAD_SECONDS
            rows = AgentVector.objects.filter(model=model_name())
            # Nothing written since the last look: the same newest times (a write committed
            # late with an older one is read by the next look a search asks for).
            stamp = (
                rows.aggregate(last=Max("updated_at"))["last"],
                Tombstone.objects.aggregate(last=Max("deleted_at"))["last"],
            )
            fresh = covering is not None and covering != self.generation
            if stamp != self._stamp or reload or fresh:
                whole = reload or self._seen is None
                rows = rows.filter(~Exists(Tombstone.objects.filter(agent_id=OuterRef("agent"))))
                # (Only listed agents are embedded: a vector of one unlisted since is kept
                # out all the same, should it have no tombstone.)
                rows = rows.filter(agent__listed=True)
                if not whole:
                    rows = rows.filter(updated_at__gte=self._seen - OVERLAP)
                found = list(
                    rows.values_list("agent_id", "vector", "updated_at", "agent__duplicate_of")
                )
                # Read after the vectors: a tombstone committed in between is read here.
                gone = []
                if not whole:
                    since = self._gone_seen - OVERLAP if self._gone_seen else None
                    tombstones = Tombstone.objects.all()
                    if since is not None:
                        tombstones = tombstones.filter(deleted_at__gte=since)
                    gone = list(tombstones.values_list("agent_id", "deleted_at"))
                self._apply(found, reload, [pk for pk, _ in gone])
                self._stamp = stamp
                if found:
                    self._seen = max(row[2] for row in found)
                if whole:
                    self._gone_seen = stamp[1]
                elif gone:
                    self._gone_seen = max(at for _, at in gone)
            if covering is not None:
                self.generation = covering

    def _apply(self, found: list, reload: bool, gone: list | None = None) -> None:
        """The matrix with the vectors ``found`` (added or replaced), then without the rows
        of the agents ``gone`` (tombstoned: retired or deleted); from nothing when
        ``reload``."""
        np = self._np
        ids, texts, row, matrix = self._ids, self._texts, self._row, self._matrix
        copies = self._copies
        if reload:
            ids, texts, row = [], [], {}
            matrix = np.zeros((0, DIMENSIONS), dtype=np.int8)
            copies = np.zeros(0, dtype=bool)
            self._loaded_at = time.monotonic()
        added, replaced = [], []
        for agent_id, vector, _, canonical_id in found:
            at = row.get(agent_id.bytes)
            if at is None:
                added.append((agent_id, bytes(vector), canonical_id is not None))
            else:
                replaced.append((at, bytes(vector), canonical_id is not None))
        if replaced:
            # Searches under way keep the matrix they took.
            matrix, copies = matrix.copy(), copies.copy()
            for at, vector, copy in replaced:
                matrix[at] = np.frombuffer(vector, dtype=np.int8)
                copies[at] = copy
        if added:
            block = np.frombuffer(b"".join(v for _, v, _ in added), dtype=np.int8)
            block = block.reshape(len(added), DIMENSIONS)
            matrix = np.vstack([matrix, block])
            copies = np.concatenate([copies, np.array([c for _, _, c in added], dtype=bool)])
            ids = ids + [agent_id for agent_id, _, _ in added]
            texts = texts + [str(agent_id) for agent_id, _, _ in added]
            at = len(row)
            row = {**row, **{agent_id.bytes: at + n for n, (agent_id, _, _) in enumerate(added)}}
        dead = [row[pk.bytes] for pk in gone or () if pk.bytes in row]
        if dead:  # (rare: a retirement or a deletion; the rows after them move up)
            keep = np.ones(len(ids), dtype=bool)
            keep[dead] = False
            matrix, copies = matrix[keep], copies[keep]
            kept = keep.tolist()
            ids = [pk for pk, k in zip(ids, kept, strict=True) if k]
            texts = [pk for pk, k in zip(texts, kept, strict=True) if k]
            row = {pk.bytes: n for n, pk in enumerate(ids)}
        if reload or found or dead:
            with self._lock:
                self._ids, self._texts, self._row, self._matrix = ids, texts, row, matrix
                self._copies = copies
                self._remembered.clear()
                self._among_rows.clear()
                self._among_kept = 0

    def refresh_or_keep(self, covering: int | None = None) -> bool:
        """Refresh; when the database does not answer (restarting, its connection dropped),
        keep the matrix as it is, close the connection so the next look opens a new one,
        and answer False."""
        try:
            self.refresh(covering)
            return True
        except DatabaseError as exc:
            log.warning("semantic index: the vectors could not be read: %s", exc)
            connections.close_all()
            return False

    def watch(self, stop: threading.Event, every: float = WATCH_SECONDS) -> None:
        """Follow the stored vectors from this thread until ``stop`` is set."""
        self.watched = True
        try:
            while True:
                self._asked.wait(every)
                self._asked.clear()
                if stop.is_set():
                    break
                with self._looks:
                    self._looks_begun += 1
                    # The generation the last search read before this look began: every
                    # write of it committed before, so this look reads its vectors.
                    covering, self._requested = self._requested, None
                try:
                    self.refresh_or_keep(covering)
                finally:
                    with self._looks:
                        self._looks_done += 1
                        self._looks.notify_all()
        finally:
            self.watched = False
            connections.close_all()  # this thread's

    def wake(self) -> None:
        """Make the watcher look now (and, once ``stop`` is set, end)."""
        self._asked.set()

    def _look_awaited(self, generation: int | None) -> None:
        """Wait for a look of the watcher's begun after this call (at most
        ``LOOK_WAIT_SECONDS``), which then holds ``generation``'s vectors."""
        with self._looks:
            wanted = self._looks_begun + 1
            if generation is not None:
                self._requested = generation
            self._asked.set()
            self._looks.wait_for(
                lambda: self._looks_done >= wanted or not self.watched, LOOK_WAIT_SECONDS
            )

    def _rows(self, among):
        """The matrix rows of the agents of ``among`` that have one: a list of ids (UUIDs)
        or their 16 bytes each, one after the other (``bytes``; those are remembered).
        Called holding ``_lock``."""
        digest = None
        if isinstance(among, bytes | bytearray | memoryview):
            among = bytes(among)
            digest = hashlib.blake2b(among, digest_size=16).digest()
            rows = self._among_rows.get(digest)
            if rows is not None:
                self._among_rows.move_to_end(digest)
                return rows
            keys = (among[at : at + 16] for at in range(0, len(among), 16))
        else:
            keys = (pk.bytes for pk in among)
        row = self._row
        rows = self._np.fromiter(
            (r for r in map(row.get, keys) if r is not None), dtype=self._np.int64
        )
        if digest is not None and len(rows) <= AMONG_REMEMBERED_ROWS:
            self._among_rows[digest] = rows
            self._among_kept += len(rows)
            while self._among_kept > AMONG_REMEMBERED_ROWS:
                self._among_kept -= len(self._among_rows.popitem(last=False)[1])
        return rows

    def __len__(self) -> int:
        return len(self._ids)

    def current(self, generation: int | None) -> None:
        """Make the matrix hold every vector written by data generation ``generation`` (read
        by the caller before it asked; when None, every vector written so far): a look
        begun after this call, unless one begun after a search of that generation asked
        already (``self.generation``). In the service the watcher looks; in a process
        without it, this call, each time (its tests roll the database back, generations
        and all)."""
        if not self.watched:
            self.refresh(generation)  # (cheap when nothing was written: the newest time)
        elif generation is None or generation != self.generation:
            self._look_awaited(generation)

    def nearest(
        self, text: str, k: int, among: list | None = None, floor: float = -1.0
    ) -> list[tuple[uuid.UUID, float]]:
        """Up to ``k`` (agent id, cosine) pairs with a cosine of ``floor`` or more, nearest
        first, ties by id; only the agents of ``among`` when given (``search``)."""
        return self.search(text, k, among, floor)[0]

    def search(
        self,
        text: str,
        k: int,
        among: list | None = None,
        floor: float = -1.0,
        generation: int | None = None,
        look: bool = True,
        ids_as_text: bool = False,
        canonical: bool = False,
    ) -> tuple[list[tuple], int]:
        """``nearest``'s hits, and the data generation whose vectors the matrix searched
        held (at least); with ``look`` False, from the matrix as it is (no ``current``);
        with ``ids_as_text`` each hit's id as text; with ``canonical`` no copy of a
        duplicate group (``Agent.duplicate_of``) among them."""
        found, held = self.search_dots(text, k, among, floor, generation, look, canonical)
        names = found.texts if ids_as_text else found.ids
        return [(names[r], cosine_of(d)) for r, d in zip(found.rows, found.dots, strict=True)], held

    def search_dots(
        self,
        text: str,
        k: int,
        among: list | None = None,
        floor: float = -1.0,
        generation: int | None = None,
        look: bool = True,
        canonical: bool = False,
    ) -> tuple[Found, int]:
        """``search``'s hits as the matrix holds them (``Found``: their rows and byte dot
        products with the query, a cosine being one over ``SCALE``², with the matrix's ids),
        for the service to send as they are (registry/semantic/service.py)."""
        np = self._np
        if look:
            self.current(generation)
        key = (text, k, floor, canonical)
        held = self.generation  # (read before the matrix: a look sets it after the matrix)
        with self._lock:
            matrix, ids, texts, copies = self._matrix, self._ids, self._texts, self._copies
            remembered = self._remembered.get(key) if among is None else None
            if remembered is not None:
                self._remembered.move_to_end(key)
                rows_found, dots = remembered
                return Found(rows_found.tolist(), dots.tolist(), texts, ids), held
            rows = None if among is None else self._rows(among)
        query = embed([text])
        if not query.any():
            return Found([], [], texts, ids), held
        query = np.frombuffer(quantize(query)[0], dtype=np.int8)
        if rows is None:
            scores = dots_of(query, matrix)
        elif len(rows) * 4 > len(matrix):  # most rows: one product, then theirs
            scores = dots_of(query, matrix)[rows]
        else:  # a few: theirs alone
            scores = dots_of(query, matrix[rows])
        skipped = None
        if canonical and copies.any():  # the copies' places among the scores
            skipped = copies if rows is None else copies[rows]
        # The sort below keeps the lowest ids of the ties at the k-th score, whatever order
        # the matrix holds them in.
        best = best_of(scores, k, floor * SCALE * SCALE, skipped)
        at = (best if rows is None else rows[best]).tolist()  # their rows in the matrix
        # Nearest first; equal scores by id (its text sorts as its number), so every
        # process answers in the same order.
        found = sorted(zip((-scores[best]).tolist(), [texts[r] for r in at], at, strict=True))[:k]
        rows_found = [r for _, _, r in found]
        dots = [-negated for negated, _, _ in found]
        if among is None:
            with self._lock:
                if self._matrix is matrix:  # not an answer from a matrix replaced meanwhile
                    # As arrays: 16 bytes a hit, where tuples of objects took some 80.
                    self._remembered[key] = (
                        np.array(rows_found, dtype=np.int64),
                        np.array(dots, dtype=np.int64),
                    )
                    if len(self._remembered) > REMEMBERED:
                        self._remembered.popitem(last=False)
        return Found(rows_found, dots, texts, ids), held


_index = None
_index_lock = threading.Lock()


def local_index() -> VectorIndex:
    global _index
    with _index_lock:
        if _index is None:
            _index = VectorIndex()
        return _index
