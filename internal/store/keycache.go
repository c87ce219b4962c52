package store

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// Verified API keys are remembered for a short time, so a request does not
// query the database to check its key (the check was the largest single
// cost of a point read, issue 13). Only keys that verified are kept, by
// their SHA-256 (never in the clear), with the domain they unlock; a wrong
// key always goes to the database, so a new key works at once everywhere.
//
// The bound, stated in docs/ops/cluster.md and docs/performance.md: a key
// rotated, or a domain's plan or response style changed, through this
// Store is seen at once by this process (its entries are dropped); any
// other process (another node, or the `lectern domain` command) sees it
// within KeyCacheTTL.
const (
	// KeyCacheTTL is how long a verified key is trusted without asking the
	// database again.
	KeyCacheTTL = 2 * time.Second
	// keyCacheSize bounds the entries kept; when full, expired entries are
	// dropped, then arbitrary ones.
	keyCacheSize = 4096
)

type keyCacheEntry struct {
	d       Domain
	expires time.Time
}

// keyCache maps an API, a domain id and a key's hash to a verified domain.
type keyCache struct {
	mu sync.Mutex
	m  map[keyCacheKey]keyCacheEntry
	// gen counts forgets: a check that started before one must not store
	// what it read, which may be the key just rotated.
	gen uint64
}

// keyCacheKey is a comparable value, not a string built per request.
type keyCacheKey struct {
	api      API
	domainID int64
	sum      [sha256.Size]byte
}

func cacheKey(api API, domainID int64, key string) keyCacheKey {
	// The key is copied to the stack when it fits (keys are 43 bytes):
	// []byte(key) of more than 32 bytes is made on the heap.
	var buf [64]byte
	return keyCacheKey{api: api, domainID: domainID, sum: sha256.Sum256(append(buf[:0], key...))}
}

// get returns the entry for k, if fresh, and the generation to hand to
// put after checking the database.
func (c *keyCache) get(k keyCacheKey, now time.Time) (Domain, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.expires) {
		return Domain{}, false, c.gen
	}
	return e.d, true, c.gen
}

func (c *keyCache) put(k keyCacheKey, d Domain, now time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil {
		c.m = make(map[keyCacheKey]keyCacheEntry)
	}
	if len(c.m) >= keyCacheSize {
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < keyCacheSize {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = keyCacheEntry{d: d, expires: now.Add(KeyCacheTTL)}
}

// forget drops every entry of a domain.
func (c *keyCache) forget(domainID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.m {
		if e.d.ID == domainID {
			delete(c.m, k)
		}
	}
}

// AuthLMS returns the domain whose id is domainID if key is its LMS key.
// The comparison of hashes is constant-time. Any mismatch, including an
// unknown domain, returns a CodeUnauthorized error. A key verified less
// than KeyCacheTTL ago is not checked against the database again.
func (s *Store) AuthLMS(ctx context.Context, domainID int64, key string) (Domain, error) {
	return s.authCached(cacheKey(APILMS, domainID, key), func() (Domain, error) {
		return s.authLMS(ctx, domainID, key)
	})
}

// AuthClassroom returns the domain whose classroom key is key. A key
// verified less than KeyCacheTTL ago is not checked against the database
// again.
func (s *Store) AuthClassroom(ctx context.Context, key string) (Domain, error) {
	if key == "" {
		return Domain{}, errUnauthorized
	}
	return s.authCached(cacheKey(APIClassroom, 0, key), func() (Domain, error) {
		return s.authClassroom(ctx, key)
	})
}

// authCached answers from the cache, or runs check and remembers a success.
func (s *Store) authCached(k keyCacheKey, check func() (Domain, error)) (Domain, error) {
	now := time.Now()
	d, ok, gen := s.keys.get(k, now)
	if ok {
		return d, nil
	}
	d, err := check()
	if err != nil {
		return Domain{}, err
	}
	s.keys.put(k, d, now, gen)
	return d, nil
}
