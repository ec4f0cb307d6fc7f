// --resume: how many rows of the write 'compute_shares_edge' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:SubstructurePath {run: $run})-[r:SHARES_EDGE]->()
RETURN count(r) AS n
