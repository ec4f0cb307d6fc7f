// One run with its network (for --resume, summaries, and rebuilding a described run).
// param: id STRING
MATCH (r:Run {id: $id})-[:`ON`]->(n:Network)
RETURN r.id AS id, r.engine AS engine, r.seed AS seed, r.status AS status, r.stage AS stage,
       r.certified AS certified, r.raw_certified AS raw_certified, r.basis_size AS basis_size, r.discarded AS discarded,
       n.key AS key, coalesce(n.kind, 'layered') AS kind, n.name AS name, n.widths AS widths, n.skips AS skips
