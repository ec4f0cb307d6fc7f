// --resume: how many rows of the write 'insert_substructure_paths' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:SubstructurePath {run: $run})
RETURN count(n) AS n
