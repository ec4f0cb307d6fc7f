// The latest complete run of a network (by structure key) with a given engine and seed.
// param: key STRING
// param: engine STRING
// param: seed INTEGER
MATCH (r:Run {network: $key, engine: $engine, seed: $seed, status: 'complete'})
RETURN r.id AS id
ORDER BY r.finished DESC
LIMIT 1
