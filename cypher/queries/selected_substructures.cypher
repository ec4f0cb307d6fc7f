// The substructure paths Step 1 selected for a run, in selection order (p_0 first): what
// deah-complete's plan (ear order, rules, new hops, paid debts) is rebuilt from (why, show).
// param: run STRING
MATCH (s:SubstructurePath {run: $run})
WHERE s.selected
RETURN s.idx AS idx, s.layers AS layers, s.position AS position
ORDER BY position
