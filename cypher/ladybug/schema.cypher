// LadybugDB schema: node and relationship tables of the basispath graph model (docs/graph-model.md).
// Every node table has a string primary key `uid` (run id + local id) so runs never collide.
CREATE NODE TABLE IF NOT EXISTS Network(key STRING, name STRING, widths INT64[], skips INT64[], m INT64, H INT64, PRIMARY KEY(key));
CREATE NODE TABLE IF NOT EXISTS Layer(uid STRING, network STRING, `index` INT64, width INT64, PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS Run(id STRING, engine STRING, seed INT64, status STRING, stage STRING, started STRING, finished STRING, network STRING, m INT64, H INT64, basis_size INT64, certified BOOLEAN, raw_certified BOOLEAN, raw_size INT64, repairs INT64, repairs_needed INT64, discarded INT64, timings STRING, pid INT64, PRIMARY KEY(id));
CREATE NODE TABLE IF NOT EXISTS SubstructurePath(uid STRING, run STRING, idx INT64, layers INT64[], alpha INT64[], beta INT64[], u_size INT64, selected BOOLEAN, position INT64, PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS SubdivisionSet(uid STRING, run STRING, r INT64, size INT64, PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS Chain(uid STRING, run STRING, t INT64, PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS BasisPath(uid STRING, run STRING, id INT64, nodes INT64[], layers INT64[], text STRING, kept BOOLEAN, PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS Discard(uid STRING, run STRING, step STRING, action STRING, chain INT64, pair INT64[], shared_pairs INT64[], ep INT64[], ucp_star INT64[], iep INT64[], shared INT64[], PRIMARY KEY(uid));
CREATE REL TABLE IF NOT EXISTS HAS_LAYER(FROM Network TO Layer);
CREATE REL TABLE IF NOT EXISTS `ON`(FROM Run TO Network);
CREATE REL TABLE IF NOT EXISTS OF(FROM SubdivisionSet TO SubstructurePath);
CREATE REL TABLE IF NOT EXISTS CONTAINS(FROM SubdivisionSet TO SubstructurePath);
CREATE REL TABLE IF NOT EXISTS LINK(FROM Chain TO SubdivisionSet, pos INT64);
CREATE REL TABLE IF NOT EXISTS KEPT(FROM Run TO BasisPath);
CREATE REL TABLE IF NOT EXISTS DISCARDED(FROM Run TO BasisPath);
CREATE REL TABLE IF NOT EXISTS FROM_SUBSTRUCTURE(FROM BasisPath TO SubstructurePath);
CREATE REL TABLE IF NOT EXISTS REASON(FROM BasisPath TO Discard);
CREATE REL TABLE IF NOT EXISTS CERTIFIED_BY(FROM BasisPath TO BasisPath, coef INT64);
CREATE REL TABLE IF NOT EXISTS SUBDIVIDES(FROM SubstructurePath TO SubstructurePath);
CREATE REL TABLE IF NOT EXISTS SHARES_EDGE(FROM SubstructurePath TO SubstructurePath, pairs INT64[]);
// deah-complete's own Discard properties (docs/graph-model.md), added to stores made before them:
// ALTER ... IF NOT EXISTS is a no-op on a new store, and both get the same column order (COPY
// loads columns in table order).
ALTER TABLE Discard ADD IF NOT EXISTS substructure INT64 DEFAULT -1;
ALTER TABLE Discard ADD IF NOT EXISTS hop INT64[] DEFAULT [];
ALTER TABLE Discard ADD IF NOT EXISTS crossing INT64 DEFAULT -1;
ALTER TABLE Discard ADD IF NOT EXISTS twin STRING DEFAULT '';
ALTER TABLE Discard ADD IF NOT EXISTS differs INT64[] DEFAULT [];
ALTER TABLE Discard ADD IF NOT EXISTS twin_differs INT64[] DEFAULT [];
ALTER TABLE Discard ADD IF NOT EXISTS agrees INT64[] DEFAULT [];
// General networks (docs/general-networks.md): a Network of kind 'general' has GeneralLayer nodes
// (name, size, position in the spec) and a CONNECTS relationship per connection (kind, taps, the
// first weight id of a trainable connection, -1 for identity; position = its place in the spec).
// Added with IF NOT EXISTS so stores made before them open and get them the next time they are
// opened for writing; a path's taps (-1 on an identity hop, [] for layered runs) likewise.
CREATE NODE TABLE IF NOT EXISTS GeneralLayer(uid STRING, network STRING, position INT64, name STRING, size INT64, PRIMARY KEY(uid));
CREATE REL TABLE IF NOT EXISTS HAS_GENERAL_LAYER(FROM Network TO GeneralLayer);
CREATE REL TABLE IF NOT EXISTS CONNECTS(FROM GeneralLayer TO GeneralLayer, position INT64, kind STRING, taps INT64, weight_offset INT64);
ALTER TABLE Network ADD IF NOT EXISTS kind STRING DEFAULT 'layered';
ALTER TABLE BasisPath ADD IF NOT EXISTS taps INT64[] DEFAULT [];
ALTER TABLE CONNECTS ADD IF NOT EXISTS groups INT64 DEFAULT 1;
// Described bases (docs/graph-model.md): a skeleton run of a general network stores its designated
// walks and weight families instead of a BasisPath per path.
CREATE NODE TABLE IF NOT EXISTS Designation(uid STRING, run STRING, side STRING, layer INT64, connection INT64, neurons INT64[], PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS Family(uid STRING, run STRING, position INT64, connection INT64, first INT64, size INT64, excluded INT64[], PRIMARY KEY(uid));
// Described deah-complete runs (docs/graph-model.md): the choice rule per core layer and one row per
// block of the ear order, instead of a node per kept and discarded path.
CREATE NODE TABLE IF NOT EXISTS ChoiceOrder(uid STRING, run STRING, layer INT64, neurons INT64[], PRIMARY KEY(uid));
CREATE NODE TABLE IF NOT EXISTS DescribedBlock(uid STRING, run STRING, position INT64, substructure INT64, rule STRING, hop INT64[], kept_first INT64, kept_count INT64, discard_first INT64, discard_count INT64, prefix_count INT64, PRIMARY KEY(uid))
