package infer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// KServe v2 (Open Inference Protocol) HTTP/JSON wire types, as served by
// KServe, Triton and Seldon MLServer at POST /v2/models/{name}/infer.
// Tensor data is flattened row-major.

// V2Tensor is one input or output tensor of a v2 inference request or response.
type V2Tensor struct {
	Name     string          `json:"name"`
	Shape    []int64         `json:"shape"`
	Datatype string          `json:"datatype"`
	Data     json.RawMessage `json:"data"`
}

// V2RequestOutput asks for one output by name.
type V2RequestOutput struct {
	Name string `json:"name"`
}

// V2Request is the body of a v2 infer call.
type V2Request struct {
	ID      string            `json:"id,omitempty"`
	Inputs  []V2Tensor        `json:"inputs"`
	Outputs []V2RequestOutput `json:"outputs,omitempty"`
}

// V2Response is the body a v2 server answers with.
type V2Response struct {
	ModelName    string     `json:"model_name"`
	ModelVersion string     `json:"model_version,omitempty"`
	ID           string     `json:"id,omitempty"`
	Outputs      []V2Tensor `json:"outputs"`
}

// V2Error is the body of a failed v2 call.
type V2Error struct {
	Error string `json:"error"`
}

type kserveBackend struct {
	endpoint string
	output   string
	client   *http.Client
}

func newKServe(s ModelSpec, client *http.Client) (*kserveBackend, error) {
	u, err := url.Parse(s.KServe.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model %q: kserve.url %q is not an http(s) URL", s.Name, s.KServe.URL)
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &kserveBackend{
		endpoint: strings.TrimRight(s.KServe.URL, "/") + "/v2/models/" + url.PathEscape(s.KServe.Model) + "/infer",
		output:   s.Outputs[0],
		client:   client,
	}, nil
}

func (k *kserveBackend) name() string { return ProviderKServe }
func (k *kserveBackend) close() error { return nil }

func (k *kserveBackend) run(ctx context.Context, inputs []Tensor, n int) ([]float32, error) {
	req := V2Request{Outputs: []V2RequestOutput{{Name: k.output}}}
	for _, t := range inputs {
		v := V2Tensor{Name: t.Name, Shape: t.Shape}
		var err error
		if t.Float32 != nil {
			v.Datatype = "FP32"
			v.Data, err = json.Marshal(t.Float32)
		} else {
			v.Datatype = "INT64"
			v.Data, err = json.Marshal(t.Int64)
		}
		if err != nil {
			return nil, fmt.Errorf("kserve: encode input %q: %w", t.Name, err)
		}
		req.Inputs = append(req.Inputs, v)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("kserve: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, k.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("kserve: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := k.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("kserve: post %s: %w", k.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("kserve: read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e V2Error
		_ = json.Unmarshal(raw, &e)
		return nil, fmt.Errorf("kserve: %s: status %d: %s", k.endpoint, resp.StatusCode, e.Error)
	}
	return decodeV2Output(raw, k.output, n)
}

// decodeV2Output returns the named FP32 [n, classes] output of a v2 response
// body, checking shape against data.
func decodeV2Output(raw []byte, output string, n int) ([]float32, error) {
	if n < 1 {
		return nil, fmt.Errorf("kserve: %d texts", n)
	}
	var out V2Response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("kserve: decode response: %w", err)
	}
	for _, o := range out.Outputs {
		if o.Name != output {
			continue
		}
		if o.Datatype != "FP32" || len(o.Shape) != 2 || o.Shape[0] != int64(n) || o.Shape[1] < 1 || o.Shape[1] > 1<<20 {
			return nil, fmt.Errorf("kserve: output %q is %s%v, want FP32[%d, classes]", o.Name, o.Datatype, o.Shape, n)
		}
		var data []float32
		if err := json.Unmarshal(o.Data, &data); err != nil {
			return nil, fmt.Errorf("kserve: output %q data: %w", o.Name, err)
		}
		if int64(len(data)) != o.Shape[0]*o.Shape[1] {
			return nil, fmt.Errorf("kserve: output %q has %d values for shape %v", o.Name, len(data), o.Shape)
		}
		return data, nil
	}
	return nil, fmt.Errorf("kserve: response has no output %q", output)
}
