// The SUBDIVIDES relation of a run as (idx of the subdividing path, idx of the subdivided one).
// param: run STRING
MATCH (p:SubstructurePath {run: $run})-[:SUBDIVIDES]->(q:SubstructurePath)
RETURN p.idx AS a, q.idx AS b
