package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lectern-lms/lectern/internal/classroom"
	"github.com/lectern-lms/lectern/internal/cluster"
	"github.com/lectern-lms/lectern/internal/store"
)

// openCluster joins the cluster when --internal-url is set (after the
// rooms' Hub exists).
func (m *Main) openCluster(ctx context.Context) error {
	k := m.Config.Cluster
	if k.InternalURL == "" {
		return nil
	}
	secret, err := m.Store.ServerSecret(ctx, "cluster")
	if err != nil {
		return fmt.Errorf("cluster secret: %w", err)
	}
	id := k.NodeID
	if id == "" {
		id = cluster.NewNodeID()
	}
	c := &cluster.Cluster{Store: m.Store, Hub: m.Hub, Logger: m.Logger, TTL: k.LeaseTTL, Secret: secret,
		Self: store.Node{ID: id, InternalURL: k.InternalURL, PublicURL: m.BaseURL()}}
	if err := c.Join(ctx); err != nil {
		return fmt.Errorf("join the cluster: %w", err)
	}
	m.cluster = c
	// The rooms' and the recorders' writes carry this node's lease.
	m.Hub.Fence = c.Fence
	if m.recordings != nil {
		m.recordings.Fence = c.Fence
	}
	m.Logger.Info("joined the cluster", "node", id, "internal_url", k.InternalURL, "lease_ttl", c.TTL)
	return nil
}

// closeOpenAttendance closes the attendance sessions a stopped server left
// open. On a cluster the other nodes' rooms are live: a dead node's
// sessions are closed room by room when its leases are taken over or swept.
func (m *Main) closeOpenAttendance(ctx context.Context) (int, error) {
	if m.Config.Cluster.InternalURL != "" {
		return 0, nil
	}
	return m.Store.CloseOpenAttendance(ctx, m.now())
}

// clusterRoutes adds the internal routes and lets the classroom relay and
// forward to other nodes.
func (m *Main) clusterRoutes(mux *http.ServeMux, pages *classroom.Pages) {
	if m.cluster == nil {
		return
	}
	m.cluster.Register(mux)
	pages.Router = m.cluster
	pages.RoomControl = m.cluster
}

// leaveCluster removes this node from the registry once its rooms closed.
func (m *Main) leaveCluster() {
	if m.cluster == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.cluster.Leave(ctx); err != nil {
		m.Logger.Error("leave the cluster", "err", err)
	}
}
