// Every run, newest first, with its network and outcome.
MATCH (r:Run)-[:`ON`]->(n:Network)
RETURN r.id AS id, n.name AS network, coalesce(n.kind, 'layered') AS kind, r.engine AS engine, r.seed AS seed, r.status AS status,
       r.stage AS stage, r.m AS m, r.H AS H, r.basis_size AS basis_size, r.certified AS certified,
       r.repairs AS repairs, r.started AS started, r.finished AS finished, r.pid AS pid
ORDER BY r.started DESC, r.id
