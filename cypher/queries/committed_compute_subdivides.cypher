// --resume: how many rows of the write 'compute_subdivides' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:SubstructurePath {run: $run})-[r:SUBDIVIDES]->()
RETURN count(r) AS n
