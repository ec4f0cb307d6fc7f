// --resume: how many rows of the write 'compute_contains' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:SubdivisionSet {run: $run})-[r:CONTAINS]->()
RETURN count(r) AS n
