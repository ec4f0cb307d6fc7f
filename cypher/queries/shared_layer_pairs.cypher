// Which layer pairs do two selected substructure paths of a run share? Decodes the edge codes
// a * (L + 1) + b of their SHARES_EDGE into [a, b] pairs of layers, in ascending order (L + 1 is
// size(beta)). The relationship exists only between selected paths that share something, so no
// row means: one of them is not selected, or they share no layer pair. Either order of $p, $q.
// param: run STRING
// param: p INTEGER
// param: q INTEGER
MATCH (p:SubstructurePath {run: $run, idx: $p})-[e:SHARES_EDGE]-(q:SubstructurePath {run: $run, idx: $q})
UNWIND e.pairs AS code
// LadybugDB wants SKIP or LIMIT after WITH ... ORDER BY; the order feeds collect()
WITH p, q, code / size(p.beta) AS a, code % size(p.beta) AS b
ORDER BY a, b SKIP 0
RETURN p.idx AS p, p.layers AS p_layers, q.idx AS q, q.layers AS q_layers, collect([a, b]) AS pairs
