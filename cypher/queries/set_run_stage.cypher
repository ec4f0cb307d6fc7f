// Record how far a running run has got (for --resume and for users watching it).
// param: id STRING
// param: stage STRING
MATCH (r:Run {id: $id})
SET r.stage = $stage
