// A described deah-complete run (docs/graph-model.md, "Described DEAH runs"): its choice rule, one
// ChoiceOrder per core layer: the layer (stored layer: a position in the spec for a general run)
// and its neurons by rank (rank r -> neuron), from which every direct edge and designated
// predecessor of Subroutine follows (choices.py).
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:ChoiceOrder {uid: row.uid, run: row.run, layer: row.layer, neurons: row.neurons})
