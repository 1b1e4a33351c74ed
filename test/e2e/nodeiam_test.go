package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// The node IAM scenario's pool and the names its objects get.
const (
	iamPool      = "iam-burst"
	iamQS        = "iam-analytics"
	iamCluster   = "e2e-cluster"
	iamRegion    = "us-east-1"
	iamRoleName  = iamCluster + "." + poolNS + "." + iamPool + "-node"
	iamRoleMR    = poolNS + "." + iamPool + "-node-role"
	iamEntryMR   = poolNS + "." + iamPool + "-node-access"
	iamAPI       = "iam.aws.upbound.io/v1beta1"
	eksAPI       = "eks.aws.upbound.io/v1beta1"
	usageAPI     = "protection.crossplane.io/v1beta1"
	iamPolicies  = 4
	iamReplicas  = 2
	accessDenied = "AccessDenied: User: arn:aws:sts::123456789012:assumed-role/crossplane is not authorized to perform: iam:CreateRole"
)

// providerAWSCRDs are provider-aws's CRDs of the node IAM objects, as
// vendored for the schema checks.
var providerAWSCRDs = []string{"iam.aws.upbound.io_roles.yaml", "iam.aws.upbound.io_rolepolicyattachments.yaml", "eks.aws.upbound.io_accessentries.yaml"}

// testNodeIAM runs a pool that composes its node IAM on the simulated AWS.
// provider-aws's CRDs are installed but no provider runs: the test plays
// the provider by writing the managed resources' conditions.
func testNodeIAM(t *testing.T, ctx context.Context, s *devplane.Stack, root string) {
	c, cfg := s.Client, s.Cluster.Config
	start := time.Now()
	var names []string
	for _, f := range providerAWSCRDs {
		mustApplyFile(t, ctx, cfg, root, schemacheck.UpstreamDir, f)
		names = append(names, strings.TrimSuffix(strings.SplitN(f, "_", 2)[1], ".yaml")+"."+strings.SplitN(f, "_", 2)[0])
	}
	if err := localcp.WaitEstablished(ctx, cfg, waitEstablished, names...); err != nil {
		t.Fatal(err)
	}
	// The cluster's name and region, which node IAM needs, and the grant
	// that lets Pools of e6-pools (the settings' first tenancy entry) ask
	// for node IAM.
	applySettings(t, ctx, cfg, root, func(data map[string]any) {
		data["clusterName"] = iamCluster
		data["provisioning"] = map[string]any{"region": iamRegion}
		entries, _, _ := unstructured.NestedSlice(data, "tenancy", "namespaces")
		if len(entries) == 0 || !slices.Contains(entries[0].(map[string]any)["names"].([]any), any(poolNS)) {
			t.Fatalf("%s: the first tenancy.namespaces entry is not %s's", devplane.SettingsFile, poolNS)
		}
		entries[0].(map[string]any)["composeNodeIAM"] = true
		if err := unstructured.SetNestedSlice(data, entries, "tenancy", "namespaces"); err != nil {
			t.Fatal(err)
		}
	})
	const cpu, mem = "4", "16Gi"
	for _, ns := range []string{poolNS, analyticsNS} {
		if err := ensureNamespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
	}
	mustApply(t, ctx, cfg, fmt.Sprintf(`apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata: {name: %s, namespace: %s}
spec:
  executor:
    image: registry.example.com/e6data/executor:e2e
    resources: {cpu: "%s", memory: %s}
    poolRef: {name: %s, namespace: %s}
---
apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: %s, namespace: %s}
spec:
  maxExecutors: 4
  provisioning: {composeNodeIAM: true}
  allowedQueryServices:
    - {name: %s, namespace: %s}
`, iamQS, analyticsNS, cpu, mem, iamPool, poolNS, iamPool, poolNS, iamQS, analyticsNS))

	var policies []unstructured.Unstructured
	took := eventually(t, waitStatus, "Role, policy attachments and AccessEntry composed with their references", func(ctx context.Context) (bool, error) {
		role, err := s.Get(ctx, gvk(iamAPI, "Role"), "", iamRoleMR)
		if err != nil {
			return false, err
		}
		if n := role.GetAnnotations()["crossplane.io/external-name"]; n != iamRoleName {
			return false, fmt.Errorf("role's IAM name %q, want %q", n, iamRoleName)
		}
		policies = byPool(ctx, c, iamAPI, "RolePolicyAttachment")
		if len(policies) != iamPolicies {
			return false, fmt.Errorf("%d policy attachments, want %d", len(policies), iamPolicies)
		}
		for _, p := range policies {
			if r, _, _ := unstructured.NestedString(p.Object, "spec", "forProvider", "roleRef", "name"); r != iamRoleMR {
				return false, fmt.Errorf("%s refers to role %q", p.GetName(), r)
			}
		}
		e, err := s.Get(ctx, gvk(eksAPI, "AccessEntry"), "", iamEntryMR)
		if err != nil {
			return false, err
		}
		fp, _, _ := unstructured.NestedMap(e.Object, "spec", "forProvider")
		got := fmt.Sprint(fp["clusterName"], " ", fp["region"], " ", fp["type"], " ", fp["principalArnFromRoleRef"])
		want := fmt.Sprint(iamCluster, " ", iamRegion, " EC2_LINUX ", map[string]any{"name": iamRoleMR})
		return got == want, fmt.Errorf("access entry %s, want %s", got, want)
	})
	t.Logf("pool created -> node IAM composed: %s", took.Round(10*time.Millisecond))

	waitCondition := func(what, status string, parts ...string) {
		t.Helper()
		eventually(t, waitStatus, what, func(ctx context.Context) (bool, error) {
			p, err := claim(ctx, s, iamPool)
			if err != nil {
				return false, err
			}
			st, _, msg := conditionFields(p, "NodeIAMReady")
			for _, part := range parts {
				if !strings.Contains(msg, part) {
					return false, fmt.Errorf("NodeIAMReady=%s %q lacks %q", st, msg, part)
				}
			}
			return st == status, fmt.Errorf("NodeIAMReady=%s: %s", st, msg)
		})
	}
	waitCondition("the claim says the pool waits for its role, by name", "False", iamRoleName, "Role "+iamRoleMR)
	if _, err := readNodePool(ctx, s.Client, iamPool); !kerrors.IsNotFound(err) {
		t.Errorf("the NodePool exists before the node role is Ready (%v)", err)
	}
	if _, st, err := readPool(ctx, s, poolNS, iamPool); err == nil && st.Phase != "Pending" {
		t.Errorf("pool phase %q while its role is not Ready, want Pending", st.Phase)
	}

	// The provider fails to create the role.
	setConditions(t, ctx, c, gvk(iamAPI, "Role"), iamRoleMR, cond("Synced", "False", "ReconcileError", "create failed: "+accessDenied))
	waitCondition("the provider's error shows on the claim in words", "False", accessDenied)

	// The provider creates everything.
	ready := []map[string]any{cond("Synced", "True", "ReconcileSuccess", ""), cond("Ready", "True", "Available", "")}
	setConditions(t, ctx, c, gvk(iamAPI, "Role"), iamRoleMR, ready...)
	for _, p := range policies {
		setConditions(t, ctx, c, gvk(iamAPI, "RolePolicyAttachment"), p.GetName(), ready...)
	}
	setConditions(t, ctx, c, gvk(eksAPI, "AccessEntry"), iamEntryMR, ready...)
	readyAt := time.Now()
	waitCondition("NodeIAMReady=True once every IAM object is Ready", "True", iamRoleName)
	eventually(t, waitStatus, "NodePool, NodeClass with the role, and usages composed", func(ctx context.Context) (bool, error) {
		if _, err := readNodePool(ctx, s.Client, iamPool); err != nil {
			return false, err
		}
		nc, err := s.Get(ctx, gvk("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass"), "", iamPool+"-nodeclass")
		if err != nil {
			return false, err
		}
		if r := nc.GetAnnotations()["e6data.io/node-role"]; r != iamRoleName {
			return false, fmt.Errorf("KWOKNodeClass names role %q, want %q", r, iamRoleName)
		}
		us := byPool(ctx, c, usageAPI, "ClusterUsage")
		for _, u := range us {
			if by, _, _ := unstructured.NestedString(u.Object, "spec", "by", "resourceRef", "name"); by != iamPool+"-nodepool" {
				return false, fmt.Errorf("usage %s is by %q", u.GetName(), by)
			}
		}
		return len(us) == iamPolicies+2, fmt.Errorf("%d usages, want %d", len(us), iamPolicies+2)
	})
	t.Logf("node IAM Ready -> NodePool, NodeClass and usages: %s", time.Since(readyAt).Round(10*time.Millisecond))

	// Nodes launch for the pool's executors.
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, iamQS, "registry.example.com/e6data/executor:e2e", iamReplicas, cpu, mem, executorScheduling(t, c, poolNS, iamPool))); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitNodes, "executors Running on initialized pool nodes", func(ctx context.Context) (bool, error) {
		n, err := runningExecutors(ctx, c, analyticsNS, iamPool)
		if err != nil {
			return false, err
		}
		nodes := poolNodes(t, ctx, c, iamPool)
		init := 0
		for _, nd := range nodes {
			if nd.Labels["karpenter.sh/initialized"] == "true" {
				init++
			}
		}
		return n == iamReplicas && init == len(nodes) && init > 0, fmt.Errorf("%d executors Running, %d of %d nodes initialized", n, init, len(nodes))
	})
	// The executors keep running until just before the claim is deleted;
	// should the test stop earlier, they go with it.
	t.Cleanup(func() {
		if err := deleteExecutors(context.Background(), c, analyticsNS, iamQS); client.IgnoreNotFound(err) != nil {
			t.Errorf("cannot delete the executors: %v", err)
		}
	})

	// Crossplane refuses to delete the role while the NodePool uses it.
	var refused error
	eventually(t, waitReconcile, "deleting the Role while the NodePool stands is refused", func(ctx context.Context) (bool, error) {
		role, err := s.Get(ctx, gvk(iamAPI, "Role"), "", iamRoleMR)
		if err != nil {
			return false, err
		}
		if role.GetLabels()["crossplane.io/in-use"] != "true" {
			return false, fmt.Errorf("the Role is not marked in use yet")
		}
		refused = c.Delete(ctx, role)
		return refused != nil, fmt.Errorf("the Role was deleted while in use")
	})
	t.Logf("Role deletion refused: %v", refused)

	// Deleting the claim removes the nodes first, then the IAM objects.
	// The executors go first, as docs/install.md's uninstall order says:
	// they carry karpenter.sh/do-not-disrupt (status.executorScheduling),
	// so a node running one would wait for them up to the NodePool's
	// terminationGracePeriod.
	if err := deleteExecutors(ctx, c, analyticsNS, iamQS); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := deleteClaim(ctx, c, poolNS, iamPool); err != nil {
		t.Fatal(err)
	}
	gone := map[string]time.Duration{}
	iamObjects := []string{"Role/" + iamRoleMR, "AccessEntry/" + iamEntryMR}
	for _, pol := range policies {
		iamObjects = append(iamObjects, "RolePolicyAttachment/"+pol.GetName())
	}
	eventually(t, waitSlow, "pool nodes and node IAM objects gone", func(ctx context.Context) (bool, error) {
		at := time.Since(deleted)
		if _, ok := gone["nodes"]; !ok && len(poolNodes(t, ctx, c, iamPool)) == 0 {
			gone["nodes"] = at
		}
		for _, o := range iamObjects {
			kind, name, _ := strings.Cut(o, "/")
			api := iamAPI
			if kind == "AccessEntry" {
				api = eksAPI
			}
			if _, ok := gone[o]; ok {
				continue
			}
			if _, err := s.Get(ctx, gvk(api, kind), "", name); kerrors.IsNotFound(err) {
				gone[o] = at
			}
		}
		return len(gone) == len(iamObjects)+1, fmt.Errorf("gone so far: %v", gone)
	})
	for _, o := range iamObjects {
		if gone[o] < gone["nodes"] {
			t.Errorf("%s was gone %s after the claim's deletion, before the pool's nodes (%s)", o, gone[o], gone["nodes"])
		}
	}
	t.Logf("claim deleted -> nodes gone %s, Role gone %s, AccessEntry gone %s", gone["nodes"].Round(10*time.Millisecond),
		gone["Role/"+iamRoleMR].Round(10*time.Millisecond), gone["AccessEntry/"+iamEntryMR].Round(10*time.Millisecond))
	t.Logf("node IAM scenario: %s", time.Since(start).Round(100*time.Millisecond))
}

// byPool lists the objects of a kind labelled for the node IAM pool.
func byPool(ctx context.Context, c client.Client, apiVersion, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	if err := c.List(ctx, l, client.MatchingLabels{"e6data.io/pool": iamPool}); err != nil {
		return nil
	}
	return l.Items
}

// cond is a managed resource condition as a provider writes it.
func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// setConditions writes a managed resource's status conditions, as its
// provider would.
func setConditions(t *testing.T, ctx context.Context, c client.Client, g schemaGVK, name string, conds ...map[string]any) {
	t.Helper()
	eventually(t, waitQuick, "status of "+g.Kind+" "+name+" written", func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(g)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return false, err
		}
		list := make([]any, 0, len(conds))
		for _, c := range conds {
			list = append(list, c)
		}
		if err := unstructured.SetNestedSlice(u.Object, list, "status", "conditions"); err != nil {
			return false, err
		}
		err := c.Status().Update(ctx, u)
		return err == nil, err
	})
}
