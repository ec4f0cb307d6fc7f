// One run with its network (for --resume and for summaries).
// param: id STRING
MATCH (r:Run {id: $id})-[:`ON`]->(n:Network)
RETURN r.id AS id, r.engine AS engine, r.seed AS seed, r.status AS status, r.stage AS stage,
       n.key AS key, coalesce(n.kind, 'layered') AS kind, n.name AS name, n.widths AS widths, n.skips AS skips
