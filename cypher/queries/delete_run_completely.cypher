// basispath delete: one run and every artifact it owns; its Network (and Layers) stay, other
// runs may use them and `ingest` stores networks without runs.
// The run is first marked incomplete: LadybugDB runs these statements one by one, so a deletion
// cut short leaves a run that says it is incomplete (and can be deleted again), never a
// 'complete' run with artifacts missing. (Neo4j runs them in one transaction.)
// param: id STRING
MATCH (r:Run {id: $id}) SET r.status = 'incomplete', r.stage = 'deleting';
MATCH (n:BasisPath {run: $id}) DETACH DELETE n;
MATCH (n:Discard {run: $id}) DETACH DELETE n;
MATCH (n:Chain {run: $id}) DETACH DELETE n;
MATCH (n:SubdivisionSet {run: $id}) DETACH DELETE n;
MATCH (n:SubstructurePath {run: $id}) DETACH DELETE n;
MATCH (r:Run {id: $id}) DETACH DELETE r
