// --resume: how many rows of the write 'insert_choice_orders' a killed run committed (store/resume.py).
// param: run STRING
MATCH (n:ChoiceOrder {run: $run})
RETURN count(n) AS n
