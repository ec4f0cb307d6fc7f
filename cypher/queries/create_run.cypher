// Open a run in status 'running' attached to its network.
// param: id STRING
// param: key STRING
// param: engine STRING
// param: seed INTEGER
// param: started STRING
// param: m INTEGER
// param: H INTEGER
// param: pid INTEGER
MATCH (n:Network {key: $key})
CREATE (r:Run {id: $id, engine: $engine, seed: $seed, status: 'running', stage: 'created', started: $started, network: $key, m: $m, H: $H, pid: $pid})
CREATE (r)-[:`ON`]->(n)
