package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// A namespaced composite resource definition with one version.
const xrd = `
apiVersion: apiextensions.crossplane.io/v2
kind: CompositeResourceDefinition
metadata:
  name: xwidgets.e2e.burstpool.io
spec:
  group: e2e.burstpool.io
  names:
    kind: XWidget
    plural: xwidgets
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    referenceable: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
`

// TestCrossplaneCore proves Crossplane core runs out of cluster on the local
// control plane: its APIs are served, its definition controller turns an
// XRD into an established CRD for the composite resource, and a forwarded
// host port (where a function or a registry will listen) is reachable from
// inside core's network namespace.
func TestCrossplaneCore(t *testing.T) {
	t.Parallel()
	// Stands in for a function or a registry on the host.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "host")
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	hostPort := ln.Addr().(*net.TCPAddr).Port

	cp := controlPlane(t, func(c *localcp.Config) {
		c.SkipKarpenter = true
		c.ForwardPorts = []int{hostPort}
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	inside := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return cp.DialInside(ctx, "crossplane", network, addr)
	}}}
	rsp, err := inside.Get(fmt.Sprintf("http://127.0.0.1:%d/", hostPort))
	if err != nil {
		t.Fatalf("forwarded host port %d is not reachable from Crossplane's network namespace: %v", hostPort, err)
	}
	body, _ := io.ReadAll(rsp.Body)
	_ = rsp.Body.Close()
	if string(body) != "host" {
		t.Errorf("forwarded port %d answered %q from inside, want %q", hostPort, body, "host")
	}
	if _, err := cp.DialInside(t.Context(), "crossplane", "tcp", fmt.Sprintf("127.0.0.1:%d", cp.Ports["kwok"])); err == nil {
		t.Errorf("kwok's port %d is reachable from Crossplane's network namespace; only forwarded ports should be", cp.Ports["kwok"])
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, gv := range []string{"apiextensions.crossplane.io/v1", "apiextensions.crossplane.io/v2", "pkg.crossplane.io/v1", "ops.crossplane.io/v1alpha1"} {
		rl, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("Crossplane API %s is not served: %v", gv, err)
		}
		if len(rl.APIResources) == 0 {
			t.Errorf("Crossplane API %s serves no resources", gv)
		}
	}

	start := time.Now()
	if err := localcp.Apply(t.Context(), cp.Config, []byte(xrd)); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitReconcile, "XRD xwidgets.e2e.burstpool.io is Established", func(ctx context.Context) (bool, error) {
		x := &unstructured.Unstructured{}
		x.SetAPIVersion("apiextensions.crossplane.io/v2")
		x.SetKind("CompositeResourceDefinition")
		if err := c.Get(ctx, types.NamespacedName{Name: "xwidgets.e2e.burstpool.io"}, x); err != nil {
			return false, err
		}
		return condition(x, "Established") == "True", nil
	})
	if err := localcp.WaitEstablished(t.Context(), cp.Config, waitEstablished, "xwidgets.e2e.burstpool.io"); err != nil {
		t.Fatal(err)
	}
	t.Logf("XRD -> Established with its CRD: %s", time.Since(start).Round(10*time.Millisecond))
	testUsageEnforced(t, t.Context(), c) // usage_test.go
	logUsage(t, cp)
}
