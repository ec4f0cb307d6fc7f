// Bulk insert of a run's paths (kept and discarded).
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:BasisPath {uid: row.uid, run: row.run, id: row.id, nodes: row.nodes, layers: row.layers, text: row.text, kept: row.kept, taps: row.taps})
