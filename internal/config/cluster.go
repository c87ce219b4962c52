package config

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Cluster makes the server one node of several sharing a PostgreSQL
// database (see docs/ops/cluster.md). It is off while InternalURL is
// empty.
type Cluster struct {
	// InternalURL is where the other nodes reach this one
	// (http://10.0.0.5:8080); setting it turns the cluster on.
	InternalURL string
	// NodeID names this node; default: host name and a random suffix.
	NodeID string
	// LeaseTTL is how long a room stays with a node that stopped
	// renewing its leases.
	LeaseTTL time.Duration
}

func (c *Config) clusterFlags(fs *flag.FlagSet) {
	k := &c.Cluster
	if k.LeaseTTL == 0 {
		k.LeaseTTL = 9 * time.Second
	}
	fs.StringVar(&k.InternalURL, "internal-url", k.InternalURL, "run as one node of several sharing --database-url (PostgreSQL): the URL other nodes reach this one at, http://HOST:PORT (env LECTERN_INTERNAL_URL)")
	fs.StringVar(&k.NodeID, "node-id", k.NodeID, "this node's name in the cluster; default: host name and a random suffix (env LECTERN_NODE_ID)")
	fs.DurationVar(&k.LeaseTTL, "lease-ttl", k.LeaseTTL, "how long a live room stays with a node that stopped renewing (dead); renewed every third of it (env LECTERN_LEASE_TTL)")
}

func (c *Config) checkCluster() error {
	k := c.Cluster
	if k.InternalURL == "" {
		return nil
	}
	u, err := url.Parse(k.InternalURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--internal-url must be http(s)://HOST:PORT, not %q", k.InternalURL)
	}
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return fmt.Errorf("--internal-url (several nodes) needs a PostgreSQL --database-url")
	}
	if k.LeaseTTL < time.Second || k.LeaseTTL > time.Minute {
		return fmt.Errorf("--lease-ttl must be between 1s and 1m")
	}
	return nil
}
