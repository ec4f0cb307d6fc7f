// --resume: how many rows of the write 'insert_basis_paths' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:BasisPath {run: $run})
RETURN count(n) AS n
