// (:Run)-[:KEPT]->(:BasisPath) for a batch of kept paths.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY KEPT FROM $rows
