// Bulk insert of Step 1's substructure paths (all of P^S) for one run.
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:SubstructurePath {uid: row.uid, run: row.run, idx: row.idx, layers: row.layers, alpha: row.alpha, beta: row.beta, u_size: row.u_size, selected: row.selected, position: row.position})
