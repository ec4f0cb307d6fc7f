// --resume: a run that did not complete goes back to 'running' before it is redone; its
// 'started' time stays the original one.
// param: id STRING
// param: pid INTEGER
MATCH (r:Run {id: $id})
SET r.status = 'running', r.stage = 'created', r.pid = $pid
