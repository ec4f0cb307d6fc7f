// Mark a run complete with its summary; done only after every artifact is written.
// param: id STRING
// param: finished STRING
// param: basis_size INTEGER
// param: certified BOOLEAN
// param: raw_certified BOOLEAN
// param: raw_size INTEGER
// param: repairs INTEGER
// param: repairs_needed INTEGER
// param: discarded INTEGER
// param: timings STRING
MATCH (r:Run {id: $id})
SET r.status = 'complete', r.stage = 'done', r.finished = $finished, r.basis_size = $basis_size,
    r.certified = $certified, r.raw_certified = $raw_certified, r.raw_size = $raw_size,
    r.repairs = $repairs, r.repairs_needed = $repairs_needed, r.discarded = $discarded, r.timings = $timings
