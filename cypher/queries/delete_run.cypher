// Remove a run node that was refused before it produced anything (its artifacts go first).
// param: id STRING
MATCH (r:Run {id: $id})
DETACH DELETE r
