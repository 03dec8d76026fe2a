// Command otlprecv is a small OTLP trace receiver for tests: it accepts OTLP/HTTP
// (POST /v1/traces, protobuf, optionally gzip) or, with -grpc, OTLP/gRPC (TraceService/Export),
// and writes every span it receives as one JSON line to the file named by -out. It prints its
// URL on stdout once it listens.
//
//	go build -o otlprecv ./host/internal/otlprecv && ./otlprecv -addr 127.0.0.1:0 -out spans.jsonl
package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span as written to -out.
type Span struct {
	Service      string            `json:"service"`
	TraceID      string            `json:"trace_id"`
	SpanID       string            `json:"span_id"`
	ParentSpanID string            `json:"parent_span_id,omitempty"`
	Name         string            `json:"name"`
	Kind         int32             `json:"kind"`
	Attributes   map[string]string `json:"attributes,omitempty"`
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("otlprecv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	out := fs.String("out", "", "file the spans are appended to, one JSON line each (required)")
	useGRPC := fs.Bool("grpc", false, "serve OTLP/gRPC instead of OTLP/HTTP")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(stderr, "otlprecv: -out is required")
		return 2
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(stderr, "otlprecv:", err)
		return 1
	}
	defer f.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "otlprecv:", err)
		return 1
	}
	sink := &writer{enc: json.NewEncoder(f)}
	if *useGRPC {
		s := grpc.NewServer()
		coltrace.RegisterTraceServiceServer(s, &traceService{sink: sink})
		fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
		if err := s.Serve(ln); err != nil {
			fmt.Fprintln(stderr, "otlprecv:", err)
			return 1
		}
		return 0
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(io.LimitReader(body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := sink.write(&req); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	})
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(stderr, "otlprecv:", err)
		return 1
	}
	return 0
}

// writer appends spans as JSON lines, one export at a time.
type writer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (w *writer) write(req *coltrace.ExportTraceServiceRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				if err := w.enc.Encode(Span{Service: service, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Kind: int32(s.Kind), Attributes: attrs(s.Attributes)}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// traceService is OTLP/gRPC's TraceService.
type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	sink *writer
}

func (t *traceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	if err := t.sink.write(req); err != nil {
		return nil, err
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// attrs flattens OTLP attributes to strings (numbers and booleans in their JSON form).
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = fmt.Sprint(v.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = fmt.Sprint(v.DoubleValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = fmt.Sprint(v.BoolValue)
		}
	}
	return m
}
