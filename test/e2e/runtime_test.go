package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/devplane"
)

// packageDeployment returns the Deployment Crossplane's package runtime
// made for the active revision of the package kind/name (Function or
// Provider): the one its revision controls.
func packageDeployment(ctx context.Context, s *devplane.Stack, kind, name string) (*appsv1.Deployment, error) {
	rev, err := devplane.ActiveRevision(ctx, s.Client, kind, name, waitQuick)
	if err != nil {
		return nil, err
	}
	l := &appsv1.DeploymentList{}
	if err := s.Client.List(ctx, l, client.InNamespace(devplane.CrossplaneNS)); err != nil {
		return nil, err
	}
	for i, d := range l.Items {
		for _, o := range d.OwnerReferences {
			if o.Kind == kind+"Revision" && o.Name == rev {
				return &l.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no Deployment of %sRevision %s yet", kind, rev)
}

// TestPackageRuntime installs the released Configuration alone on a
// control plane whose Crossplane runs packages as Deployments (the
// simulated nodes do not run them), with deploy/provider applied as
// docs/install.md applies it and a DeploymentRuntimeConfig that adds
// `args: [--debug]` to the function, and checks what a real cluster would
// get: the provider's pod runs under the shipped service account, which
// Crossplane neither creates nor replaces with a revision-named one, and
// which may do what the provider does, and examples/monitoring's PodMonitor
// selects its pods; the function's pod runs with only
// --debug as its arguments, and Crossplane reaches it on the gRPC port
// (9443, Crossplane's runtime_function.go) where the binary listens by
// default (TestCLIListensInPod in functions/pool-compose).
func TestPackageRuntime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := stackConfig(t)
	cfg.Tag, cfg.Release, cfg.DeploymentRuntime = "v0.1.0", true, true
	s, err := devplane.Prepare(ctx, cfg)
	if err != nil {
		t.Fatalf("cannot prepare the control plane and packages: %v", err)
	}
	downWithLogs(t, s)
	prefix := s.Registry() + "/burstpool"

	// deploy/provider as shipped, its ImageConfig matching the released
	// registry (Crossplane matches the image a package resolves to).
	for _, f := range []string{"runtimeconfig.yaml", "rbac.yaml"} {
		b, err := os.ReadFile(filepath.Join(cfg.Root, "deploy", "provider", f)) //nolint:gosec // a file of the checkout
		if err != nil {
			t.Fatal(err)
		}
		mustApply(t, ctx, s.Cluster.Config, strings.ReplaceAll(string(b), "ghcr.io/burstpool/", prefix+"/"))
	}
	// Crossplane's own service account, which its Helm chart creates: the
	// package runtime copies its image pull secrets to package Deployments.
	mustApply(t, ctx, s.Cluster.Config, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: crossplane
  namespace: %s
---
apiVersion: pkg.crossplane.io/v1beta1
kind: DeploymentRuntimeConfig
metadata:
  name: function-debug
spec:
  deploymentTemplate:
    spec:
      selector: {}
      template:
        spec:
          containers:
            - name: package-runtime
              args: [--debug]
---
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: function-debug
spec:
  matchImages:
    - prefix: %s/function-pool-compose
  runtime:
    configRef:
      name: function-debug
---
apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: burstpool
spec:
  package: %s/burstpool:%s
`, devplane.CrossplaneNS, prefix, prefix, cfg.Tag))

	var fn, prov *appsv1.Deployment
	took := eventually(t, waitDisruption, "Crossplane creates the Function's and the Provider's Deployments", func(ctx context.Context) (bool, error) {
		var err error
		if fn, err = packageDeployment(ctx, s, "Function", devplane.FunctionName); err != nil {
			return false, err
		}
		prov, err = packageDeployment(ctx, s, "Provider", devplane.ProviderName)
		return err == nil, err
	})
	t.Logf("package Deployments created in %s", took.Round(100*time.Millisecond))

	type runtime struct {
		ServiceAccount string
		Image          string
		Args           []string
		Ports          map[string]int32
	}
	summarize := func(d *appsv1.Deployment) runtime {
		c := d.Spec.Template.Spec.Containers[0]
		r := runtime{ServiceAccount: d.Spec.Template.Spec.ServiceAccountName, Image: c.Image, Args: c.Args, Ports: map[string]int32{}}
		for _, p := range c.Ports {
			r.Ports[p.Name] = p.ContainerPort
		}
		return r
	}
	// Function: no service account of ours; the runtime config's args; the
	// gRPC and metrics ports the binary listens on by default (:9443,
	// :8080).
	wantFn := runtime{ServiceAccount: summarize(fn).ServiceAccount, Image: prefix + "/function-pool-compose:" + cfg.Tag, Args: []string{"--debug"}, Ports: map[string]int32{"grpc": 9443, "metrics": 8080}}
	if diff := cmp.Diff(wantFn, summarize(fn)); diff != "" {
		t.Errorf("the function's Deployment: -want, +got:\n%s", diff)
	}
	// Provider: the shipped account; no args; the metrics port where the
	// binary serves by default, and the webhook port Crossplane gives every
	// provider (burstpool's serves no webhook).
	wantProv := runtime{ServiceAccount: devplane.ProviderServiceAccount, Image: prefix + "/provider-burstpool:" + cfg.Tag, Ports: map[string]int32{"metrics": 8080, "webhook": 9443}}
	if diff := cmp.Diff(wantProv, summarize(prov)); diff != "" {
		t.Errorf("the provider's Deployment: -want, +got:\n%s", diff)
	}

	// examples/monitoring's PodMonitor selects the provider's pods.
	b, err := os.ReadFile(filepath.Join(cfg.Root, "examples", "monitoring", "podmonitor.yaml")) //nolint:gosec // a file of the checkout
	if err != nil {
		t.Fatal(err)
	}
	var pm struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pm); err != nil || len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Fatalf("cannot read the PodMonitor's selector (%v)", err)
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if got := prov.Spec.Template.Labels[k]; got != v {
			t.Errorf("the PodMonitor selects pods labelled %s=%s; the provider's pods carry %q", k, v, got)
		}
	}

	// Crossplane made no account of its own for the provider: the one
	// named after the revision would hold none of the shipped roles.
	revSA := &corev1.ServiceAccount{}
	err = s.Client.Get(ctx, client.ObjectKey{Namespace: devplane.CrossplaneNS, Name: prov.Name}, revSA)
	if err == nil {
		t.Errorf("Crossplane created service account %s for the provider, beside the shipped %s", prov.Name, devplane.ProviderServiceAccount)
	}

	// The pod's account may do what the provider does (a sample per role;
	// deploy's TestProviderAccountAccess asks for every permission).
	user := "system:serviceaccount:" + devplane.CrossplaneNS + ":" + summarize(prov).ServiceAccount
	for _, a := range []authorizationv1.ResourceAttributes{
		{Resource: "pods", Verb: "watch"},
		{Resource: "nodes", Verb: "list"},
		{Group: "capacity.e6data.io", Resource: "poolcapacities", Subresource: "status", Verb: "update"},
		{Namespace: devplane.CrossplaneNS, Group: "coordination.k8s.io", Resource: "leases", Verb: "update"},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &a}}
		if err := s.Client.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		if !sar.Status.Allowed {
			t.Errorf("%s may not %s %s/%s/%s in %q: the provider needs it", user, a.Verb, a.Group, a.Resource, a.Subresource, a.Namespace)
		}
	}
}
