// --resume: how many rows of the write 'link_reason' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:BasisPath {run: $run})-[r:REASON]->()
RETURN count(r) AS n
