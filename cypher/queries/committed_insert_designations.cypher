// --resume: how many rows of the write 'insert_designations' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:Designation {run: $run})
RETURN count(n) AS n
