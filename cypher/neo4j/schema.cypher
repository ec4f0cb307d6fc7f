// Neo4j 5 schema: uniqueness constraints on every node key and indexes on the run property.
CREATE CONSTRAINT network_key IF NOT EXISTS FOR (n:Network) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT layer_uid IF NOT EXISTS FOR (n:Layer) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT run_id IF NOT EXISTS FOR (n:Run) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT substructure_uid IF NOT EXISTS FOR (n:SubstructurePath) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT subdivision_set_uid IF NOT EXISTS FOR (n:SubdivisionSet) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT chain_uid IF NOT EXISTS FOR (n:Chain) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT basis_path_uid IF NOT EXISTS FOR (n:BasisPath) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT general_layer_uid IF NOT EXISTS FOR (n:GeneralLayer) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT discard_uid IF NOT EXISTS FOR (n:Discard) REQUIRE n.uid IS UNIQUE;
CREATE INDEX substructure_run IF NOT EXISTS FOR (n:SubstructurePath) ON (n.run);
CREATE INDEX basis_path_run_text IF NOT EXISTS FOR (n:BasisPath) ON (n.run, n.text);
CREATE INDEX basis_path_run_id IF NOT EXISTS FOR (n:BasisPath) ON (n.run, n.id);
CREATE INDEX discard_run IF NOT EXISTS FOR (n:Discard) ON (n.run);
CREATE INDEX run_status IF NOT EXISTS FOR (n:Run) ON (n.status);
CREATE CONSTRAINT designation_uid IF NOT EXISTS FOR (n:Designation) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT family_uid IF NOT EXISTS FOR (n:Family) REQUIRE n.uid IS UNIQUE;
CREATE INDEX designation_run IF NOT EXISTS FOR (n:Designation) ON (n.run);
CREATE INDEX family_run IF NOT EXISTS FOR (n:Family) ON (n.run);
CREATE CONSTRAINT choice_order_uid IF NOT EXISTS FOR (n:ChoiceOrder) REQUIRE n.uid IS UNIQUE;
CREATE CONSTRAINT described_block_uid IF NOT EXISTS FOR (n:DescribedBlock) REQUIRE n.uid IS UNIQUE;
CREATE INDEX choice_order_run IF NOT EXISTS FOR (n:ChoiceOrder) ON (n.run);
CREATE INDEX described_block_run IF NOT EXISTS FOR (n:DescribedBlock) ON (n.run)
