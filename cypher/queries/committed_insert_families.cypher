// --resume: how many rows of the write 'insert_families' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:Family {run: $run})
RETURN count(n) AS n
