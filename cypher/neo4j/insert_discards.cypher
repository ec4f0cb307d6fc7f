// Bulk insert of discard and repair records.
// Neo4j: columnar parameters (one list per column, row i is the i-th element of each), which the
// driver packs faster than a list of maps (client CPU measured 1.4x less for paths, 2.3x less
// for relationships) and the server reads as fast; Neo4jStore.bulk sends every column as its own
// parameter when a statement does not use $rows.
// param: uid LIST<STRING>
// param: run LIST<STRING>
// param: step LIST<STRING>
// param: action LIST<STRING>
// param: chain LIST<INTEGER>
// param: pair LIST<LIST<INTEGER>>
// param: shared_pairs LIST<LIST<INTEGER>>
// param: ep LIST<LIST<INTEGER>>
// param: ucp_star LIST<LIST<INTEGER>>
// param: iep LIST<LIST<INTEGER>>
// param: shared LIST<LIST<INTEGER>>
// param: substructure LIST<INTEGER>
// param: hop LIST<LIST<INTEGER>>
// param: crossing LIST<INTEGER>
// param: twin LIST<STRING>
// param: differs LIST<LIST<INTEGER>>
// param: twin_differs LIST<LIST<INTEGER>>
// param: agrees LIST<LIST<INTEGER>>
UNWIND range(0, size($uid) - 1) AS i
CREATE (:Discard {uid: $uid[i], run: $run[i], step: $step[i], action: $action[i], chain: $chain[i], pair: $pair[i], shared_pairs: $shared_pairs[i], ep: $ep[i], ucp_star: $ucp_star[i], iep: $iep[i], shared: $shared[i],
                 substructure: $substructure[i], hop: $hop[i], crossing: $crossing[i], twin: $twin[i],
                 differs: $differs[i], twin_differs: $twin_differs[i], agrees: $agrees[i]})
