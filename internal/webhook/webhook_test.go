package webhook

import (
	"net/netip"
	"testing"
	"time"
)

// The Standard Webhooks specification's example: a receiver library
// built on the specification computes this signature for this message.
func TestSignMatchesSpecificationExample(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestSignRefusesSecretWithoutPrefix(t *testing.T) {
	if _, err := Sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", time.Unix(1, 0), nil); err == nil {
		t.Error("a secret without whsec_ was accepted")
	}
}

func TestNewSecretIsUsable(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	key, err := secretKey(a)
	if err != nil || len(key) != 32 {
		t.Fatalf("secret %q: key of %d bytes, err %v", a, len(key), err)
	}
}

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"93.184.215.14", true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"127.0.0.1", false},
		{"127.8.9.10", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"fd00::1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"100.64.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"64:ff9b::a00:1", false},
		{"255.255.255.255", false},
	} {
		if got := Allowed(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Allowed(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestBackoffDoublesToTheCap(t *testing.T) {
	prev := time.Duration(0)
	total := time.Duration(0)
	for n := 1; n <= 20; n++ {
		d := Backoff(n)
		if d < prev || d > MaxRetry {
			t.Fatalf("Backoff(%d) = %s after %s", n, d, prev)
		}
		if prev > 0 && prev < MaxRetry/2 && d != 2*prev {
			t.Errorf("Backoff(%d) = %s, want double %s", n, d, prev)
		}
		prev = d
		total += d
	}
	if Backoff(1) != FirstRetry || Backoff(20) != MaxRetry {
		t.Errorf("first %s, last %s", Backoff(1), Backoff(20))
	}
	if total < RetryFor {
		t.Errorf("20 back-offs cover %s, less than the retry window", total)
	}
}
