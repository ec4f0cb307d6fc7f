// --resume: how many rows of the write 'insert_described_blocks' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:DescribedBlock {run: $run})
RETURN count(n) AS n
