-- Several nodes (PostgreSQL only; a single node never writes these): the
-- registry of running nodes and the lease of each live room. Times are the
-- database's clock (now()), never a node's. A lease's epoch grows by one at
-- each takeover and fences work that must not run twice.

CREATE TABLE cluster_nodes (
	id TEXT PRIMARY KEY,
	public_url TEXT NOT NULL DEFAULT '',
	internal_url TEXT NOT NULL,
	udp_addr TEXT NOT NULL DEFAULT '',
	load INTEGER NOT NULL DEFAULT 0,
	started TIMESTAMPTZ NOT NULL,
	heartbeat TIMESTAMPTZ NOT NULL
);

CREATE TABLE room_leases (
	domain_id BIGINT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
	class_id BIGINT NOT NULL,
	sitting INTEGER NOT NULL,
	node TEXT NOT NULL,
	epoch BIGINT NOT NULL,
	taken TIMESTAMPTZ NOT NULL,
	expires TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (domain_id, class_id, sitting)
);

CREATE INDEX room_leases_node ON room_leases (node);
