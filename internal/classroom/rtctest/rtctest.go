// Package rtctest is the pion WebRTC client that tests of the live
// classroom run against a real SFU on loopback: the client's pion API and
// the receiving side of a stream offered to it.
//
// Only test files import it (it imports testing); a test in cmd/lectern
// checks that the binary does not.
package rtctest

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// Opus is the codec of the test clients' microphones.
var Opus = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}

// Options are what differs between the test clients.
type Options struct {
	// Interceptors adds pion's default interceptors (NACKs, RTCP sender
	// and receiver reports, TWCC), as a browser's client sends and reads
	// them.
	Interceptors bool
	// AudioExtensions are the URIs of the RTP header extensions the
	// client offers and accepts on audio (browsers: the audio level).
	AudioExtensions []string
}

// NewAPI returns the pion API of a test client: UDP on IPv4 loopback only,
// no mDNS, the default codecs.
func NewAPI(t testing.TB, o Options) *webrtc.API {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	for _, uri := range o.AudioExtensions {
		if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri}, webrtc.RTPCodecTypeAudio); err != nil {
			t.Fatal(err)
		}
	}
	opts := []func(*webrtc.API){webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me)}
	if o.Interceptors {
		ir := &interceptor.Registry{}
		if err := webrtc.RegisterDefaultInterceptors(me, ir); err != nil {
			t.Fatal(err)
		}
		opts = append(opts, webrtc.WithInterceptorRegistry(ir))
	}
	return webrtc.NewAPI(opts...)
}

// Answer answers the offer of a stream sent to a test client: it makes a
// PeerConnection that reads every track it receives, adding one to
// received for each RTP packet, sets its answer as the local description
// and returns the PeerConnection and the answer's SDP. With gather the SDP
// is returned once every local candidate is in it (on loopback that is
// quick); without, at once, and the caller trickles the candidates
// (OnICECandidate) after sending the answer. On an error the
// PeerConnection is closed.
func Answer(api *webrtc.API, offer string, received *atomic.Int64, gather bool) (*webrtc.PeerConnection, string, error) {
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, "", err
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			received.Add(1)
		}
	})
	sdp, err := answer(pc, offer, gather)
	if err != nil {
		pc.Close()
		return nil, "", err
	}
	return pc, sdp, nil
}

func answer(pc *webrtc.PeerConnection, offer string, gather bool) (string, error) {
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", err
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", err
	}
	if gather {
		return Gathered(pc, answer)
	}
	return answer.SDP, pc.SetLocalDescription(answer)
}

// Gathered sets sd as pc's local description and returns it once every
// local candidate is in it (no trickle needed on loopback).
func Gathered(pc *webrtc.PeerConnection, sd webrtc.SessionDescription) (string, error) {
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(sd); err != nil {
		return "", err
	}
	<-done
	return pc.LocalDescription().SDP, nil
}
