// (:BasisPath)-[:REASON]->(:Discard): why a path was discarded (or repaired).
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY REASON FROM $rows
