// The choice rule of a described deah-complete run: per core layer its neurons by rank; no row for
// a run stored path by path.
// param: run STRING
MATCH (o:ChoiceOrder {run: $run})
RETURN o.layer AS layer, o.neurons AS neurons
ORDER BY layer
