// --resume: how many rows of the write 'link_kept' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:Run {id: $run})-[r:KEPT]->()
RETURN count(r) AS n
