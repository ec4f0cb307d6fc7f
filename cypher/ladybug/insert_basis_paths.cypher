// Bulk insert of a run's paths (kept and discarded).
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY BasisPath FROM $rows
