// Package config holds Lectern's settings. Every setting has a flag and an
// environment variable of the same name (--data-dir, LECTERN_DATA_DIR); a
// flag given on the command line wins over the environment.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Config is every setting of the server and the operator commands.
type Config struct {
	Addr         string
	AltAddr      string
	PublicURL    string
	DataDir      string
	DatabaseURL  string
	TLSCert      string
	TLSKey       string
	RateLimit    float64
	RateBurst    int
	MaxBodyBytes int64
	// ResponseStyle is the classroom API's JSON style for domains that set
	// none: "compat" (the default: what live clients read) or "seed" (the
	// specification's one-element arrays).
	ResponseStyle   string
	ShutdownTimeout time.Duration
	LogFormat       string
	// RTCUDPPort is the one UDP port of the classroom's media (ICE); 0
	// picks a free one.
	RTCUDPPort int
	// RTCPublicIP is the public address advertised for media when the
	// server is behind 1:1 NAT; empty advertises the local addresses.
	RTCPublicIP string
	// TURNPort is the embedded TURN server's port (UDP and TCP); 0 turns
	// it off.
	TURNPort int
	// TestClock enables POST /_test/clock, which moves the server's clock
	// (browser tests only; refused unless the server listens on loopback).
	TestClock bool
	// Blob is where large files are kept (see blob.go).
	Blob Blob
	// Cluster makes the server a node of several (see cluster.go).
	Cluster Cluster
	// MetricsAddr, when set, serves GET /metrics on its own listener
	// instead of the main address.
	MetricsAddr string
	// WebhookAllowPrivate lets webhooks reach private and loopback
	// addresses (development only).
	WebhookAllowPrivate bool
	// WebhookRetention is how long delivered and failed webhook messages
	// and delivery-log lines are kept.
	WebhookRetention time.Duration
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Addr:             "127.0.0.1:8080",
		DataDir:          "./lectern-data",
		RateLimit:        50,
		RateBurst:        100,
		MaxBodyBytes:     1 << 20,
		ResponseStyle:    "compat",
		ShutdownTimeout:  15 * time.Second,
		LogFormat:        "text",
		RTCUDPPort:       7881,
		TURNPort:         3478,
		WebhookRetention: 30 * 24 * time.Hour,
	}
}

// StoreFlags registers the settings every command needs (where the data
// lives) on fs.
func (c *Config) StoreFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory for the SQLite file and recordings (env LECTERN_DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "postgres://... to use PostgreSQL; empty for SQLite in the data dir (env LECTERN_DATABASE_URL)")
	c.blobFlags(fs)
}

// ServeFlags registers the server's settings on fs.
func (c *Config) ServeFlags(fs *flag.FlagSet) {
	c.StoreFlags(fs)
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (env LECTERN_ADDR)")
	fs.StringVar(&c.AltAddr, "alt-addr", c.AltAddr, "optional second address serving the same API, for deployments that keep a second host name (env LECTERN_ALT_ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "public base URL used in launch and recording links; default http(s)://ADDR (env LECTERN_PUBLIC_URL)")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "TLS certificate file; with --tls-key serves HTTPS (env LECTERN_TLS_CERT)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "TLS private key file (env LECTERN_TLS_KEY)")
	fs.Float64Var(&c.RateLimit, "rate-limit", c.RateLimit, "requests per second allowed per API key; 0 disables (env LECTERN_RATE_LIMIT)")
	fs.IntVar(&c.RateBurst, "rate-burst", c.RateBurst, "requests an API key may burst above the rate (env LECTERN_RATE_BURST)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest request body accepted, in bytes (env LECTERN_MAX_BODY_BYTES)")
	fs.StringVar(&c.ResponseStyle, "response-style", c.ResponseStyle, "classroom API JSON style for domains that set none: compat (what live clients read) or seed (the specification's arrays) (env LECTERN_RESPONSE_STYLE)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long to wait for in-flight requests on shutdown (env LECTERN_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json (env LECTERN_LOG_FORMAT)")
	fs.IntVar(&c.RTCUDPPort, "rtc-udp-port", c.RTCUDPPort, "UDP port of the live classroom's audio and video; 0 picks a free one (env LECTERN_RTC_UDP_PORT)")
	fs.StringVar(&c.RTCPublicIP, "rtc-public-ip", c.RTCPublicIP, "public IP to advertise for media when behind 1:1 NAT (env LECTERN_RTC_PUBLIC_IP)")
	fs.IntVar(&c.TURNPort, "turn-port", c.TURNPort, "port of the embedded TURN server, UDP and TCP; 0 turns it off (env LECTERN_TURN_PORT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve GET /metrics on this address only (e.g. 127.0.0.1:9090); empty serves it on the main address (env LECTERN_METRICS_ADDR)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", c.WebhookAllowPrivate, "DEVELOPMENT ONLY: let webhooks reach private, loopback and link-local addresses (env LECTERN_WEBHOOK_ALLOW_PRIVATE)")
	fs.DurationVar(&c.WebhookRetention, "webhook-retention", c.WebhookRetention, "how long delivered and failed webhook messages and delivery-log lines are kept, e.g. 720h (env LECTERN_WEBHOOK_RETENTION)")
	c.clusterFlags(fs)
	fs.BoolVar(&c.TestClock, "test-clock", c.TestClock, "TESTS ONLY: enable POST /_test/clock to move the server's clock; loopback addresses only (env LECTERN_TEST_CLOCK)")
}

// ErrInvalid wraps every error of Parse that is not a command-line syntax
// error (which the flag package has already printed).
var ErrInvalid = errors.New("invalid configuration")

// Parse applies the environment to every flag of fs that was not set on
// the command line, then checks the result.
func (c *Config) Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "LECTERN_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
			}
		}
	})
	if err == nil {
		err = c.Check()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// Check validates settings that flags alone cannot.
func (c *Config) Check() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key must be given together")
	}
	if c.ResponseStyle != "seed" && c.ResponseStyle != "compat" {
		return fmt.Errorf("--response-style must be seed or compat, not %q", c.ResponseStyle)
	}
	if c.MaxBodyBytes < 1024 {
		return fmt.Errorf("--max-body-bytes must be at least 1024")
	}
	if c.RateLimit < 0 || c.RateBurst < 1 {
		return fmt.Errorf("--rate-limit must be >= 0 and --rate-burst >= 1")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if c.RTCUDPPort < 0 || c.RTCUDPPort > 65535 {
		return fmt.Errorf("--rtc-udp-port must be 0-65535")
	}
	if c.TURNPort < 0 || c.TURNPort > 65535 {
		return fmt.Errorf("--turn-port must be 0-65535")
	}
	if c.TestClock && (!loopback(c.Addr) || c.AltAddr != "" && !loopback(c.AltAddr)) {
		return fmt.Errorf("--test-clock is for tests only and needs a loopback --addr (and --alt-addr), such as 127.0.0.1:8080")
	}
	if c.WebhookRetention < time.Hour {
		return fmt.Errorf("--webhook-retention must be at least 1h, not %s", c.WebhookRetention)
	}
	if err := c.Blob.check(); err != nil {
		return err
	}
	if err := c.checkCluster(); err != nil {
		return err
	}
	if c.RTCPublicIP != "" && net.ParseIP(c.RTCPublicIP) == nil {
		return fmt.Errorf("--rtc-public-ip must be an IP address, not %q", c.RTCPublicIP)
	}
	return nil
}

// BaseURL is the public URL, or one derived from the listen address.
func (c *Config) BaseURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	scheme := "http"
	if c.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + c.Addr
}

// loopback reports whether addr (host:port) names a loopback host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
