"""The vectors the embedding service holds (registry.semantic.index.VectorIndex): each agent
scored by its stored bytes, ties at the cut kept by id, searches of all agents remembered,
packed lists of agents mapped to rows once, retired and deleted agents dropped."""

import uuid

import pytest


@pytest.mark.django_db
def test_a_repeated_search_of_all_agents_is_answered_as_the_first_was(population, monkeypatch):
    """The service remembers its answers to searches of all agents (as arrays of matrix
    rows and cosines) and answers the same words again with the same hits, as ids or as
    their text, without embedding them again."""
    from registry.semantic import index as index_module
    from registry.semantic.index import VectorIndex

    index = VectorIndex()
    first = index.search("turn speech into text", 3, floor=-1.0)[0]
    as_text = index.search("turn speech into text", 3, floor=-1.0, ids_as_text=True)[0]
    embedded = []
    monkeypatch.setattr(index_module, "embed", lambda texts: embedded.append(texts))
    again = index.search("turn speech into text", 3, floor=-1.0)[0]
    assert embedded == []  # remembered: not embedded again
    assert again == first and len(first) == 3
    assert all(isinstance(pk, uuid.UUID) for pk, _ in first)
    assert as_text == [(str(pk), cosine) for pk, cosine in first]
    assert str(first[0][0]) == population["scribe"]


@pytest.mark.django_db
def test_a_search_scores_each_agent_by_its_stored_bytes_against_the_query_quantized(population):
    """Every stored vector is scored exactly: the byte dot product of the agent's stored
    vector and the query quantized the same way, over 127², for all agents and among a
    few; the order is nearest first, equal scores by id; the floor drops the rest."""
    import numpy as np

    from registry.semantic.embedder import SCALE, embed_quantized
    from registry.semantic.index import VectorIndex
    from registry.semantic.models import AgentVector

    text = "turn speech into text"
    query = np.frombuffer(embed_quantized([text])[0], dtype=np.int8).astype(np.int64)
    stored = {
        row.agent_id: np.frombuffer(bytes(row.vector), dtype=np.int8).astype(np.int64)
        for row in AgentVector.objects.all()
    }
    cosines = {pk: int(vector @ query) / SCALE**2 for pk, vector in stored.items()}
    index = VectorIndex()

    def expected(ids, floor=-1.0):
        kept = [(pk, cosines[pk]) for pk in ids if cosines[pk] >= floor]
        return sorted(kept, key=lambda hit: (-round(hit[1], 6), str(hit[0])))

    assert len(stored) >= 5
    found = index.search(text, len(stored), floor=-1.0)[0]
    assert [pk for pk, _ in found] == [pk for pk, _ in expected(stored)]
    assert [c for _, c in found] == pytest.approx([c for _, c in expected(stored)], abs=1e-6)
    some = sorted(stored, key=str)[:3]
    among = index.search(text, 10, among=some, floor=-1.0)[0]
    assert [pk for pk, _ in among] == [pk for pk, _ in expected(some)]
    floor = sorted(cosines.values())[len(cosines) // 2]
    above = index.search(text, len(stored), floor=floor)[0]
    assert [pk for pk, _ in above] == [pk for pk, _ in expected(stored, floor)]
    assert 0 < len(above) < len(stored)
    # Fewer asked for than are at the floor: the nearest of those, found among them alone.
    assert len(above) > 2
    nearest = index.search(text, 2, floor=floor)[0]
    assert [pk for pk, _ in nearest] == [pk for pk, _ in expected(stored, floor)][:2]


@pytest.mark.parametrize("among", [False, True])
def test_equal_scores_at_the_cut_keep_the_lowest_ids_whatever_the_matrix_order(among, monkeypatch):
    """Byte dot products are integers, so many agents may score alike at the k-th place:
    the search keeps the lowest ids of those, in any order of the matrix's rows (each
    process loads the vectors in its own order)."""
    import random

    import numpy as np

    from registry.semantic.embedder import embed_quantized
    from registry.semantic.index import VectorIndex

    text = "turn speech into text"
    same = np.frombuffer(embed_quantized([text])[0], dtype=np.int8)
    other = np.frombuffer(embed_quantized(["rain forecast for sailing"])[0], dtype=np.int8)
    ids = [uuid.UUID(int=n) for n in range(1, 41)]
    vectors = {pk: same if n % 2 else other for n, pk in enumerate(ids)}
    chosen = ids[10:] if among else None
    tied = sorted((pk for pk in chosen or ids if vectors[pk] is same), key=str)
    for seed in range(5):
        order = ids[:]
        random.Random(seed).shuffle(order)
        index = VectorIndex()
        monkeypatch.setattr(index, "refresh", lambda covering=None: None)
        index._ids, index._texts = order, [str(pk) for pk in order]
        index._row = {pk.bytes: at for at, pk in enumerate(order)}
        index._matrix = np.stack([vectors[pk] for pk in order])
        found = index.search(text, 3, among=chosen)[0]
        assert [pk for pk, _ in found] == tied[:3]
        assert found[0][1] == found[2][1] > 0.9


def test_agents_sent_packed_are_mapped_to_rows_once_until_the_matrix_changes(monkeypatch):
    """The rows of a packed list of agents (a tag's, asked for again with other words) are
    remembered by its digest; a vector written since (an agent of the list that had none)
    is searched by the next search of the same list."""
    from datetime import UTC, datetime

    import numpy as np

    from registry.semantic.embedder import embed_quantized
    from registry.semantic.index import VectorIndex

    vectors = embed_quantized(["turn speech into text", "audio transcription", "rain"])
    ids = [uuid.UUID(int=n) for n in range(1, 4)]
    index = VectorIndex()
    monkeypatch.setattr(index, "refresh", lambda covering=None: None)
    now = datetime.now(UTC)
    index._apply([(ids[0], vectors[0], now, None), (ids[2], vectors[2], now, None)], reload=False)
    packed = b"".join(pk.bytes for pk in ids[:2])
    first = index.search("speech to text", 5, among=packed)[0]
    assert [pk for pk, _ in first] == [ids[0]]
    mapped = index._row
    monkeypatch.setattr(index, "_row", {})  # remembered: the map is not read again
    assert index.search("voice notes", 5, among=packed)[0][0][0] == ids[0]
    monkeypatch.setattr(index, "_row", mapped)
    index._apply([(ids[1], vectors[1], now, None)], reload=False)  # the matrix changes
    again = index.search("speech to text", 5, among=packed)[0]
    assert sorted(pk for pk, _ in again) == ids[:2]
    assert np.array_equal(index._among_rows[next(iter(index._among_rows))], [0, 2])


def test_a_canonical_search_skips_the_copies_the_matrix_marks(monkeypatch):
    """A copy of a duplicate group is held and found by a plain search (collapse=false),
    and skipped by a canonical one (the lean lane's): its k hits are the k nearest of the
    others; a regroup read again (the copy's vector written anew) moves the mark."""
    from datetime import UTC, datetime

    from registry.semantic.embedder import embed_quantized
    from registry.semantic.index import VectorIndex

    vectors = embed_quantized(["turn speech into text", "speech to text", "rain forecast"])
    ids = [uuid.UUID(int=n) for n in range(1, 4)]
    index = VectorIndex()
    monkeypatch.setattr(index, "refresh", lambda covering=None: None)
    now = datetime.now(UTC)
    canonical = ids[1]
    index._apply(
        [(ids[0], vectors[0], now, canonical), (ids[1], vectors[1], now, None)], reload=False
    )
    index._apply([(ids[2], vectors[2], now, None)], reload=False)
    every = [pk for pk, _ in index.search("turn speech into text", 2)[0]]
    assert every == [ids[0], ids[1]]
    kept = [pk for pk, _ in index.search("turn speech into text", 2, canonical=True)[0]]
    assert kept == [ids[1], ids[2]]
    among = [pk for pk, _ in index.search("speech", 3, among=ids[:2], canonical=True)[0]]
    assert among == [ids[1]]
    index._apply([(ids[0], vectors[0], now, None)], reload=False)  # no copy any more
    again = [pk for pk, _ in index.search("turn speech into text", 2, canonical=True)[0]]
    assert again == [ids[0], ids[1]]


def _nearest_ids(index, text: str) -> set[str]:
    return {str(pk) for pk, _ in index.nearest(text, 10)}


@pytest.mark.django_db
def test_a_retired_or_deleted_agent_leaves_the_matrix_at_the_next_look(alice, population, settings):
    """The matrix holds the agents discovery finds: a look drops the rows of the agents
    tombstoned since (retired or deleted), never reads their vectors again, and a whole
    load leaves them out."""
    from registry.agents.models import Agent
    from registry.agents.removal import agent_delete
    from registry.semantic.index import VectorIndex
    from registry.semantic.vectors import vectors_write

    index = VectorIndex()
    index.refresh()
    assert len(index) == len(population)
    assert population["scribe"] in _nearest_ids(index, "turn speech into text")
    assert population["flights"] in _nearest_ids(index, "book a flight")

    assert alice.delete(f"/agents/{population['scribe']}").status_code == 204
    agent_delete(agent=Agent.objects.get(pk=population["flights"]))
    index.refresh()
    assert len(index) == len(population) - 2
    assert population["scribe"] not in _nearest_ids(index, "turn speech into text")
    assert population["flights"] not in _nearest_ids(index, "book a flight")
    # The rows after the dropped ones moved up: the others are found as before.
    assert population["tables"] in _nearest_ids(index, "restaurant reservations")
    assert population["weather"] in _nearest_ids(index, "storm alerts")

    vectors_write([uuid.UUID(population["scribe"])])  # a retired agent's vector written again
    index.refresh()
    assert population["scribe"] not in _nearest_ids(index, "turn speech into text")
    whole = VectorIndex()
    whole.refresh()
    assert len(whole) == len(population) - 2
    assert population["scribe"] not in _nearest_ids(whole, "turn speech into text")
