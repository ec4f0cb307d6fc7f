// --resume: how many rows of the write 'link_discarded' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:Run {id: $run})-[r:DISCARDED]->()
RETURN count(r) AS n
