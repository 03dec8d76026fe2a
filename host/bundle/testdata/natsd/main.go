// Command natsd runs a standalone nats-server with JetStream (through host/bus) for the fleet
// test: `natsd -port N -store DIR`. It stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/added060/palisade/host/bus"
)

func main() {
	port := flag.Int("port", 4222, "client port")
	store := flag.String("store", "", "data directory (JetStream under DIR/nats)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := bus.Start(ctx, bus.Options{DataDir: *store, Host: "127.0.0.1", Port: *port})
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsd:", err)
		os.Exit(1)
	}
	fmt.Println("natsd ready", b.ClientURL())
	<-ctx.Done()
	b.Close()
}
