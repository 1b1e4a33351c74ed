// Package devplane is test harness, for the end-to-end suite and the demo: it
// installs burstpool onto a running local control plane the way users install
// it: packages pushed to an OCI registry and installed through Crossplane's
// package manager. Only the runtime of the function and the provider differs:
// they run as local processes, so core is started with the External package
// runtime and each active FunctionRevision is pointed at the local function's
// endpoint.
package devplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the packages burstpool installs. The Function and the Provider
// carry the names Crossplane gives the Configuration's dependencies (the
// package's repository path as a DNS label, ghcr.io/burstpool/X becoming
// burstpool-X), which the Composition's functionRef names: installed by
// hand or as dependencies, they are the same objects.
const (
	FunctionName      = "burstpool-function-pool-compose"
	ProviderName      = "burstpool-provider-burstpool"
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
		withRuntimeConfig(pkg("Provider", ProviderName, p.Provider, false), ProviderRuntimeConfig),
		pkg("Configuration", ConfigurationName, p.Configuration, true),
	}
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("burstpool-devplane"), client.ForceOwnership); err != nil {
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

// withRuntimeConfig makes a Provider run with the DeploymentRuntimeConfig
// name, as docs/install.md installs it.
func withRuntimeConfig(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	u.Object["spec"].(map[string]any)["runtimeConfigRef"] = map[string]any{"name": name}
	return u
}

// ActiveRevision waits until the package kind/name has an active revision
// and returns its name.
func ActiveRevision(ctx context.Context, c client.Client, kind, name string, timeout time.Duration) (string, error) {
	var rev string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		rev, err = activeRevision(ctx, c, kind, name)
		return err == nil && rev != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("%s %s has no active revision after %s: %w", kind, name, timeout, err)
	}
	return rev, nil
}

// activeRevision is the name of the package kind/name's active revision,
// or "" while it has none.
func activeRevision(ctx context.Context, c client.Client, kind, name string) (string, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("pkg.crossplane.io/v1")
	l.SetKind(kind + "RevisionList")
	if err := c.List(ctx, l, client.MatchingLabels{"pkg.crossplane.io/package": name}); err != nil {
		return "", err
	}
	for _, r := range l.Items {
		if s, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState"); s == "Active" {
			return r.GetName(), nil
		}
	}
	return "", nil
}

// MarkRuntime records on a package revision (kind FunctionRevision or
// ProviderRevision) what the Deployment runtime would: the serving
// certificate's Secret, for functions the gRPC endpoint (such as
// 127.0.0.1:9443), and a healthy runtime.
// Crossplane's package manager updates the revision at the same time, so a
// write that lost the race is retried on the newest revision.
func MarkRuntime(ctx context.Context, c client.Client, kind, revision, endpoint, tlsSecret string) error {
	// Crossplane's revision controller writes the same status: a conflict
	// means it wrote first, so read again and retry.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r := &unstructured.Unstructured{}
		r.SetAPIVersion("pkg.crossplane.io/v1")
		r.SetKind(kind)
		if err := c.Get(ctx, types.NamespacedName{Name: revision}, r); err != nil {
			return fmt.Errorf("cannot get %s %s: %w", kind, revision, err)
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
			"message":            "runs as a local process",
			"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
		})
		if err := unstructured.SetNestedSlice(r.Object, kept, "status", "conditions"); err != nil {
			return err
		}
		if endpoint != "" {
			if err := unstructured.SetNestedField(r.Object, endpoint, "status", "endpoint"); err != nil {
				return err
			}
		}
		if err := unstructured.SetNestedField(r.Object, tlsSecret, "status", "tlsServerSecretName"); err != nil {
			return err
		}
		return c.Status().Update(ctx, r)
	})
	if err != nil {
		return fmt.Errorf("cannot record the local runtime on %s %s: %w", kind, revision, err)
	}
	return nil
}

// RuntimeCerts writes a serving certificate for the local runtime of
// package name, signed by the CA that Crossplane core created, into dir, and
// stores it in the Secret name-tls-server in crossplane-system, where core
// looks for a revision's serving certificate. It returns the Secret's name.
func RuntimeCerts(ctx context.Context, c client.Client, name, dir string) (string, error) {
	ca := &corev1.Secret{}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, coreCA, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: CrossplaneNS, Name: "crossplane-root-ca"}, ca); err != nil {
			return false, nil //nolint:nilerr // core creates the CA at start; poll again
		}
		return len(ca.Data["tls.crt"]) > 0 && len(ca.Data["tls.key"]) > 0, nil
	})
	if err != nil {
		return "", fmt.Errorf("crossplane-system/crossplane-root-ca has no CA after %s (is Crossplane core running?): %w", coreCA, err)
	}
	if err := IssueServerCert(ca.Data["tls.crt"], ca.Data["tls.key"], dir, name, name+"."+CrossplaneNS); err != nil {
		return "", err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: CrossplaneNS, Name: name + "-tls-server"}, Data: map[string][]byte{}}
	for _, f := range []string{"tls.crt", "tls.key", "ca.crt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		sec.Data[f] = b
	}
	if err := c.Create(ctx, sec); err != nil && !kerrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("cannot store the serving certificate of %s: %w", name, err)
	}
	if kerrors.IsAlreadyExists(err) {
		if err := c.Update(ctx, sec); err != nil {
			return "", err
		}
	}
	return sec.Name, nil
}
