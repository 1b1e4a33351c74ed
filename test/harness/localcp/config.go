// Package localcp is test harness, for the end-to-end suite and the demo: it
// runs a real Kubernetes control plane on 127.0.0.1 (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok for fake nodes and pods,
// Karpenter with its kwok cloud provider, and optionally Crossplane core), each
// a local process from a pinned binary. Karpenter and Crossplane bind ports on
// all interfaces, so each runs in its own loopback-only network namespace and
// reaches the API server (and any forwarded host port) through relays over unix
// sockets.
//
// Every process started is recorded with its PID in DIR/state.json, so Down
// (in this process or a later one) stops exactly those processes.
package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// Versions of the components whose CRDs come from their Go modules.
const (
	KarpenterModule    = "sigs.k8s.io/karpenter"
	KarpenterVersion   = "v1.14.1"
	CrossplaneModule   = "github.com/crossplane/crossplane/v2"
	CrossplaneVersion  = "v2.4.0"
	CrossplaneNS       = "crossplane-system"
	KarpenterNS        = "karpenter"
	KwokNodeAnnotation = "kwok.x-k8s.io/node=fake"
)

// Binaries are the paths of the pinned binaries. hack/tool.sh NAME prints
// (and builds if missing) each; the tool name is in the field's comment.
type Binaries struct {
	Etcd                  string // etcd
	KubeAPIServer         string // kube-apiserver
	KubeControllerManager string // kube-controller-manager
	KubeScheduler         string // kube-scheduler
	Kwok                  string // kwok
	Karpenter             string // karpenter-kwok
	Crossplane            string // crossplane
}

// tool pairs a binary path with the hack/tool.sh name that provides it.
type tool struct{ name, path string }

func (b Binaries) tools(karpenter, crossplane bool) []tool {
	t := []tool{
		{"etcd", b.Etcd},
		{"kube-apiserver", b.KubeAPIServer},
		{"kube-controller-manager", b.KubeControllerManager},
		{"kube-scheduler", b.KubeScheduler},
		{"kwok", b.Kwok},
	}
	if karpenter {
		t = append(t, tool{"karpenter-kwok", b.Karpenter})
	}
	if crossplane {
		t = append(t, tool{"crossplane", b.Crossplane})
	}
	return t
}

// check returns an error naming hack/tool.sh NAME for the first binary that
// is not an executable file.
func (b Binaries) check(karpenter, crossplane bool) error {
	for _, t := range b.tools(karpenter, crossplane) {
		if t.path == "" {
			return fmt.Errorf("no path for the %s binary: build it with `hack/tool.sh %s` and pass the path it prints", t.name, t.name)
		}
		fi, err := os.Stat(t.path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("the %s binary %q is missing or not executable: build it with `hack/tool.sh %s`", t.name, t.path, t.name)
		}
	}
	return nil
}

// ToolBinaries fills Binaries by running hack/tool.sh NAME in the repository
// at root for each binary; a binary missing from the cache is built first,
// which takes minutes the first time.
func ToolBinaries(ctx context.Context, root string) (Binaries, error) {
	var b Binaries
	for _, t := range []struct {
		name string
		dst  *string
	}{
		{"etcd", &b.Etcd},
		{"kube-apiserver", &b.KubeAPIServer},
		{"kube-controller-manager", &b.KubeControllerManager},
		{"kube-scheduler", &b.KubeScheduler},
		{"kwok", &b.Kwok},
		{"karpenter-kwok", &b.Karpenter},
		{"crossplane", &b.Crossplane},
	} {
		var err error
		if *t.dst, err = Tool(ctx, root, t.name); err != nil {
			return Binaries{}, err
		}
	}
	return b, nil
}

// Tool returns the path of the pinned binary name that hack/tool.sh in the
// repository at root provides, building it first when the cache lacks it.
func Tool(ctx context.Context, root, name string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "tool.sh"), name) //nolint:gosec // the repository's own script
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("`hack/tool.sh %s` failed: %w\n%s", name, err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// Config says what Up starts and where.
type Config struct {
	// Dir holds everything: state.json, kubeconfig, logs/, etcd data, keys
	// and caches. Up wipes the parts of it that it owns.
	Dir string

	// Binaries are the component binaries (see ToolBinaries).
	Binaries Binaries

	// RelayBinary is an executable that runs RelayMain when its first
	// argument is RelayCommand. Default: the running executable, which
	// must then dispatch that argument itself (test/cmd/localcp does).
	RelayBinary string

	// KwokConfig is kwok's --config file (YAML documents, for example
	// Stage objects that delay a node's readiness). Empty keeps kwok's
	// default stages: nodes Ready and pods Running at once.
	KwokConfig []byte

	// SkipKarpenter leaves Karpenter out.
	SkipKarpenter bool
	// KarpenterCRDDirs are the folders of Karpenter's CRDs. Default: the
	// kwok provider's kwok/charts/crds and kwok/apis/crds of the Karpenter
	// module, the set its kwok binary serves.
	KarpenterCRDDirs []string
	// InstanceTypesFile is Karpenter's INSTANCE_TYPES_FILE_PATH; empty
	// keeps the kwok provider's built-in instance types.
	InstanceTypesFile string
	// KarpenterLogLevel is Karpenter's LOG_LEVEL (debug, info, error).
	// Default: info.
	KarpenterLogLevel string
	// KarpenterEnv is added to Karpenter's environment (KEY=VALUE).
	KarpenterEnv []string

	// SkipCrossplane leaves Crossplane core out.
	SkipCrossplane bool
	// CrossplaneCRDDir is the folder of Crossplane's CRDs. Default: the
	// Crossplane module's cluster/crds.
	CrossplaneCRDDir string
	// CrossplaneEnv is added to the environment of `crossplane core start`
	// (KEY=VALUE), for example PACKAGE_RUNTIME=External.
	CrossplaneEnv []string
	// CrossplaneArgs are added to `crossplane core start`, e.g. --debug.
	CrossplaneArgs []string
	// HelmInstall runs Crossplane as its Helm chart (the module's
	// cluster/charts/crossplane, default values) installs it: the chart's
	// service accounts, ClusterRoles and bindings applied; core, its init
	// included, authenticated as the account crossplane (the chart's
	// ClusterRole crossplane, which aggregates what the RBAC manager and
	// the installation grant it), not as the plane's system:masters admin;
	// and the RBAC manager (`crossplane rbac init`, then `crossplane rbac
	// start --provider-clusterrole=crossplane:allowed-provider-permissions`)
	// as the account rbac-manager, which makes each provider revision's
	// ClusterRoles and binds them to its Deployment's service account.
	HelmInstall bool
	// ForwardPorts are host 127.0.0.1 ports that Crossplane core reaches at
	// the same 127.0.0.1 port inside its network namespace: a function's
	// gRPC port, an OCI registry. Nothing needs to listen on them yet.
	ForwardPorts []int

	// StopWithParent makes every component get SIGTERM when the process
	// that called Up ends, even by a crash or a test timeout. Tests set it;
	// a CLI that returns after Up must not.
	StopWithParent bool

	// Timeout bounds the wait for each component to become ready.
	// Default: DefaultReadyTimeout.
	Timeout time.Duration
}

// DefaultReadyTimeout bounds the wait for each component of a control
// plane to become ready. Alone on two cores, etcd and kube-apiserver are
// ready within 10 s and each further component within seconds; but the
// end-to-end suite starts several control planes at once (up to six
// suites, one of them three planes), beside the envtest API servers of
// the packages `go test ./...` runs in parallel and a demo's control
// plane that may still be up, and each start then waits its turn for the
// CPU many times over. Three minutes is that with headroom; a component
// that is not ready by then has failed (its log tail is in the error).
const DefaultReadyTimeout = 3 * time.Minute

// readyCheckTimeout bounds one readiness check of a component (a GET of
// its health endpoint): a check slower than this counts as not ready yet
// and is tried again, so one request stalled on a loaded machine does
// not hold up the wait.
const readyCheckTimeout = 5 * time.Second

// kindServedTimeout bounds how long Apply retries an object whose kind is
// not served yet (its CRD applied a moment before, not yet Established):
// the API server's CRD controllers serve it within seconds alone, tens of
// seconds while several control planes start at once.
const kindServedTimeout = time.Minute

func (c *Config) defaults(ctx context.Context) error {
	if c.Dir == "" {
		return errors.New("no folder for the control plane: set Dir")
	}
	d, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	c.Dir = d
	if !c.SkipKarpenter || !c.SkipCrossplane {
		if c.RelayBinary, err = c.relay(); err != nil {
			return err
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultReadyTimeout
	}
	if c.KarpenterLogLevel == "" {
		c.KarpenterLogLevel = "info"
	}
	if !c.SkipKarpenter && len(c.KarpenterCRDDirs) == 0 {
		m, err := gomod.Dir(ctx, KarpenterModule, KarpenterVersion)
		if err != nil {
			return err
		}
		c.KarpenterCRDDirs = []string{filepath.Join(m, "kwok", "charts", "crds"), filepath.Join(m, "kwok", "apis", "crds")}
	}
	if !c.SkipCrossplane && c.CrossplaneCRDDir == "" {
		m, err := gomod.Dir(ctx, CrossplaneModule, CrossplaneVersion)
		if err != nil {
			return err
		}
		c.CrossplaneCRDDir = filepath.Join(m, "cluster", "crds")
	}
	return nil
}

// relay returns RelayBinary, or by default the running executable.
func (c Config) relay() (string, error) {
	if c.RelayBinary != "" {
		return c.RelayBinary, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the relay binary: %w", err)
	}
	return exe, nil
}
