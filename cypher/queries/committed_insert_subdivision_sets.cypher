// --resume: how many rows of the write 'insert_subdivision_sets' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:SubdivisionSet {run: $run})
RETURN count(n) AS n
