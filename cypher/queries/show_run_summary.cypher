// basispath show: one run with its network and outcome counts (no row: no such run).
// param: run STRING
MATCH (r:Run {id: $run})-[:`ON`]->(n:Network)
RETURN r.id AS id, r.engine AS engine, r.seed AS seed, r.status AS status,
       n.name AS name, coalesce(n.kind, 'layered') AS kind, n.key AS key, n.widths AS widths, n.skips AS skips, n.m AS m, n.H AS H,
       r.basis_size AS basis_size, r.certified AS certified, r.repairs AS repairs,
       r.discarded AS discarded
