// basispath show: how many of a run's discarded paths each DEAH step discarded (chain, head, repair).
// param: run STRING
MATCH (r:Run {id: $run})-[:DISCARDED]->(b:BasisPath)
MATCH (b)-[:REASON]->(d:Discard)
RETURN d.step AS step, count(b) AS n
ORDER BY step
