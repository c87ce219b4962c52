package server

import "net"

// WrapListeners replaces each of m's listeners (bound by Open) with
// wrap's, before Serve: a test watches the server's side of its
// connections.
func (m *Main) WrapListeners(wrap func(net.Listener) net.Listener) {
	for i, ln := range m.listeners {
		m.listeners[i] = wrap(ln)
	}
}
