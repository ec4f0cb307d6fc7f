// Bulk insert of Step 1's substructure paths (all of P^S) for one run.
// Neo4j: columnar parameters (one list per column, row i is the i-th element of each), which the
// driver packs faster than a list of maps (client CPU measured 1.4x less for paths, 2.3x less
// for relationships) and the server reads as fast; Neo4jStore.bulk sends every column as its own
// parameter when a statement does not use $rows.
// param: uid LIST<STRING>
// param: run LIST<STRING>
// param: idx LIST<INTEGER>
// param: layers LIST<LIST<INTEGER>>
// param: alpha LIST<LIST<INTEGER>>
// param: beta LIST<LIST<INTEGER>>
// param: u_size LIST<INTEGER>
// param: selected LIST<BOOLEAN>
// param: position LIST<INTEGER>
UNWIND range(0, size($uid) - 1) AS i
CREATE (:SubstructurePath {uid: $uid[i], run: $run[i], idx: $idx[i], layers: $layers[i], alpha: $alpha[i], beta: $beta[i], u_size: $u_size[i], selected: $selected[i], position: $position[i]})
