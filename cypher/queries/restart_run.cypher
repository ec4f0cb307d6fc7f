// --resume: a run that did not complete goes back to 'running' before it is redone.
// param: id STRING
// param: started STRING
// param: pid INTEGER
MATCH (r:Run {id: $id})
SET r.status = 'running', r.stage = 'created', r.started = $started, r.pid = $pid
