package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// awsMirror is the registry path the burstpool-aws Configuration's
// provider-aws dependencies are published under (package/aws), which
// TestLifecycle/Uninstall mirrors.
const awsMirror = "xpkg.crossplane.io/crossplane-contrib"

// awsStandIns are the provider-aws packages burstpool-aws depends on, at
// the first version its range allows, each with the CRDs of the node IAM
// objects pools compose (as vendored for the schema checks).
var awsStandIns = []struct {
	name, version, api string
	crds               []string
}{
	{"provider-aws-iam", "v1.23.0", iamAPI, []string{"iam.aws.upbound.io_roles.yaml", "iam.aws.upbound.io_rolepolicyattachments.yaml"}},
	{"provider-aws-eks", "v1.23.0", eksAPI, []string{"eks.aws.upbound.io_accessentries.yaml"}},
}

// awsManaged are the managed resource kinds of awsStandIns that pools
// compose, by the stand-in that serves them.
var awsManaged = map[string][]string{
	"provider-aws-iam": {"Role", "RolePolicyAttachment"},
	"provider-aws-eks": {"AccessEntry"},
}

// uninstallByDoc removes an installation of version exactly as
// docs/install.md's Uninstalling section says, with burstpool-aws. The
// installation is the doc's Steps (installByDoc), upgraded or not, then
// burstpool-aws of version as its AWS section installs it, from the mirror of ghcr.io/burstpool, with its provider-aws
// dependencies from a mirror of xpkg.crossplane.io: stand-ins of
// provider-aws-iam and provider-aws-eks that serve the node IAM kinds and
// whose controllers the test plays (awsProviders), and node IAM on in the
// settings, so that the reference's pools compose their IAM roles. With
// executors on burst-pool, the test does what the section asks of the
// team first (the executors scaled to zero), runs its sh blocks in order,
// and then finds nothing of burstpool in the cluster (leftovers): no Pool,
// XPool, NodeClaim, pool node, PoolCapacity, NodePool, NodeClass, warmup
// DaemonSet, placeholder, admission policy or binding, IAM managed
// resource or usage, package, revision, lock entry, CRD (but e6data's
// QueryService CRD, which the section keeps), role, runtime config,
// ImageConfig, Lease or setting; the same sweep, run before, finds each
// kind of them.
func uninstallByDoc(t *testing.T, d *docPlane, version string) {
	ctx := t.Context()
	s, c := d.Stack, d.Client
	const pool = "burst-pool"

	// burstpool-aws, as the doc's AWS section installs it, from mirrors.
	for _, p := range awsStandIns {
		var crds []string
		for _, f := range p.crds {
			crds = append(crds, filepath.Join(d.root, schemacheck.UpstreamDir, f))
		}
		if _, err := s.PublishProvider(ctx, p.name, "crossplane-contrib/"+p.name, p.version, crds...); err != nil {
			t.Fatal(err)
		}
	}
	d.mirror(t, ctx, "xpkg-mirror", awsMirror, s.Registry()+"/crossplane-contrib")
	aws := newAWSProviders(t, s.Cluster.Config)
	go aws.run(ctx)
	defer aws.stop()
	mustApply(t, ctx, s.Cluster.Config, fmt.Sprintf(`apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: burstpool-aws
spec:
  package: %s/burstpool-aws:%s
`, docRegistry, version))
	took := eventually(t, waitSlow, "burstpool-aws and the provider-aws providers it installs Healthy", func(ctx context.Context) (bool, error) {
		pkgs := map[string]string{"burstpool-aws": "Configuration"}
		for _, p := range awsStandIns {
			pkgs["crossplane-contrib-"+p.name] = "Provider"
		}
		for name, kind := range pkgs {
			u, err := s.Get(ctx, gvk("pkg.crossplane.io/v1", kind), "", name)
			if err != nil {
				return false, err
			}
			if st, _, msg := conditionFields(u, "Healthy"); st != "True" {
				return false, fmt.Errorf("%s %s is Healthy=%s: %s", kind, name, st, msg)
			}
		}
		return true, nil
	})
	t.Logf("burstpool-aws installed with its provider-aws dependencies in %s", took.Round(100*time.Millisecond))
	patchEnv(t, ctx, s, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"provisioning":{"region":"us-east-1"},"aws":{"nodeIAM":{"enabled":true}}}}`)))
	took = eventually(t, waitSlow, "the pools compose their node IAM, Ready", func(ctx context.Context) (bool, error) {
		for _, p := range upgradePools {
			u, err := claim(ctx, s, p)
			if err != nil {
				return false, err
			}
			if st, _, msg := conditionFields(u, "NodeIAMReady"); st != "True" {
				return false, fmt.Errorf("pool %s is NodeIAMReady=%s: %s", p, st, msg)
			}
		}
		return true, nil
	})
	t.Logf("node IAM composed and Ready in %s", took.Round(100*time.Millisecond))

	// Executors run on burst-pool: those an upgrade left running, else
	// one of each QueryService's.
	executors := 0
	for _, x := range upgradeExecutors {
		cpu, mem := devplane.ExecutorResources(mustQS(t, ctx, c, x.ns, x.qs))
		if err := c.Create(ctx, devplane.ExecutorDeployment(x.ns, x.qs, "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218", 1, cpu, mem, executorScheduling(t, c, poolNS, pool))); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: devplane.ExecutorDeploymentName(x.qs)}, dep); err != nil {
			t.Fatal(err)
		}
		executors += int(ptr.Deref(dep.Spec.Replicas, 1))
	}
	waitUpgradeExecutors(t, c, pool, executors, "executors Running on "+pool)
	eventually(t, waitStatus, "the claim counts them", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, pool)
		return err == nil && int(st.OccupiedExecutors) == executors, fmt.Errorf("occupied %d (%v)", st.OccupiedExecutors, err)
	})

	// What the sweep finds of burstpool while it is installed: each kind
	// the uninstallation must remove.
	before := leftovers(t, ctx, s)
	for _, kind := range []string{
		"Pool.e6data.io", "XPool.e6data.io", "PoolCapacity.capacity.e6data.io", "ProviderConfig.capacity.e6data.io",
		"NodeClaim.karpenter.sh", "Node", "NodePool.karpenter.sh", "KWOKNodeClass.karpenter.kwok.sh",
		"DaemonSet.apps", "Deployment.apps", "ServiceAccount", "Lease.coordination.k8s.io",
		"ValidatingAdmissionPolicy.admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io",
		"Role.iam.aws.upbound.io", "RolePolicyAttachment.iam.aws.upbound.io", "AccessEntry.eks.aws.upbound.io", "ClusterUsage.protection.crossplane.io",
		"Configuration.pkg.crossplane.io", "Function.pkg.crossplane.io", "Provider.pkg.crossplane.io",
		"ConfigurationRevision.pkg.crossplane.io", "FunctionRevision.pkg.crossplane.io", "ProviderRevision.pkg.crossplane.io",
		"DeploymentRuntimeConfig.pkg.crossplane.io", "ImageConfig.pkg.crossplane.io", "EnvironmentConfig.apiextensions.crossplane.io",
		"CustomResourceDefinition.apiextensions.k8s.io", "ClusterRole.rbac.authorization.k8s.io", "ClusterRoleBinding.rbac.authorization.k8s.io",
	} {
		if !slices.ContainsFunc(before, func(o string) bool { return strings.HasPrefix(o, kind+" ") }) {
			t.Errorf("the sweep finds no %s of burstpool while it is installed: it would not see one left behind", kind)
		}
	}
	t.Logf("installed: the sweep finds %d objects of burstpool", len(before))
	if t.Failed() {
		t.FailNow()
	}

	// What the team does first: the QueryServices' operator scales the
	// pool executors to zero.
	for _, x := range upgradeExecutors {
		scaleExecutors(t, ctx, c, x.ns, x.qs, 0)
	}
	// The local function and provider stop as their packages go, as their
	// Deployments would.
	stopFollowing := followRevisions(ctx, s)
	defer func() { _ = stopFollowing() }()
	start := time.Now()
	for i, b := range docBlocks(t, filepath.Join(d.root, installDoc), "Uninstalling") {
		d.run(t, fmt.Sprintf("%s, Uninstalling block %d", installDoc, i+1), b)
	}
	t.Logf("the doc's uninstallation ran in %s", time.Since(start).Round(100*time.Millisecond))
	aws.stop()
	eventually(t, waitQuick, "the local function and provider stopped with their packages", func(context.Context) (bool, error) {
		fn, prov := s.Revisions()
		return fn == "" && prov == "", fmt.Errorf("still running %q and %q", fn, prov)
	})
	if err := stopFollowing(); err != nil {
		t.Fatal(err)
	}
	// Kubernetes' garbage collector removes what the packages' revisions
	// and the XPool definition owned (the RBAC manager's roles, the
	// runtimes' Deployments and Secrets) just after them.
	took = eventually(t, waitReconcile, "nothing of burstpool is left", func(context.Context) (bool, error) {
		left := leftovers(t, ctx, s)
		return len(left) == 0, fmt.Errorf("left behind after the doc's uninstallation (%d):\n%s", len(left), strings.Join(left, "\n"))
	})
	t.Logf("nothing of burstpool left %s after the doc's uninstallation", took.Round(100*time.Millisecond))
	if n := list(ctx, c, karpenterAPI, "NodeClaimList"); len(n) > 0 {
		t.Errorf("%d NodeClaims left", len(n))
	}
	lock, err := s.Get(ctx, gvk("pkg.crossplane.io/v1beta1", "Lock"), "", "lock")
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages"); len(pkgs) > 0 {
		t.Errorf("the package lock still holds %v", pkgs)
	}
}

// leftovers lists, as "Kind.group namespace/name", every object in the cluster
// that is burstpool's or what it installed or composed: those of its APIs
// (e6data.io, capacity.e6data.io) and the provider-aws APIs, those named
// after burstpool, its APIs (but e6data's QueryService CRD) or the
// provider-aws APIs and packages, and those carrying a pool's label or
// composed for a composite. Left out are ignoredKinds, the executor
// Deployments of the QueryServices' operator (the team's, labelled for
// their pool), and the serving certificate the harness made for the
// function's local runtime (Crossplane's runtime would make it, owned by
// the function's revision).
func leftovers(t *testing.T, ctx context.Context, s *devplane.Stack) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(s.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(s.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatal(err)
	}
	fnName, _ := s.PackageNames()
	harness := map[string]bool{"Secret " + devplane.CrossplaneNS + "/" + fnName + "-tls-server": true}
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || ignoredKinds[r.Kind] {
				continue
			}
			objs, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if kerrors.IsNotFound(err) || kerrors.IsMethodNotSupported(err) {
				continue // a kind that went while the sweep ran
			}
			if err != nil {
				t.Fatalf("cannot list %s: %v", gv.WithResource(r.Name), err)
			}
			for _, o := range objs.Items {
				kind := r.Kind
				if gv.Group != "" {
					kind += "." + gv.Group
				}
				key := kind + " " + strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/")
				if burstpools(gv.Group, r.Kind, &o) && !harness[key] && !executorsOf(r.Kind, &o) {
					out = append(out, key)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// ignoredKinds are the kinds leftovers passes over: events, which expire;
// QueryServices, which are the team's; and APIServices, which the API
// server keeps for each group and version that CRDs serve (e6data.io's
// v1alpha1 stays with the QueryService CRD).
var ignoredKinds = map[string]bool{"Event": true, "QueryService": true, "APIService": true}

// burstpools reports whether o, of kind in API group, is burstpool's
// (see leftovers). In the plane of TestLifecycle only burstpool's
// Composition composes, so whatever Crossplane composed for a composite
// counts too.
func burstpools(group, kind string, o *unstructured.Unstructured) bool {
	n := o.GetName()
	if kind == "CustomResourceDefinition" && n == "queryservices.e6data.io" {
		return false
	}
	if strings.HasSuffix(group, "e6data.io") || strings.HasSuffix(group, "aws.upbound.io") {
		return true
	}
	for _, l := range []string{qsv1.LabelPool, "crossplane.io/composite"} {
		if _, ok := o.GetLabels()[l]; ok {
			return true
		}
	}
	for _, part := range []string{"burstpool", "e6data.io", "aws.upbound.io", "provider-aws"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// executorsOf reports whether o is a QueryService operator's executor
// Deployment, or one of its ReplicaSets, which carry their pool's label.
func executorsOf(kind string, o *unstructured.Unstructured) bool {
	switch kind {
	case "Deployment":
		return strings.HasSuffix(o.GetName(), devplane.ExecutorDeploymentName(""))
	case "ReplicaSet":
		return slices.ContainsFunc(o.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
			return r.Kind == "Deployment" && strings.HasSuffix(r.Name, devplane.ExecutorDeploymentName(""))
		})
	}
	return false
}

// awsProviders plays the controllers of the provider-aws stand-ins, as
// crossplane-runtime's managed reconciler does for the node IAM objects
// (crossplane-runtime v2.4.0 pkg/reconciler/managed Reconciler.Reconcile):
// it adds its finalizer to each managed resource and reports it Synced
// and Ready once "created", and removes the finalizer of one being
// deleted once "deleted" in the cloud. It acts for a stand-in only while
// that stand-in's Provider package is installed and not being deleted,
// as the provider's Deployment runs only then.
type awsProviders struct {
	c    client.Client
	once sync.Once
	done chan struct{}
	ran  chan struct{}
}

const managedFinalizer = "finalizer.managedresource.crossplane.io"

// newAWSProviders plays the stand-ins on the cluster cfg reaches. The
// API server's warnings (crossplane-runtime's finalizer name is not
// domain-qualified, as real providers' are not either) are not logged.
func newAWSProviders(t *testing.T, cfg *rest.Config) *awsProviders {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &awsProviders{c: c, done: make(chan struct{}), ran: make(chan struct{})}
}

// run acts every half second until stop.
func (a *awsProviders) run(ctx context.Context) {
	defer close(a.ran)
	ctx = context.WithoutCancel(ctx)
	for {
		select {
		case <-a.done:
			return
		case <-time.After(500 * time.Millisecond):
		}
		for _, p := range awsStandIns {
			pkg := &unstructured.Unstructured{}
			pkg.SetGroupVersionKind(gvk("pkg.crossplane.io/v1", "Provider"))
			if err := a.c.Get(ctx, client.ObjectKey{Name: "crossplane-contrib-" + p.name}, pkg); err != nil || pkg.GetDeletionTimestamp() != nil {
				continue
			}
			for _, kind := range awsManaged[p.name] {
				a.reconcile(ctx, gvk(p.api, kind))
			}
		}
	}
}

// reconcile acts on every managed resource of g once.
func (a *awsProviders) reconcile(ctx context.Context, g schema.GroupVersionKind) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(g.GroupVersion().WithKind(g.Kind + "List"))
	if err := a.c.List(ctx, l); err != nil {
		return
	}
	for i := range l.Items {
		mr := &l.Items[i]
		switch {
		case mr.GetDeletionTimestamp() != nil:
			if slices.Contains(mr.GetFinalizers(), managedFinalizer) {
				mr.SetFinalizers(slices.DeleteFunc(mr.GetFinalizers(), func(f string) bool { return f == managedFinalizer }))
				_ = a.c.Update(ctx, mr)
			}
		case !slices.Contains(mr.GetFinalizers(), managedFinalizer):
			mr.SetFinalizers(append(mr.GetFinalizers(), managedFinalizer))
			_ = a.c.Update(ctx, mr)
		case condition(mr, "Ready") != "True":
			_ = unstructured.SetNestedSlice(mr.Object, []any{cond("Synced", "True", "ReconcileSuccess", ""), cond("Ready", "True", "Available", "")}, "status", "conditions")
			_ = a.c.Status().Update(ctx, mr)
		}
	}
}

// stop ends run and waits for it; it may be called more than once.
func (a *awsProviders) stop() {
	a.once.Do(func() { close(a.done) })
	<-a.ran
}
