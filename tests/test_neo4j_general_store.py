"""CIFAR ResNet-20 stored with deah-complete on Neo4j: the core's artifacts and ``why`` with the
rule and a checked certificate (the LadybugDB case is in tests/test_general_store.py).

A file of its own: on Neo4j the run writes about 1 M rows (319,018 paths, 47,776 discard records,
167,968 certificate terms and the relationships) in batches of 10,000, about 200 s on 2 cores
(measured with the local Neo4j 5.26 of tests/neo4j_support.py), so it can be left out
(``--deselect``, ``-m "not neo4j"``) when time is short.
"""

from __future__ import annotations

from .test_general_store import check_resnet20_deah_complete


def test_resnet20_deah_complete_stores_its_core_and_why_gives_the_rule_on_neo4j(empty_neo4j, tmp_path):
    summary = check_resnet20_deah_complete(empty_neo4j.uri, tmp_path)
    assert summary["timings"]["persist"] < 600
