// Package devplane installs burstpool onto a running local control plane the
// way users install it: packages pushed to an OCI registry and installed
// through Crossplane's package manager. Only the runtime of the function and
// the provider differs: they run as local processes, so core is started with
// the External package runtime and each active FunctionRevision is pointed at
// the local function's endpoint.
package devplane

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the packages burstpool installs.
const (
	FunctionName      = "function-pool-compose"
	ProviderName      = "provider-burstpool"
	ConfigurationName = "burstpool"
	CrossplaneNS      = "crossplane-system"
)

// Packages are the package references to install.
type Packages struct {
	Configuration, Function, Provider string
}

// InstallPackages creates the Function, Provider and Configuration package
// objects. The Configuration skips dependency resolution: its dependencies
// are installed here from the same registry under the names the Composition
// uses.
func InstallPackages(ctx context.Context, c client.Client, p Packages) error {
	objs := []*unstructured.Unstructured{
		pkg("Function", FunctionName, p.Function, false),
		pkg("Provider", ProviderName, p.Provider, false),
		pkg("Configuration", ConfigurationName, p.Configuration, true),
	}
	for _, o := range objs {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("burstpool-devplane"), client.ForceOwnership); err != nil {
			return fmt.Errorf("cannot install %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func pkg(kind, name, ref string, skipDeps bool) *unstructured.Unstructured {
	spec := map[string]any{"package": ref, "packagePullPolicy": "Always"}
	if skipDeps {
		spec["skipDependencyResolution"] = true
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// ActiveRevision waits until the package kind/name has an active revision
// and returns its name.
func ActiveRevision(ctx context.Context, c client.Client, kind, name string, timeout time.Duration) (string, error) {
	var rev string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("pkg.crossplane.io/v1")
		l.SetKind(kind + "RevisionList")
		if err := c.List(ctx, l, client.MatchingLabels{"pkg.crossplane.io/package": name}); err != nil {
			return false, nil //nolint:nilerr // the revision CRDs may not be served yet; poll again
		}
		for _, r := range l.Items {
			if s, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState"); s == "Active" {
				rev = r.GetName()
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("%s %s has no active revision after %s: %w", kind, name, timeout, err)
	}
	return rev, nil
}

// ConnectFunction points the active revision of the function at endpoint (a
// gRPC target such as dns:///127.0.0.1:9443) and marks its runtime healthy,
// which is what the Deployment runtime would do for a function in a pod.
func ConnectFunction(ctx context.Context, c client.Client, revision, endpoint string) error {
	r := &unstructured.Unstructured{}
	r.SetAPIVersion("pkg.crossplane.io/v1")
	r.SetKind("FunctionRevision")
	if err := c.Get(ctx, types.NamespacedName{Name: revision}, r); err != nil {
		return fmt.Errorf("cannot get FunctionRevision %s: %w", revision, err)
	}
	conds, _, _ := unstructured.NestedSlice(r.Object, "status", "conditions")
	kept := []any{}
	for _, cd := range conds {
		if m, ok := cd.(map[string]any); ok && m["type"] == "RuntimeHealthy" {
			continue
		}
		kept = append(kept, cd)
	}
	kept = append(kept, map[string]any{
		"type":               "RuntimeHealthy",
		"status":             "True",
		"reason":             "HealthyPackageRevision",
		"message":            "served by a local process at " + endpoint,
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
	})
	if err := unstructured.SetNestedSlice(r.Object, kept, "status", "conditions"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(r.Object, endpoint, "status", "endpoint"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(r.Object, FunctionName+"-tls-server", "status", "tlsServerSecretName"); err != nil {
		return err
	}
	if err := c.Status().Update(ctx, r); err != nil {
		return fmt.Errorf("cannot point FunctionRevision %s at %s: %w", revision, endpoint, err)
	}
	return nil
}

// FunctionCerts writes a serving certificate for a local function, signed
// by the CA that Crossplane core created, into dir.
func FunctionCerts(ctx context.Context, c client.Client, dir string) error {
	s := &corev1.Secret{}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: CrossplaneNS, Name: "crossplane-root-ca"}, s); err != nil {
			return false, nil //nolint:nilerr // core creates the CA at start; poll again
		}
		return len(s.Data["tls.crt"]) > 0 && len(s.Data["tls.key"]) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("crossplane-system/crossplane-root-ca has no CA after 60s (is Crossplane core running?): %w", err)
	}
	return IssueServerCert(s.Data["tls.crt"], s.Data["tls.key"], dir, FunctionName, FunctionName+"."+CrossplaneNS)
}
