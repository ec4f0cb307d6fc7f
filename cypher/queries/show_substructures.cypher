// basispath show: every substructure path of a run (all of P^S) with its G^S edge codes and selection.
// param: run STRING
MATCH (s:SubstructurePath {run: $run})
RETURN s.idx AS idx, s.layers AS layers, s.alpha AS alpha, s.selected AS selected,
       s.position AS position, s.u_size AS u_size
ORDER BY idx
