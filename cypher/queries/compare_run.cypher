// One stored run summarised for 'basispath compare': sizes, substructures, chains, discards per step.
// param: run STRING
MATCH (r:Run {id: $run})-[:`ON`]->(n:Network)
OPTIONAL MATCH (s:SubstructurePath {run: $run})
WITH r, n, count(s) AS substructure_paths, sum(CASE WHEN s.selected THEN 1 ELSE 0 END) AS selected
OPTIONAL MATCH (c:Chain {run: $run})
WITH r, n, substructure_paths, selected, count(c) AS chains
OPTIONAL MATCH (d:Discard {run: $run})
RETURN r.id AS id, n.name AS name, coalesce(n.kind, 'layered') AS kind, n.key AS key, r.engine AS engine, r.seed AS seed, r.status AS status, r.m AS m, r.H AS H,
       r.basis_size AS basis_size, r.certified AS certified, r.raw_certified AS raw_certified,
       r.repairs AS repairs, r.repairs_needed AS repairs_needed, r.timings AS timings,
       substructure_paths, selected, chains,
       sum(CASE WHEN d.step = 'chain' THEN 1 ELSE 0 END) AS chain_discards,
       sum(CASE WHEN d.step = 'head' THEN 1 ELSE 0 END) AS head_discards,
       sum(CASE WHEN d.step = 'prefix' THEN 1 ELSE 0 END) AS prefix_discards,
       sum(CASE WHEN d.step = 'suffix' THEN 1 ELSE 0 END) AS suffix_discards,
       sum(CASE WHEN d.step = 'local' THEN 1 ELSE 0 END) AS local_discards
