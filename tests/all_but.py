"""Hold every index of faithful deah on a layer DAG as ``AllBut``: the union's views, the core
and the repair's drops (not only where it is smaller, as on GoogLeNet), so that a test can
check that what is decided and stored does not depend on it."""

import numpy as np


def hold_every_index_as_all_but(monkeypatch) -> None:
    from basispath_graph.deah import repair
    from basispath_graph.general import dag_sdvchain
    from basispath_graph.linalg import peeling, sparse

    def always(mask):
        return sparse.AllBut(len(mask), np.flatnonzero(~mask))

    def lacking(ids, mask):
        if isinstance(ids, sparse.AllBut):
            return sparse.AllBut(ids.n, np.union1d(ids.missing, ids.at(np.flatnonzero(~mask))))
        return ids[mask]

    for module, name, value in ((peeling, "present_ids", always), (dag_sdvchain, "present_ids", always), (repair, "where", lacking)):
        monkeypatch.setattr(module, name, value)
