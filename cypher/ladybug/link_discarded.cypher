// (:Run)-[:DISCARDED]->(:BasisPath) for a batch of discarded paths.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY DISCARDED FROM $rows
