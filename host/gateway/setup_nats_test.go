package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/added060/palisade/host/bus"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
)

// TestSetupNATSRetriesOnlyPlacementRefusals asks a two-server cluster for three replicas: the
// cluster refuses the placement ("no suitable peers"), as a freshly started cluster does while
// its meta leader has not heard from every server. SetupNATS keeps asking until its time runs
// out and then names the refusal. A refusal of another kind (replicas on a server that is not
// clustered) is returned at once. That the retry ends in success once the cluster can place
// the stream is shown by TestReplicatedBusFailover's set-up on a fresh three-server cluster.
func TestSetupNATSRetriesOnlyPlacementRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a two-server NATS cluster")
	}
	cl := testenv.StartCluster(t, 2)
	id, err := bus.LoadIdentity(cl.DataDir(), bus.RoleAdmin, "")
	if err != nil {
		t.Fatal(err)
	}
	adm, err := bus.Dial(cl.URLs(), id, nats.Name("setup-test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adm.Close)

	const limit = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	start := time.Now()
	err = gateway.SetupNATS(ctx, adm, gateway.NATSSetup{Replicas: 3})
	took := time.Since(start)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "no suitable peers") || !strings.Contains(err.Error(), "refused the placement until") {
		t.Fatalf("R3 on two servers: %v, want the placement refusal after retries", err)
	}
	if took < limit-100*time.Millisecond {
		t.Errorf("R3 on two servers returned after %v, before its %v ran out: it did not retry", took, limit)
	}

	single := testenv.StartNATS(t)
	nc, err := nats.Connect(single.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel = context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start = time.Now()
	err = gateway.SetupNATS(ctx, nc, gateway.NATSSetup{Replicas: 3})
	if err == nil || strings.Contains(err.Error(), "refused the placement until") {
		t.Fatalf("R3 on a server that is not clustered: %v, want its own error at once", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("R3 on a server that is not clustered took %v: a refusal that is not a placement one was retried", took)
	}
}
