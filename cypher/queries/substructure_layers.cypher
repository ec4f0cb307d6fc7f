// Layer sequences of some substructure paths of a run (to show SDVChain's pair p_from -> p_to).
// param: run STRING
// param: idxs LIST<INTEGER>
MATCH (s:SubstructurePath {run: $run})
WHERE s.idx IN $idxs
RETURN s.idx AS idx, s.layers AS layers
