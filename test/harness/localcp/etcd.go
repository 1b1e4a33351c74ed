package localcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// CompactEtcd compacts the control plane's etcd up to its current
// revision, as kube-apiserver's compactor does every five minutes
// (--etcd-compaction-interval), and returns that revision. Watches that
// resume from an older resource version, once they are served from etcd
// again (after an API server restart, or when they fall out of its watch
// cache), end with 410 Gone and their clients list again. It talks to
// etcd's gRPC gateway, which etcd serves on its client URL by default.
func (c *Cluster) CompactEtcd(ctx context.Context) (int64, error) {
	base := fmt.Sprintf("http://127.0.0.1:%d/v3/kv/", c.Ports["etcd"])
	// A range of one key answers with the store's current revision in its
	// header; the key need not exist.
	var rng struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := postJSON(ctx, base+"range", map[string]any{"key": "AA=="}, &rng); err != nil {
		return 0, fmt.Errorf("cannot read etcd's revision: %w", err)
	}
	rev, err := strconv.ParseInt(rng.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd's revision %q: %w", rng.Header.Revision, err)
	}
	if err := postJSON(ctx, base+"compaction", map[string]any{"revision": rev, "physical": true}, nil); err != nil {
		return 0, fmt.Errorf("cannot compact etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

// postJSON posts in as JSON to url and decodes the answer into out (when
// not nil); an answer other than 200 is an error carrying its body.
func postJSON(ctx context.Context, url string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer rsp.Body.Close() //nolint:errcheck // read below
	body, err := io.ReadAll(io.LimitReader(rsp.Body, 1<<20))
	if err != nil {
		return err
	}
	if rsp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, rsp.Status, body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}
