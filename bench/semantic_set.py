"""The labelled evaluation set of search by meaning (``python -m bench.semantic``): agents and
entities described as their makers would, and queries as a person asking for a task would
write them, each with the keys of the agents that answer it. Most queries share no word
with their answers ("paraphrase"); the "keyword" ones name their answer's own words, to
check that fusing the orders costs keyword search nothing where it already does well; the
"case" ones are such words in capitals; the "made-up word" ones have no answer (scored 1
when nothing is found, else 0). The
population is completed by the benchmark's generated cards (bench/generate.py).

The set is bench/semantic_set.json: ``agents`` (key: [name, description, [[skill name,
description, tags], ...]]), ``entities`` (key: [name, category, description,
[capabilities]]) and ``queries`` ([text, [relevant keys], kind])."""

import json
from pathlib import Path

_SET = json.loads((Path(__file__).parent / "semantic_set.json").read_text())
AGENTS: dict = _SET["agents"]
ENTITIES: dict = _SET["entities"]
QUERIES: list = _SET["queries"]
