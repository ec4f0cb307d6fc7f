// SHARES_EDGE between selected substructure paths of a run that have a G^S edge (layer pair) in
// common (alpha holds edge codes a * (L + 1) + b); `pairs` lists the shared codes. One relationship
// per unordered pair, from the smaller idx to the larger.
// param: run STRING
MATCH (p:SubstructurePath {run: $run})
MATCH (q:SubstructurePath {run: $run})
WHERE p.selected AND q.selected AND p.idx < q.idx
UNWIND p.alpha AS e
WITH p, q, e
WHERE e IN q.alpha
WITH p, q, collect(e) AS pairs
CREATE (p)-[:SHARES_EDGE {pairs: pairs}]->(q)
