// basispath show --certificate: the kept paths a discarded path is the integer combination of,
// with their coefficients (CERTIFIED_BY {coef}).
// param: run STRING
// param: id INTEGER
MATCH (q:BasisPath {run: $run, id: $id})-[c:CERTIFIED_BY]->(b:BasisPath)
RETURN b.id AS id, b.text AS text, b.nodes AS nodes, b.layers AS layers, c.coef AS coef
ORDER BY id
