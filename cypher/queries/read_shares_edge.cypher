// The SHARES_EDGE relation of a run with the shared edge codes.
// param: run STRING
MATCH (p:SubstructurePath {run: $run})-[s:SHARES_EDGE]->(q:SubstructurePath)
RETURN p.idx AS a, q.idx AS b, s.pairs AS pairs
