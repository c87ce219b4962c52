package server

import (
	"context"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/webhook"
)

// WebhookPollInterval is how often the webhook worker looks for due
// messages when Main.WebhookPoll is 0.
const WebhookPollInterval = time.Second

// openWebhooks makes the webhook worker (set on Main.Webhooks) and counts
// its backlog.
func (m *Main) openWebhooks() {
	m.Webhooks = &webhook.Worker{Store: m.Store, Client: webhook.NewClient(m.Config.WebhookAllowPrivate),
		Logger: m.Logger, Now: m.Now, Observer: m.Metrics, Retention: m.Config.WebhookRetention}
	if m.Config.WebhookAllowPrivate {
		m.Logger.Warn("webhooks may reach private and loopback addresses (--webhook-allow-private): for development only")
	}
	m.Metrics.Gauge("lectern_webhook_backlog", "Webhook messages waiting for delivery (all domains; the same on every node).", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := m.Store.WebhookBacklog(ctx)
		if err != nil {
			return 0
		}
		return float64(n)
	})
}

// runWebhooks delivers the outbox on loops until ctx is done, unless
// WebhookPoll is negative; loops.Wait returns once the worker has stopped
// (its last attempt recorded).
func (m *Main) runWebhooks(ctx context.Context, loops *sync.WaitGroup) {
	every := m.WebhookPoll
	if every < 0 {
		return
	}
	if every == 0 {
		every = WebhookPollInterval
	}
	loops.Go(func() { m.Webhooks.Run(ctx, every) })
}
