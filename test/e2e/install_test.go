package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// docRegistry is the registry docs/install.md installs packages from; the
// test serves them from a loopback registry and points Crossplane there
// with an ImageConfig, so the steps run as written.
const docRegistry = "ghcr.io/burstpool"

// installSteps returns the sh blocks of the "## Steps" section of the
// Markdown file at path, in order.
func installSteps(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a file of the checkout
	if err != nil {
		t.Fatal(err)
	}
	var (
		steps        []string
		inSection    bool
		inBlock      bool
		cur          strings.Builder
		sectionFound bool
	)
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !inBlock && strings.HasPrefix(l, "## "):
			inSection = l == "## Steps"
			sectionFound = sectionFound || inSection
		case inSection && !inBlock && l == "```sh":
			inBlock = true
			cur.Reset()
		case inBlock && l == "```":
			inBlock = false
			steps = append(steps, cur.String())
		case inBlock:
			cur.WriteString(l + "\n")
		}
	}
	if !sectionFound || len(steps) == 0 {
		t.Fatalf("%s has no sh blocks under ## Steps", path)
	}
	return steps
}

var (
	gvkEC2NodeClass = schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	gvkEnvConfig    = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1beta1", Kind: "EnvironmentConfig"}
)

// TestInstallSteps runs docs/install.md as a script on a local control
// plane that stands in for an EKS cluster with Karpenter (the EC2NodeClass
// CRD is installed): every sh block of its Steps section, in order, with
// kubectl, from the checkout. The packages are those `make release`
// publishes (hack/release.sh, to a loopback registry that an ImageConfig
// substitutes for ghcr.io/burstpool); the steps install the Configuration
// alone, and Crossplane installs the released Function and Provider as its
// dependencies. The function and the provider run as local processes, the
// provider as its shipped service account with the shipped roles.
// Then the reference's pools must compose with the EnvironmentConfig's
// values, follow a change of it, and turn Pending, keeping their objects,
// when a required setting is deleted.
func TestInstallSteps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	root := gomod.RootForTest(t)
	doc := filepath.Join(root, "docs", "install.md")
	steps := installSteps(t, doc)
	tag := regexp.MustCompile(regexp.QuoteMeta(docRegistry) + `/burstpool:(\S+)`).FindStringSubmatch(strings.Join(steps, "\n"))
	if tag == nil {
		t.Fatalf("docs/install.md installs no %s/burstpool package", docRegistry)
	}
	kubectlBin, err := kubectlPath()
	if err != nil {
		t.Fatalf("cannot get kubectl (run `hack/tool.sh kubectl`): %v", err)
	}

	start := time.Now()
	cfg := stackConfig(t)
	cfg.Tag, cfg.CrossplaneArgs, cfg.Release = tag[1], []string{"--poll-interval=15s"}, true
	s, err := devplane.Prepare(ctx, cfg)
	if err != nil {
		t.Fatalf("cannot prepare the control plane and packages: %v", err)
	}
	downWithLogs(t, s)
	t.Logf("control plane up, packages pushed in %s", time.Since(start).Round(100*time.Millisecond))

	// The cluster: Karpenter on AWS, and the registry the docs name.
	mustApplyFile(t, ctx, s.Cluster.Config, root, "test", "crds", "upstream", "karpenter.k8s.aws_ec2nodeclasses.yaml")
	mustApply(t, ctx, s.Cluster.Config, fmt.Sprintf(`apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: install-test-registry
spec:
  matchImages:
    - prefix: %s
  rewriteImage:
    prefix: %s/burstpool
`, docRegistry, s.Registry()))

	// What Crossplane's pod runtime would do, while the steps install the
	// packages.
	runtimes := make(chan error, 1)
	go func() { runtimes <- s.StartRuntimes(ctx) }()

	bin := t.TempDir()
	if err := os.Symlink(kubectlBin, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "KUBECONFIG="+s.Cluster.Kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	stepsStart := time.Now()
	for i, script := range steps {
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script) //nolint:gosec // the documentation's own steps
		cmd.Dir, cmd.Env = root, env
		stepStart := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("docs/install.md, sh block %d failed: %v\n--- block ---\n%s--- output ---\n%s", i+1, err, script, out)
			packageStates(t, s.Cluster.Kubeconfig)
			select {
			case err := <-runtimes:
				t.Logf("the runtimes' start ended with: %v", err)
			default:
				t.Logf("the runtimes are still starting: %v", s.Took)
			}
			t.FailNow()
		}
		t.Logf("docs/install.md, sh block %d: done in %s\n%s", i+1, time.Since(stepStart).Round(100*time.Millisecond), out)
	}
	t.Logf("docs/install.md: every step ran in %s", time.Since(stepsStart).Round(100*time.Millisecond))
	if err := <-runtimes; err != nil {
		t.Fatalf("cannot start the function and provider runtimes: %v", err)
	}
	// The Function and the Provider are the Configuration's dependencies,
	// installed by Crossplane from the released references.
	for kind, name := range map[string]string{"Function": devplane.FunctionName, "Provider": devplane.ProviderName} {
		p, err := s.Get(ctx, schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: kind}, "", name)
		if err != nil {
			t.Fatalf("the Configuration's %s dependency %s: %v", kind, name, err)
		}
		repo := strings.TrimPrefix(name, "burstpool-")
		if got, _, _ := unstructured.NestedString(p.Object, "spec", "package"); got != s.Registry()+"/burstpool/"+repo+":"+tag[1] {
			t.Errorf("%s %s installs %q, want the released %s/burstpool/%s:%s", kind, name, got, s.Registry(), repo, tag[1])
		}
	}

	// Tenants' QueryServices, so the basic pool derives its instance type.
	mustApplyFile(t, ctx, s.Cluster.Config, root, "examples", "queryservices.yaml")

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

// packageStates logs the packages' revisions and their conditions, to
// tell why an installation step waited in vain.
func packageStates(t *testing.T, kubeconfig string) {
	t.Helper()
	out, err := kubectl(t.Context(), kubeconfig, "get", "providerrevisions,functionrevisions,configurationrevisions,providers,functions,configurations",
		"-o", `custom-columns=KIND:.kind,NAME:.metadata.name,STATE:.spec.desiredState,CONDITIONS:.status.conditions[*].reason,MESSAGES:.status.conditions[*].message`)
	t.Logf("package states (%v):\n%s", err, out)
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
