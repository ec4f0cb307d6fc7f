// Runs left 'running' by a process that is gone become 'incomplete' (called by the only writer).
MATCH (r:Run {status: 'running'})
SET r.status = 'incomplete'
RETURN r.id AS id
