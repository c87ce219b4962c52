//go:build pprof

package main

// Built with -tags pprof, the binary serves the runtime's profiles on
// 127.0.0.1:6060 (or LECTERN_PPROF_ADDR) for measuring; release builds never
// include it. See docs/performance.md.

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("LECTERN_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6060"
	}
	go func() { log.Println(http.ListenAndServe(addr, nil)) }()
}
