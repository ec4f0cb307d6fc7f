// --resume: how many rows of the write 'insert_discards' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:Discard {run: $run})
RETURN count(n) AS n
