// (:BasisPath)-[:FROM_SUBSTRUCTURE]->(:SubstructurePath) for a batch of paths.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY FROM_SUBSTRUCTURE FROM $rows
