// Per substructure path of a run: its kept and discarded paths (FROM_SUBSTRUCTURE) and the discard
// records of those paths by step (REASON). A path SDVChain discarded and the repair re-admitted
// is kept and has both a chain and a repair record. Skeleton paths belong to no substructure.
// param: run STRING
MATCH (s:SubstructurePath {run: $run})
OPTIONAL MATCH (b:BasisPath)-[:FROM_SUBSTRUCTURE]->(s)
OPTIONAL MATCH (b)-[:REASON]->(d:Discard)
RETURN s.idx AS idx, s.layers AS layers, s.selected AS selected,
       count(DISTINCT CASE WHEN b.kept THEN b.id END) AS kept,
       count(DISTINCT CASE WHEN NOT b.kept THEN b.id END) AS discarded,
       count(CASE WHEN d.step = 'chain' THEN 1 END) AS chain,
       count(CASE WHEN d.step = 'head' THEN 1 END) AS head,
       count(CASE WHEN d.step = 'prefix' THEN 1 END) AS prefix,
       count(CASE WHEN d.step = 'suffix' THEN 1 END) AS suffix,
       count(CASE WHEN d.step = 'local' THEN 1 END) AS local,
       count(CASE WHEN d.step = 'repair' THEN 1 END) AS repair
ORDER BY idx
