// The hops of every substructure path of a run as [a, b] pairs of layers (alpha's edge codes
// a * (L + 1) + b decoded, L + 1 being size(beta)), in path order, with its layers and selection.
// param: run STRING
MATCH (s:SubstructurePath {run: $run})
UNWIND s.alpha AS code
// LadybugDB wants SKIP or LIMIT after WITH ... ORDER BY; the order feeds collect()
WITH s, code / size(s.beta) AS a, code % size(s.beta) AS b
ORDER BY s.idx, a, b SKIP 0
RETURN s.idx AS idx, s.layers AS layers, s.selected AS selected, collect([a, b]) AS hops
ORDER BY idx
