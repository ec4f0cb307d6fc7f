// --resume: how many rows of the write 'link_from_substructure' a killed run committed (store/resume.py).
// param: run STRING
MATCH (:BasisPath {run: $run})-[r:FROM_SUBSTRUCTURE]->()
RETURN count(r) AS n
