"""A process's spool: a bounded key → bytes store whose bytes live in files, so in the
kernel's page cache rather than in the process's heap (``registry.fastpath.notices.NoticedCache``
keeps the lean lane's card answers in one).

A worker that kept 100,000 cards in its heap would grow by well over 100 MiB; here it keeps
only a compact index (two arrays of 64-bit numbers: about 4 MiB for 100,000 keys) and
reads a value back with one ``pread``, which the page cache answers like memory. The pages
are the kernel's: shared accounting, given back under memory pressure (a read then goes to
the disk, slower but still right), never counted in the worker's resident memory.

Layout. Two segment files, unlinked as soon as they are opened (nothing to clean up, and
nothing another process can open): new records are appended to the *active* segment; when
it is full the other one is emptied and becomes active, so the values that were only in
it go. A value read from the older segment is copied to the active one, so what is used
stays (least recently used out, by halves). A record is the key's length, the key and
the value: a read checks the key, so two keys of one 64-bit hash never mix.

The index is open addressing with linear probing over ``array('q')``: ``hashes[i]`` the
key's hash (0: free), ``places[i]`` where its record is (segment, offset, length; 0: not
stored). Forgetting a key clears its place and keeps its hash, so probing needs no
tombstones; the table is rebuilt, with only what is stored, when it is too full.

One spool belongs to one process: after a fork it starts empty with files of its own.
Every operation takes the spool's lock (threaded workers).
"""

import contextlib
import logging
import os
import tempfile
import threading
from array import array

from registry.http import metrics
from registry.http.metrics import card_spool

logger = logging.getLogger(__name__)

_OFFSET_BITS = 31  # 2 GiB per segment at most
_LENGTH_BITS = 31
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
_OFFSET_MASK = (1 << _OFFSET_BITS) - 1
_SEGMENT_MAX = 1 << _OFFSET_BITS
_TABLE_MIN = 1 << 12
_FULL = 0.7  # hashes in use (stored or forgotten) per slot before a rebuild


def _place(segment: int, offset: int, length: int) -> int:
    # + 1: a record at offset 0 of segment 0 must not read as "not stored" (0)
    return (((segment << _OFFSET_BITS) | offset) << _LENGTH_BITS | length) + 1


def _unplace(place: int) -> tuple[int, int, int]:
    place -= 1
    length = place & _LENGTH_MASK
    place >>= _LENGTH_BITS
    return place >> _OFFSET_BITS, place & _OFFSET_MASK, length


def _hash(key: str) -> int:
    return hash(key) or 1  # 0 marks a free slot (str hashes are never -1)


class Spool:
    """At most ``max_bytes`` of records, in two segment files under ``directory`` (the
    system's temporary directory by default)."""

    def __init__(self, max_bytes: int, directory: str | None = None):
        self.segment_bytes = min(max_bytes // 2, _SEGMENT_MAX)
        self.directory = directory
        self.lock = threading.Lock()
        self.pid = None
        self.files: list[int] = []
        self._table(_TABLE_MIN)

    # -- the index -------------------------------------------------------------------

    def _table(self, size: int) -> None:
        self.hashes = array("q", bytes(8 * size))
        self.places = array("q", bytes(8 * size))
        self.mask = size - 1
        self.used = 0  # slots with a hash

    def _slot(self, h: int) -> int:
        """The slot of hash ``h``: its own, or the free one where it would go."""
        hashes, mask = self.hashes, self.mask
        i = h & mask
        while True:
            found = hashes[i]
            if found == h or found == 0:
                return i
            i = (i + 1) & mask

    def _index(self, h: int, place: int) -> None:
        i = self._slot(h)
        if self.hashes[i] == 0:
            self.hashes[i] = h
            self.used += 1
        self.places[i] = place
        if self.used > _FULL * (self.mask + 1):
            self._rebuild(lambda segment: True)

    def _rebuild(self, keep) -> None:
        """The index again, with the stored places whose segment ``keep(segment)``
        (slot by slot: no list of the entries, which would stay in the heap's arenas)."""
        hashes, places = self.hashes, self.places

        def kept(i: int) -> bool:
            return bool(places[i]) and keep(_unplace(places[i])[0])

        count = sum(1 for i in range(len(places)) if kept(i))
        size = _TABLE_MIN
        while size * _FULL < 2 * count:
            size *= 2
        self._table(size)
        for i in range(len(places)):
            if kept(i):
                j = self._slot(hashes[i])
                self.hashes[j], self.places[j] = hashes[i], places[i]
        self.used = count

    # -- the segments ----------------------------------------------------------------

    def _open(self) -> bool:
        """This process's files (after a fork: new ones, the index emptied)."""
        pid = os.getpid()
        if self.pid == pid:
            return bool(self.files)
        self.pid = pid
        self.files = []  # the parent's descriptors stay the parent's business
        self._table(_TABLE_MIN)
        self.active, self.ends = 0, [0, 0]
        try:
            for _ in range(2):
                descriptor, path = tempfile.mkstemp(prefix="registry-spool-", dir=self.directory)
                os.unlink(path)
                self.files.append(descriptor)
        except OSError as exc:
            logger.warning("No spool (values are read through): %s", exc)
            self._close()
            return False
        return True

    def _close(self) -> None:
        for descriptor in self.files:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self.files = []
        self._table(_TABLE_MIN)

    def _append(self, record: bytes) -> int | None:
        """Write ``record`` to the active segment (turning over when full); its place."""
        if len(record) > self.segment_bytes:
            return None
        if self.ends[self.active] + len(record) > self.segment_bytes:
            older = 1 - self.active
            os.ftruncate(self.files[older], 0)
            self.ends[older] = 0
            self._rebuild(lambda segment: segment == self.active)
            self.active = older
        segment, offset = self.active, self.ends[self.active]
        os.pwrite(self.files[segment], record, offset)
        self.ends[segment] = offset + len(record)
        return _place(segment, offset, len(record))

    # -- the store -------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or None."""
        h = _hash(key)
        with self.lock:
            if not self._open():
                return None
            i = self._slot(h)
            place = self.places[i]
            if not place:
                metrics.tally(card_spool, "miss")
                return None
            segment, offset, length = _unplace(place)
            try:
                record = os.pread(self.files[segment], length, offset)
                head = _head(key)
                if len(record) != length or not record.startswith(head):
                    metrics.tally(card_spool, "miss")
                    return None  # another key of the same hash
                value = record[len(head) :]
                if segment != self.active:  # used: copied where it stays longest
                    self.places[i] = 0
                    moved = self._append(record)
                    if moved is not None:
                        self._index(h, moved)
            except OSError as exc:
                self._fail(exc)
                return None
            metrics.tally(card_spool, "hit")
            return value

    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (replacing what was there)."""
        h = _hash(key)
        record = _head(key) + value
        with self.lock:
            if not self._open():
                return
            try:
                place = self._append(record)
            except OSError as exc:
                self._fail(exc)
                return
            if place is None:  # larger than a segment: not kept
                self.places[self._slot(h)] = 0
            else:
                self._index(h, place)

    def forget(self, keys: list[str] | None) -> None:
        """Drop ``keys`` (None: everything)."""
        with self.lock:
            if keys is None:
                if self.files and self.pid == os.getpid():
                    for descriptor in self.files:
                        os.ftruncate(descriptor, 0)
                    self.ends = [0, 0]
                self._table(_TABLE_MIN)
                return
            for key in keys:
                i = self._slot(_hash(key))
                if self.hashes[i]:
                    self.places[i] = 0

    def __len__(self) -> int:
        with self.lock:
            return sum(1 for place in self.places if place)

    def _fail(self, exc: OSError) -> None:
        """A file that cannot be read or written (a full disk): start again, empty."""
        logger.warning("Spool emptied after an error: %s", exc)
        with contextlib.suppress(OSError):
            for descriptor in self.files:
                os.ftruncate(descriptor, 0)
        self.ends = [0, 0]
        self.active = 0
        self._table(_TABLE_MIN)


def _head(key: str) -> bytes:
    encoded = key.encode()
    return len(encoded).to_bytes(2, "big") + encoded
