// Bulk insert of a run's paths (kept and discarded).
// Neo4j: columnar parameters (one list per column, row i is the i-th element of each), which the
// driver packs faster than a list of maps (client CPU measured 1.4x less for paths, 2.3x less
// for relationships) and the server reads as fast; Neo4jStore.bulk sends every column as its own
// parameter when a statement does not use $rows.
// param: uid LIST<STRING>
// param: run LIST<STRING>
// param: id LIST<INTEGER>
// param: nodes LIST<LIST<INTEGER>>
// param: layers LIST<LIST<INTEGER>>
// param: text LIST<STRING>
// param: kept LIST<BOOLEAN>
// param: taps LIST<LIST<INTEGER>>
UNWIND range(0, size($uid) - 1) AS i
CREATE (:BasisPath {uid: $uid[i], run: $run[i], id: $id[i], nodes: $nodes[i], layers: $layers[i], text: $text[i], kept: $kept[i], taps: $taps[i]})
