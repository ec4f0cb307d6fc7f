// Remove every artifact of one run (not the run node or its network) before --resume redoes it.
// Statements run in order; relationships go with their nodes.
// param: run STRING
MATCH (n:BasisPath {run: $run}) DETACH DELETE n;
MATCH (n:Discard {run: $run}) DETACH DELETE n;
MATCH (n:Chain {run: $run}) DETACH DELETE n;
MATCH (n:SubdivisionSet {run: $run}) DETACH DELETE n;
MATCH (n:SubstructurePath {run: $run}) DETACH DELETE n;
MATCH (n:Designation {run: $run}) DELETE n;
MATCH (n:Family {run: $run}) DELETE n;
MATCH (n:ChoiceOrder {run: $run}) DELETE n;
MATCH (n:DescribedBlock {run: $run}) DELETE n
