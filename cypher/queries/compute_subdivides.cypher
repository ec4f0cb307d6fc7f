// SUBDIVIDES between the selected substructure paths of a run: p subdivides q when p visits
// every layer of q and more (paper, Definition 6).
// param: run STRING
MATCH (p:SubstructurePath {run: $run})
MATCH (q:SubstructurePath {run: $run})
WHERE p.selected AND q.selected AND size(p.layers) > size(q.layers)
  AND all(l IN q.layers WHERE l IN p.layers)
CREATE (p)-[:SUBDIVIDES]->(q)
