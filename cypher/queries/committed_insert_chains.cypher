// --resume: how many rows of the write 'insert_chains' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:Chain {run: $run})-[r:LINK]->()
RETURN count(r) AS n
