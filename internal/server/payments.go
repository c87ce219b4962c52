package server

import "github.com/lectern-lms/lectern/internal/payment"

// payments is the payment service both APIs and the gateways' callbacks
// share.
func (m *Main) payments() *payment.Service {
	return &payment.Service{Store: m.Store, Secret: m.Secret, BaseURL: m.BaseURL, Logger: m.Logger, Now: m.Now}
}
