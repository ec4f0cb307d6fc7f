// basispath show on a general run: how many kept paths visit each layer (by position).
// param: run STRING
MATCH (b:BasisPath {run: $run})
WHERE b.kept
UNWIND b.layers AS layer
RETURN layer, count(*) AS paths
ORDER BY layer
