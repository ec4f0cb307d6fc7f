// The largest certificate of a run (basispath compare): the most kept paths that any discarded
// path's CERTIFIED_BY names. No row, or null, when nothing was discarded.
// param: run STRING
MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:CERTIFIED_BY]->(k:BasisPath)
WITH b, count(k) AS n
RETURN max(n) AS certificate_max
