package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

var (
	gvkEC2NodeClass = schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	gvkEnvConfig    = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
)

// TestInstallSteps runs docs/install.md as a script on a local control
// plane that stands in for an EKS cluster with Karpenter (the EC2NodeClass
// CRD is installed) and whose Crossplane runs as its Helm chart installs
// it: every sh block of its Steps section, in order, with kubectl, from
// the checkout (installByDoc). The packages are those a release for
// ghcr.io/burstpool publishes, served from a loopback registry that an
// ImageConfig rewrites ghcr.io/burstpool to, as a mirror; the steps
// install the Configuration alone, and Crossplane installs the released
// Function and Provider as its dependencies. Step 3, run with MIRROR set,
// must give the provider's Deployment the shipped runtime config: its
// service account provider-burstpool, created by the step, which the
// local provider process then authenticates as.
// Then the reference's pools must compose with the EnvironmentConfig's
// values, follow a change of it, and turn Pending, keeping their objects,
// when a required setting is deleted.
func TestInstallSteps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := installByDoc(t, filepath.Join(schemacheck.UpstreamDir, "karpenter.k8s.aws_ec2nodeclasses.yaml"))
	s, steps := d.Stack, d.steps
	// The Function and the Provider are the Configuration's dependencies,
	// installed by Crossplane from the released references.
	for kind, name := range map[string]string{"Function": devplane.FunctionName, "Provider": devplane.ProviderName} {
		p, err := s.Get(ctx, schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: kind}, "", name)
		if err != nil {
			t.Fatalf("the Configuration's %s dependency %s: %v", kind, name, err)
		}
		want := docRegistry + "/" + strings.TrimPrefix(name, "burstpool-") + ":" + d.tag
		if got, _, _ := unstructured.NestedString(p.Object, "spec", "package"); got != want {
			t.Errorf("%s %s installs %q, want the released %s", kind, name, got, want)
		}
	}
	// Step 3 gave the provider's revision its runtime config, through the
	// mirror's image: crossplane v2.4.0 internal/controller/pkg/runtime
	// Reconciler.builderOptions looks the runtime ImageConfig up by the
	// revision's resolved (rewritten) image, and
	// DeploymentRuntimeBuilder.Deployment takes the service account from
	// the runtime config's deploymentTemplate.
	rev, err := devplane.ActiveRevision(ctx, s.Client, "Provider", devplane.ProviderName, waitQuick)
	if err != nil {
		t.Fatal(err)
	}
	dep, err := devplane.RevisionDeployment(ctx, s.Client, rev)
	if err != nil {
		t.Fatal(err)
	}
	if sa := dep.Spec.Template.Spec.ServiceAccountName; sa != devplane.ProviderServiceAccount {
		t.Errorf("the provider's Deployment %s runs as service account %q, want step 3's %s", dep.Name, sa, devplane.ProviderServiceAccount)
	}
	pr, err := s.Get(ctx, gvk("pkg.crossplane.io/v1", "ProviderRevision"), "", rev)
	if err != nil {
		t.Fatal(err)
	}
	refs, _, _ := unstructured.NestedSlice(pr.Object, "status", "appliedImageConfigRefs")
	if !slices.ContainsFunc(refs, func(r any) bool {
		m, _ := r.(map[string]any)
		return m["name"] == "burstpool-provider-runtime-mirror" && m["reason"] == "ConfigureRuntime"
	}) {
		t.Errorf("ProviderRevision %s applied the ImageConfigs %v, want step 3's burstpool-provider-runtime-mirror for its runtime", rev, refs)
	}

	role, cluster := docSettings(t, steps)
	pools := []string{"burst-pool", "r7gd-pool"}
	took := eventually(t, waitDisruption, "the pools' EC2NodeClasses carry the EnvironmentConfig's role and cluster name", func(ctx context.Context) (bool, error) {
		return nodeClassesSay(ctx, s, pools, role, cluster)
	})
	t.Logf("pools composed with the EnvironmentConfig's values in %s", took.Round(100*time.Millisecond))

	rotated := role + "-rotated"
	patchEnv(t, ctx, s, client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"data":{"aws":{"role":%q}}}`, rotated)))
	took = eventually(t, waitDisruption, "the EC2NodeClasses follow the EnvironmentConfig's new role", func(ctx context.Context) (bool, error) {
		return nodeClassesSay(ctx, s, pools, rotated, cluster)
	})
	t.Logf("NodeClasses followed the changed EnvironmentConfig in %s", took.Round(100*time.Millisecond))

	patchEnv(t, ctx, s, client.RawPatch("application/json-patch+json", []byte(`[{"op":"remove","path":"/data/aws/role"}]`)))
	took = eventually(t, waitDisruption, "the pools turn Pending with a message naming data.aws.role", func(ctx context.Context) (bool, error) {
		for _, p := range pools {
			_, st, err := readPool(ctx, s, poolNS, p)
			if err != nil {
				return false, err
			}
			if st.Phase != "Pending" || !strings.Contains(st.Message, "data.aws.role") {
				return false, fmt.Errorf("pool %s is %s: %s", p, st.Phase, st.Message)
			}
		}
		return true, nil
	})
	t.Logf("pools Pending after the role was deleted in %s", took.Round(100*time.Millisecond))
	// Nothing composed is deleted: another reconcile later, the NodeClasses
	// and NodePools are still there, unchanged.
	time.Sleep(quietWindow)
	for _, p := range pools {
		if ok, err := nodeClassesSay(ctx, s, []string{p}, rotated, cluster); !ok {
			t.Errorf("pool %s lost or changed its EC2NodeClass while Pending: %v", p, err)
		}
		if _, err := readNodePool(ctx, s.Client, p); err != nil {
			t.Errorf("pool %s lost its NodePool while Pending: %v", p, err)
		}
	}
}

// docSettings reads the node role and cluster name of the EnvironmentConfig
// the steps apply.
func docSettings(t *testing.T, steps []string) (role, cluster string) {
	t.Helper()
	all := strings.Join(steps, "\n")
	i := strings.Index(all, "kind: EnvironmentConfig")
	if i < 0 {
		t.Fatal("docs/install.md applies no EnvironmentConfig")
	}
	doc := "apiVersion: apiextensions.crossplane.io/v1beta1\n" + all[i:]
	if j := strings.Index(doc, "\nYAML"); j >= 0 {
		doc = doc[:j]
	}
	var ec struct {
		Data struct {
			ClusterName string `json:"clusterName"`
			AWS         struct {
				Role string `json:"role"`
			} `json:"aws"`
		} `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(doc), &ec); err != nil || ec.Data.AWS.Role == "" || ec.Data.ClusterName == "" {
		t.Fatalf("cannot read data.aws.role and data.clusterName of the EnvironmentConfig in docs/install.md (%v):\n%s", err, doc)
	}
	return ec.Data.AWS.Role, ec.Data.ClusterName
}

// nodeClassesSay reports whether every pool's EC2NodeClass has the role and
// finds subnets and security groups by the cluster's discovery tag.
func nodeClassesSay(ctx context.Context, s *devplane.Stack, pools []string, role, cluster string) (bool, error) {
	for _, p := range pools {
		nc, err := s.Get(ctx, gvkEC2NodeClass, "", p+"-nodeclass")
		if err != nil {
			return false, err
		}
		got, _, _ := unstructured.NestedString(nc.Object, "spec", "role")
		terms, _, _ := unstructured.NestedSlice(nc.Object, "spec", "subnetSelectorTerms")
		tag := ""
		if len(terms) == 1 {
			tag, _, _ = unstructured.NestedString(terms[0].(map[string]any), "tags", "karpenter.sh/discovery")
		}
		if got != role || tag != cluster {
			return false, fmt.Errorf("EC2NodeClass %s-nodeclass has role %q and discovery tag %q, want %q and %q", p, got, tag, role, cluster)
		}
	}
	return true, nil
}

// patchEnv patches the EnvironmentConfig burstpool as a person would.
func patchEnv(t *testing.T, ctx context.Context, s *devplane.Stack, p client.Patch) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkEnvConfig)
	u.SetName("burstpool")
	if err := s.Client.Patch(ctx, u, p); err != nil {
		t.Fatalf("cannot patch EnvironmentConfig burstpool: %v", err)
	}
}
