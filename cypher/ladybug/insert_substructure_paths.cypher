// Bulk insert of Step 1's substructure paths (all of P^S) for one run.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY SubstructurePath FROM $rows
