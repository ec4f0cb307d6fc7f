// basispath delete, first step: mark the run incomplete before its artifacts (delete_run_artifacts)
// and then the run node (delete_run) go, so a deletion cut short leaves a run that says it is
// incomplete (and can be deleted again), never a 'complete' run with artifacts missing. Its
// Network and Layers stay: other runs may use them, and `ingest` stores networks without runs.
// param: id STRING
MATCH (r:Run {id: $id})
SET r.status = 'incomplete', r.stage = 'deleting'
