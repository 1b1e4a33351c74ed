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

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// docRegistry is the registry docs/install.md installs packages from. A
// doc plane serves them from a loopback registry and points Crossplane
// there with an ImageConfig, as a mirror of it, so the doc's steps run as
// written.
const docRegistry = devplane.ShippedRegistry

// installDoc is the document TestInstallSteps and TestLifecycle run,
// relative to the checkout.
const installDoc = "docs/install.md"

// docBlocks returns the sh blocks of the section "## <section>" of the
// Markdown file at path, its subsections' included, in order.
func docBlocks(t *testing.T, path, section string) []string {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a file of the checkout
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks       []string
		inSection    bool
		inBlock      bool
		cur          strings.Builder
		sectionFound bool
	)
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !inBlock && strings.HasPrefix(l, "## "):
			inSection = l == "## "+section
			sectionFound = sectionFound || inSection
		case inSection && !inBlock && l == "```sh":
			inBlock = true
			cur.Reset()
		case inBlock && l == "```":
			inBlock = false
			if inSection {
				blocks = append(blocks, cur.String())
			}
		case inBlock:
			cur.WriteString(l + "\n")
		}
	}
	if !sectionFound || len(blocks) == 0 {
		t.Fatalf("%s has no sh blocks under ## %s", path, section)
	}
	return blocks
}

// docStep is the sh block of steps that holds step n ("# n." on its first
// line).
func docStep(t *testing.T, steps []string, n int) string {
	t.Helper()
	for _, s := range steps {
		if strings.HasPrefix(s, fmt.Sprintf("# %d. ", n)) {
			return s
		}
	}
	t.Fatalf("%s has no sh block of step %d under ## Steps", installDoc, n)
	return ""
}

// docPlane is a local control plane on which docs/install.md's Steps ran
// as written: Crossplane runs as its Helm chart installs it
// (devplane.Config.HelmInstall), the packages are those a release for
// ghcr.io/burstpool publishes, copied to a loopback registry that an
// ImageConfig of the cluster's rewrites ghcr.io/burstpool to, as a mirror
// of it (the steps run with MIRROR set, step 3), and the function and the
// provider run the programs of the packages' revisions as local processes
// (devplane.Stack.StartRuntimes).
type docPlane struct {
	*devplane.Stack
	root string
	// steps are the sh blocks of the doc's Steps, and tag the release
	// step 4 installs.
	steps []string
	tag   string
	// env is the environment the doc's blocks run in: the plane's
	// kubeconfig, the pinned kubectl first on the PATH, MIRROR.
	env []string
}

// installByDoc brings up a doc plane with the CRD files crds (relative to
// the checkout) installed, and runs the Steps of docs/install.md on it, in
// order, failing t when one fails; the plane is stopped when t ends.
// Without further CRDs the function finds Karpenter's kwok provider and
// composes KWOKNodeClasses, whose nodes the simulated cloud launches; with
// EC2NodeClass's it composes for EKS, whose NodePools Karpenter's kwok
// provider does not launch nodes for.
func installByDoc(t *testing.T, crds ...string) *docPlane {
	t.Helper()
	ctx := t.Context()
	root := gomod.RootForTest(t)
	steps := docBlocks(t, filepath.Join(root, installDoc), "Steps")
	tag := regexp.MustCompile(regexp.QuoteMeta(docRegistry) + `/burstpool:(\S+)`).FindStringSubmatch(strings.Join(steps, "\n"))
	if tag == nil {
		t.Fatalf("%s installs no %s/burstpool package", installDoc, docRegistry)
	}
	kubectlBin, err := kubectlPath()
	if err != nil {
		t.Fatalf("cannot get kubectl (run `hack/tool.sh kubectl`): %v", err)
	}

	start := time.Now()
	cfg := stackConfig(t)
	cfg.HelmInstall, cfg.Release, cfg.ReleaseFor, cfg.Tag = true, true, docRegistry, tag[1]
	cfg.CrossplaneArgs = []string{"--poll-interval=15s"}
	s, err := devplane.Prepare(ctx, cfg)
	if err != nil {
		t.Fatalf("cannot prepare the control plane and packages: %v", err)
	}
	downWithLogs(t, s)
	t.Logf("control plane up, release %s of %s mirrored in %s", tag[1], docRegistry, time.Since(start).Round(100*time.Millisecond))

	bin := t.TempDir()
	if err := os.Symlink(kubectlBin, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	d := &docPlane{Stack: s, root: root, steps: steps, tag: tag[1],
		env: append(os.Environ(), "KUBECONFIG="+s.Cluster.Kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "MIRROR="+mirrorPath(s))}

	// The cluster's further CRDs, and the mirror of the registry the docs
	// name.
	for _, f := range crds {
		mustApplyFile(t, ctx, s.Cluster.Config, root, f)
	}
	d.mirror(t, ctx, "ghcr-mirror", docRegistry, mirrorPath(s))

	// What Crossplane's pod runtime would do, while the steps install the
	// packages.
	runtimes := make(chan error, 1)
	go func() { runtimes <- s.StartRuntimes(ctx) }()
	stepsStart := time.Now()
	for i, script := range steps {
		d.run(t, fmt.Sprintf("%s, Steps block %d", installDoc, i+1), script)
	}
	t.Logf("%s: every step ran in %s", installDoc, time.Since(stepsStart).Round(100*time.Millisecond))
	if err := <-runtimes; err != nil {
		t.Fatalf("cannot start the function and provider runtimes: %v", err)
	}
	return d
}

// mirrorPath is the mirror's path the doc plane's ImageConfig rewrites
// docRegistry to (MIRROR of step 3).
func mirrorPath(s *devplane.Stack) string { return s.Registry() + "/burstpool" }

// mirror rewrites the registry path from to to, as the cluster's
// ImageConfig for a mirror does.
func (d *docPlane) mirror(t *testing.T, ctx context.Context, name, from, to string) {
	t.Helper()
	mustApply(t, ctx, d.Cluster.Config, fmt.Sprintf(`apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: %s
spec:
  matchImages:
    - prefix: %s
  rewriteImage:
    prefix: %s
`, name, from, to))
}

// run runs one sh block of the doc with bash, from the checkout, failing
// t with its output and the packages' states when it fails; more is
// added to the block's environment.
func (d *docPlane) run(t *testing.T, what, script string, more ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script) //nolint:gosec // the documentation's own steps
	cmd.Dir, cmd.Env = d.root, append(append([]string{}, d.env...), more...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		packageStates(t, d.Cluster.Kubeconfig)
		t.Fatalf("%s failed after %s: %v\n--- block ---\n%s--- output ---\n%s", what, time.Since(start).Round(100*time.Millisecond), err, script, out)
	}
	t.Logf("%s: done in %s\n%s", what, time.Since(start).Round(100*time.Millisecond), out)
}

// packageStates logs the packages' revisions and their conditions, to
// tell why an installation step waited in vain.
func packageStates(t *testing.T, kubeconfig string) {
	t.Helper()
	out, err := kubectl(context.WithoutCancel(t.Context()), kubeconfig, "get", "providerrevisions,functionrevisions,configurationrevisions,providers,functions,configurations",
		"-o", `custom-columns=KIND:.kind,NAME:.metadata.name,STATE:.spec.desiredState,CONDITIONS:.status.conditions[*].reason,MESSAGES:.status.conditions[*].message`)
	t.Logf("package states (%v):\n%s", err, out)
}

// followRevisions runs s.FollowRevisions, which starts and stops the
// local runtimes as the packages' revisions change, until the returned
// stop is called; stop waits for it and returns its error, and may be
// called more than once. Nothing else may start or stop the runtimes
// before stop returns.
func followRevisions(ctx context.Context, s *devplane.Stack) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = s.FollowRevisions(ctx)
	}()
	return func() error {
		cancel()
		<-done
		return err
	}
}
