// --resume: how many rows of the write 'link_certified_by' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:BasisPath {run: $run})-[r:CERTIFIED_BY]->()
RETURN count(r) AS n
