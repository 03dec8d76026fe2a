package testenv

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestStartNATSJetStream(t *testing.T) {
	s := StartNATS(t)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatalf("add stream: %v", err)
	}
	if _, err := js.Publish("t.x", []byte("hi")); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func TestRestartableNATSKeepsPortAndStore(t *testing.T) {
	r := StartRestartableNATS(t)
	nc, err := nats.Connect(r.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: nats.FileStorage}); err != nil {
		t.Fatalf("add stream: %v", err)
	}
	if _, err := js.Publish("t.x", []byte("before")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	r.Stop()
	if r.Server() != nil {
		t.Fatal("Server() after Stop is not nil")
	}
	r.Start()
	deadline := time.Now().Add(30 * time.Second)
	for !nc.IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("client did not reconnect to restarted server")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var info *nats.StreamInfo
	for {
		info, err = js.StreamInfo("T")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream info after restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("stream has %d messages after restart, want 1", info.State.Msgs)
	}
}
