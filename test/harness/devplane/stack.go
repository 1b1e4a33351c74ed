package devplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

// Config says where and how to bring burstpool up.
type Config struct {
	// Root is the repository root (it holds hack/, apis/, examples/).
	Root string
	// Dir holds the control plane, the built binaries, packages and logs.
	Dir string
	// StopWithParent stops every process when the caller exits (tests).
	StopWithParent bool
	// Say narrates progress; nil is silent.
	Say func(format string, args ...any)
	// Tag is the tag packages are pushed with; empty is v0.0.0-dev.
	Tag string
	// Release publishes the packages with hack/release.sh (Tag must then
	// be a semantic version): the Configuration's dependencies name the
	// released Function and Provider in the loopback registry, so
	// installing the Configuration alone installs them. The function and
	// the provider then run the programs of their packages, each revision
	// its own (Stack.FollowRevisions), not binaries built from the
	// checkout.
	Release bool
	// ReleaseFor, with Release, is the registry path the release is made
	// for (its Configurations' dependencies name it, as the project's
	// release for ShippedRegistry does), while the packages are pushed to
	// the loopback registry under ReleasePath: the copy of a mirror, which
	// an ImageConfig that rewrites ReleaseFor to the loopback registry
	// serves. Empty: the release is made for where it is pushed.
	ReleaseFor string
	// ReleasePath is the repository path under the loopback registry that
	// Release publishes to (host:port/ReleasePath/NAME); empty is
	// "burstpool". Crossplane names the Function and the Provider it
	// installs as the Configuration's dependencies after it
	// (PackageNames). With Release, Install installs the Configuration
	// alone, as docs/install.md does, with deploy/provider's ImageConfig
	// matching the released provider, as its mirror section says.
	ReleasePath string
	// DeploymentRuntime lets Crossplane's package manager run the
	// packages as it does in a cluster, creating their Deployments (which
	// the simulated nodes do not run), in place of the External runtime
	// and the local processes of StartRuntimes.
	DeploymentRuntime bool
	// HelmInstall runs Crossplane as its Helm chart installs it
	// (localcp.Config.HelmInstall: core under its own service account and
	// the chart's roles, the RBAC manager beside it), and the Provider on
	// Crossplane's Deployment package runtime: Crossplane creates its
	// Deployment, which runs on the plane's system nodes (SystemNodes, kwok
	// nodes that no pool uses), and the RBAC manager binds the provider
	// revision's roles to that Deployment's service account, the account
	// the local provider process authenticates as. The Function stays on
	// the External runtime, served by the local process core reaches.
	HelmInstall bool
	// CrossplaneArgs are extra arguments of `crossplane core start`.
	CrossplaneArgs []string
	// Catalog is the sizing catalog whose instance types the simulated
	// cloud offers under their real names: Karpenter's kwok provider
	// launches them and the function sizes pools from it. Empty means
	// SimulatedCloud.
	Catalog sizing.Cloud
	// SkipKarpenter leaves Karpenter and its CRDs out, for clusters whose
	// nodes come from elsewhere (a simulated Linode LKE cluster).
	SkipKarpenter bool
	// KarpenterEnv is added to Karpenter's environment
	// (localcp.Config.KarpenterEnv), for example its FEATURE_GATES
	// (KarpenterGatesWithBuffer).
	KarpenterEnv []string
	// KwokConfig is kwok's --config (localcp.Config.KwokConfig): the
	// simulated cloud's stages. Empty keeps kwok's instant defaults.
	KwokConfig []byte
	// CRDs are further CustomResourceDefinition files installed before
	// burstpool, for example the LKE node pool CRD that makes detection
	// find Linode.
	CRDs []string
	// ProviderReplicas runs the capacity provider as that many processes
	// electing a leader (Stack.Replicas), each started again after
	// RestartDelay when it exits, as Deployment replicas are; 0 or 1 runs
	// one process (Stack.Provider), which stays down when it exits.
	ProviderReplicas int
	// Failsafe runs the fail-safe of deploy/provider/failsafe.yaml
	// (Stack.Failsafe) as its service account, with that file's roles and
	// admission policy applied (its Deployment left out: the simulated
	// nodes run no container).
	Failsafe bool
}

// SimulatedCloud is the catalog the local control plane offers by default:
// AWS, so the reference's pools (r7gd.16xlarge, r6gd.8xlarge, ...) run as
// written.
const SimulatedCloud = sizing.CloudAWS

func (c Config) catalog() sizing.Cloud {
	if c.Catalog == "" {
		return SimulatedCloud
	}
	return c.Catalog
}

// crossplaneEnv is the environment of Crossplane core: the External
// package runtime unless DeploymentRuntime is asked for.
func (c Config) crossplaneEnv() []string {
	switch {
	case c.DeploymentRuntime:
		return nil
	case c.HelmInstall:
		return []string{"PACKAGE_RUNTIME=Provider=Deployment;Function=External"}
	}
	return []string{"PACKAGE_RUNTIME=External"}
}

// providerOnDeployment reports whether Crossplane runs the Provider's
// Deployment, so that its revision's runtime health is Crossplane's to
// record.
func (c Config) providerOnDeployment() bool { return c.DeploymentRuntime || c.HelmInstall }

// KarpenterGatesWithBuffer are Karpenter v1.14.1's default feature gates
// (pkg/operator/options/options.go, FEATURE_GATES) with CapacityBuffer on.
const KarpenterGatesWithBuffer = "FEATURE_GATES=NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=true"

// Stack is a local control plane with burstpool installed.
type Stack struct {
	Cluster *localcp.Cluster
	Client  client.Client
	// Function and Provider are the local runtimes of the packages. With
	// Config.ProviderReplicas above 1, Provider is the first replica's
	// first process and Replicas holds them all.
	Function, Provider *Proc
	Replicas           []*Replica
	// Failsafe is the fail-safe's process, with Config.Failsafe, serving
	// metrics at FailsafeMetricsAddr.
	Failsafe            *Proc
	FailsafeMetricsAddr string
	// stopSupervising ends the replicas' supervision.
	stopSupervising context.CancelFunc

	cfg      Config
	bin      string
	refs     Packages
	registry string
	// functionPorts are the two loopback ports the function may serve on,
	// both reachable from Crossplane core: a revision's process serves on
	// the one its predecessor does not, so the two overlap as a rolling
	// update's pods do. functionAddr is where the current one serves.
	functionPorts  [2]int
	functionAddr   string
	functionSecret string
	// functionRevision and providerRevision are the package revisions the
	// local processes run, written under revisionsMu (FollowRevisions
	// runs beside the caller).
	revisionsMu                        sync.Mutex
	functionRevision, providerRevision string
	stopRegistry                       func()
	// MetricsAddr is where the capacity provider serves Prometheus metrics,
	// and FunctionMetricsAddr where the function does.
	MetricsAddr, FunctionMetricsAddr string
	// InstanceTypes is the kwok provider's instance types file
	// (INSTANCE_TYPES_FILE_PATH), which Karpenter reads when it starts.
	InstanceTypes string
	// Took records how long each step took.
	Took map[string]time.Duration
}

func (c Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(format, args...)
	}
}

// SettingsFile is the EnvironmentConfig Up applies, relative to the
// checkout: the settings of make demo and the end-to-end suite.
const SettingsFile = "examples/environmentconfig.yaml"

// Up starts the control plane, builds and installs burstpool's packages,
// starts the function and provider runtimes and applies SettingsFile. On error everything started is
// stopped.
func Up(ctx context.Context, cfg Config) (_ *Stack, err error) {
	s, err := Prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			// Up's error says what failed; stopping is best effort.
			_ = s.Down()
		}
	}()
	if err := s.Install(ctx); err != nil {
		return nil, err
	}
	if err := s.StartRuntimes(ctx); err != nil {
		return nil, err
	}
	// The provider's CRDs exist once its runtime is up.
	if err := s.step("create the provider's ProviderConfig", func() error {
		return localcp.Apply(ctx, s.Cluster.Config, []byte(providerConfig))
	}); err != nil {
		return nil, err
	}
	if err := s.step("apply the cluster's settings ("+SettingsFile+": e6-pools may attach QueryServices of workspace-*)", func() error {
		b, err := os.ReadFile(filepath.Join(cfg.Root, filepath.FromSlash(SettingsFile)))
		if err != nil {
			return err
		}
		return localcp.Apply(ctx, s.Cluster.Config, b)
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// step runs one named step of bringing the stack up, timing it.
func (s *Stack) step(name string, f func() error) error {
	start := time.Now()
	s.cfg.say("%s ...", name)
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.Took[name] = time.Since(start)
	s.cfg.say("%s: done in %s", name, s.Took[name].Round(100*time.Millisecond))
	return nil
}

// Prepare builds burstpool's binaries and packages, starts the control
// plane and pushes the packages to a loopback registry; nothing is
// installed yet. On error everything started is stopped.
func Prepare(ctx context.Context, cfg Config) (_ *Stack, err error) {
	s := &Stack{cfg: cfg, Took: map[string]time.Duration{}, bin: filepath.Join(cfg.Dir, "bin")}
	defer func() {
		if err != nil {
			_ = s.Down()
		}
	}()
	step, bin := s.step, s.bin
	if err := step("build burstpool binaries", func() error {
		pkgs := []string{"./cmd/failsafe", "./test/cmd/localcp"}
		if !cfg.Release {
			// A release's runtimes run the programs of its packages.
			pkgs = append(pkgs, "./functions/pool-compose", "./cmd/provider")
		}
		return goBuild(ctx, cfg.Root, bin, pkgs...)
	}); err != nil {
		return nil, err
	}
	pkgs := filepath.Join(cfg.Dir, "out")
	if !cfg.Release {
		if err := step("build packages (crossplane xpkg build)", func() error {
			return buildPackages(ctx, cfg.Root, pkgs, nil)
		}); err != nil {
			return nil, err
		}
	}

	ports, err := localcp.FreePorts(3)
	if err != nil {
		return nil, err
	}
	s.functionPorts = [2]int{ports[0], ports[1]}
	registryPort := ports[2]
	types := filepath.Join(cfg.Dir, "instance-types.json")
	if err := WriteInstanceTypes(types, cfg.catalog()); err != nil {
		return nil, err
	}
	s.InstanceTypes = types

	if err := step("start the control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok, Karpenter, Crossplane)", func() error {
		bins, err := localcp.ToolBinaries(ctx, cfg.Root)
		if err != nil {
			return fmt.Errorf("cannot get the control plane binaries (run `make tools`): %w", err)
		}
		s.Cluster, err = localcp.Up(ctx, localcp.Config{
			Dir:               filepath.Join(cfg.Dir, "cluster"),
			Binaries:          bins,
			RelayBinary:       filepath.Join(bin, "localcp"),
			InstanceTypesFile: types,
			KwokConfig:        cfg.KwokConfig,
			SkipKarpenter:     cfg.SkipKarpenter,
			KarpenterEnv:      cfg.KarpenterEnv,
			CrossplaneEnv:     cfg.crossplaneEnv(),
			CrossplaneArgs:    cfg.CrossplaneArgs,
			HelmInstall:       cfg.HelmInstall,
			ForwardPorts:      []int{s.functionPorts[0], s.functionPorts[1], registryPort},
			StopWithParent:    cfg.StopWithParent,
		})
		return err
	}); err != nil {
		return nil, err
	}
	sch := clientgoscheme.Scheme
	_ = apiextv1.AddToScheme(sch)
	if s.Client, err = client.New(s.Cluster.Config, client.Options{Scheme: sch}); err != nil {
		return nil, err
	}
	if cfg.providerOnDeployment() {
		if err := step("add the system nodes package Deployments run on", func() error {
			return AddSystemNodes(ctx, s.Client)
		}); err != nil {
			return nil, err
		}
	}

	tag := cfg.Tag
	if tag == "" {
		tag = "v0.0.0-dev"
	}
	refs := &s.refs
	if err := step("push packages to a loopback OCI registry", func() error {
		addr, stop, err := ocireg.Serve(context.WithoutCancel(ctx), "127.0.0.1:"+strconv.Itoa(registryPort))
		if err != nil {
			return err
		}
		s.stopRegistry, s.registry = stop, addr
		if cfg.Release {
			prefix := addr + "/" + cfg.releasePath() + "/"
			*refs = Packages{Configuration: prefix + "burstpool:" + tag, Function: prefix + "function-pool-compose:" + tag, Provider: prefix + "provider-burstpool:" + tag}
			return s.publish(ctx, tag)
		}
		*refs, err = pushPackages(ctx, addr, "burstpool", tag, filepath.Join(pkgs, "packages"))
		return err
	}); err != nil {
		return nil, err
	}

	return s, nil
}

// Registry is the host:port of the loopback registry that serves the
// packages, under burstpool/.
func (s *Stack) Registry() string { return s.registry }

// Install installs the QueryService CRD, the provider's runtime config and
// roles, and the packages, as make demo and the e2e suite use them.
func (s *Stack) Install(ctx context.Context) error {
	step, cfg := s.step, s.cfg
	if err := step("install the QueryService CRD", func() error {
		if err := localcp.ApplyFiles(ctx, s.Cluster.Config, filepath.Join(cfg.Root, "examples", "crds")); err != nil {
			return err
		}
		names := []string{"queryservices.e6data.io"}
		for _, f := range cfg.CRDs {
			b, err := os.ReadFile(f) //nolint:gosec // CRD files the caller names
			if err != nil {
				return err
			}
			var crd apiextv1.CustomResourceDefinition
			if err := yaml.Unmarshal(b, &crd); err != nil {
				return fmt.Errorf("cannot read %s: %w", f, err)
			}
			if err := localcp.Apply(ctx, s.Cluster.Config, b); err != nil {
				return fmt.Errorf("cannot install %s: %w", f, err)
			}
			names = append(names, crd.Name)
		}
		return localcp.WaitEstablished(ctx, s.Cluster.Config, crdEstablished, names...)
	}); err != nil {
		return err
	}

	if err := step("run the simulated cloud's add-on DaemonSets (kube-proxy, aws-node)", func() error {
		return RunAddOns(ctx, s.Client, cfg.catalog())
	}); err != nil {
		return err
	}

	if err := step("let Crossplane compose pool objects ("+CrossplaneRoleFile+")", func() error {
		return ApplyCrossplaneRole(ctx, s.Cluster.Config, cfg.Root)
	}); err != nil {
		return err
	}

	if cfg.Release {
		// As a team that publishes the packages to its own registry: the
		// ImageConfig matches the released provider, and the Configuration
		// installs the Function and the Provider as its dependencies.
		if err := step("apply the provider's runtime config and roles (deploy/provider, the ImageConfig's prefix the release's)", func() error {
			return ApplyProviderManifestsFor(ctx, s.Cluster.Config, cfg.Root, s.registry+"/"+cfg.releasePath())
		}); err != nil {
			return err
		}
		return step("install the released Configuration alone", func() error {
			return localcp.Apply(ctx, s.Cluster.Config, []byte(ConfigurationManifest(s.refs.Configuration)))
		})
	}

	if err := step("apply the provider's runtime config and roles (deploy/provider)", func() error {
		return ApplyProviderManifests(ctx, s.Cluster.Config, cfg.Root)
	}); err != nil {
		return err
	}

	return step("install the Configuration, Function and Provider packages", func() error {
		// The function and provider steps wait for their active revisions.
		return InstallPackages(ctx, s.Client, s.refs)
	})
}

// ConfigurationManifest is the Configuration burstpool installing ref, as
// docs/install.md's step 4 applies it.
func ConfigurationManifest(ref string) string {
	return "apiVersion: pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: burstpool\nspec:\n  package: " + ref + "\n"
}

func (c Config) releasePath() string {
	if c.ReleasePath == "" {
		return "burstpool"
	}
	return c.ReleasePath
}

// PackageNames are the names of the Function and the Provider the stack
// installs: FunctionName and ProviderName, or with Release the names
// Crossplane gives the Configuration's dependencies, from the release's
// path (ReleasePath acme: acme-function-pool-compose).
func (s *Stack) PackageNames() (function, provider string) {
	if !s.cfg.Release {
		return FunctionName, ProviderName
	}
	p := strings.ReplaceAll(s.cfg.releasePath(), "/", "-")
	return p + "-function-pool-compose", p + "-provider-burstpool"
}

// StartRuntimes starts what Crossplane's pod runtime would for the
// installed packages: the function and the provider as local processes,
// each for its package's active revision, the provider with a token of
// the service account its pod would run as; then it waits for the Pool
// API. It waits for the packages' revisions, so it may run while they are
// being installed.
func (s *Stack) StartRuntimes(ctx context.Context) (err error) {
	step, cfg := s.step, s.cfg

	fnName, provName := s.PackageNames()
	if err := step("start the pool-compose function (mTLS, signed by Crossplane's CA)", func() error {
		certs := filepath.Join(cfg.Dir, "certs", fnName)
		if s.functionSecret, err = RuntimeCerts(ctx, s.Client, fnName, certs); err != nil {
			return err
		}
		rev, err := ActiveRevision(ctx, s.Client, "Function", fnName, packageActive)
		if err != nil {
			return err
		}
		return s.runFunction(ctx, rev)
	}); err != nil {
		return err
	}

	if err := step("start the capacity provider", func() error {
		rev, err := s.runProviderLocally(ctx, provName, filepath.Join(cfg.Dir, "certs", provName), "poolcapacities.capacity.e6data.io", "providerconfigs.capacity.e6data.io")
		if err != nil {
			return err
		}
		if cfg.ProviderReplicas > 1 {
			path, env, args, err := s.providerCommand(ctx, rev)
			if err != nil {
				return err
			}
			sctx, cancel := context.WithCancel(context.Background())
			s.stopSupervising = cancel
			if err := s.startReplicas(sctx, cfg.ProviderReplicas, filepath.Join(cfg.Dir, "logs"), env, path, args...); err != nil {
				return err
			}
			s.Provider, s.MetricsAddr = s.Replicas[0].Proc(), s.Replicas[0].MetricsAddr
			s.setRevision(&s.providerRevision, rev)
			for _, r := range s.Replicas {
				if err := localcp.WaitPort(ctx, r.MetricsAddr, runtimeListening); err != nil {
					return err
				}
			}
			return nil
		}
		return s.runProvider(ctx, rev)
	}); err != nil {
		return err
	}

	if cfg.Failsafe {
		if err := step("start the fail-safe (deploy/provider/failsafe.yaml, its Deployment as a local process)", s.startFailsafe); err != nil {
			return err
		}
	}

	if err := step("wait for the Pool API (XRD xpools.e6data.io offered)", func() error {
		return localcp.WaitEstablished(ctx, s.Cluster.Config, packageActive, "xpools.e6data.io", "pools.e6data.io")
	}); err != nil {
		return err
	}
	return s.save()
}

const providerConfig = `apiVersion: capacity.e6data.io/v1alpha1
kind: ProviderConfig
metadata:
  name: default
spec:
  credentials:
    source: InjectedIdentity
`

// runProviderLocally waits for the active revision of the installed
// Provider name and returns it. Where Crossplane runs no Deployment for it
// (the External runtime) it marks the revision as running outside the
// cluster, serving with a certificate written to certs. It then waits
// until the CRDs the provider owns are established.
func (s *Stack) runProviderLocally(ctx context.Context, name, certs string, crds ...string) (string, error) {
	rev, err := ActiveRevision(ctx, s.Client, "Provider", name, packageActive)
	if err != nil {
		return "", err
	}
	// On the Deployment runtime Crossplane runs the revision's Deployment
	// and records its health; the local process only acts for it.
	if !s.cfg.providerOnDeployment() {
		if err := s.markProviderRevision(ctx, name, certs, rev); err != nil {
			return "", err
		}
	}
	return rev, localcp.WaitEstablished(ctx, s.Cluster.Config, crdEstablished, crds...)
}

// markProviderRevision records on ProviderRevision rev of the Provider
// name what the Deployment runtime would: its serving certificate
// (written to certs) and a healthy runtime.
func (s *Stack) markProviderRevision(ctx context.Context, name, certs, rev string) error {
	secret, err := RuntimeCerts(ctx, s.Client, name, certs)
	if err != nil {
		return err
	}
	return MarkRuntime(ctx, s.Client, "ProviderRevision", rev, "", secret)
}

// ConnectFunction points the function's active revision at the local
// function. Crossplane may create a new revision (for example after a
// package update), so callers can repeat it.
func (s *Stack) ConnectFunction(ctx context.Context) error {
	fnName, _ := s.PackageNames()
	rev, err := ActiveRevision(ctx, s.Client, "Function", fnName, packageActive)
	if err != nil {
		return err
	}
	return MarkRuntime(ctx, s.Client, "FunctionRevision", rev, s.functionAddr, s.functionSecret)
}

// RestartProvider stops the capacity provider and starts it again.
func (s *Stack) RestartProvider() error {
	if s.Provider == nil {
		return errors.New("no provider runs")
	}
	if err := s.Provider.Stop(10 * time.Second); err != nil {
		return err
	}
	p, err := s.Provider.again(s.cfg.StopWithParent)
	if err != nil {
		return err
	}
	s.Provider = p
	return s.save()
}

// StopFunction stops the function; StartFunction starts it again on the
// same port with the same certificates.
func (s *Stack) StopFunction() error { return s.Function.Stop(10 * time.Second) }

// StartFunction starts the function again after StopFunction.
func (s *Stack) StartFunction(ctx context.Context) error {
	p, err := s.Function.again(s.cfg.StopWithParent)
	if err != nil {
		return err
	}
	s.Function = p
	if err := s.save(); err != nil {
		return err
	}
	return localcp.WaitPort(ctx, s.functionAddr, runtimeListening)
}

// Down stops the runtimes, the registry and the control plane.
func (s *Stack) Down() error {
	var errs []error
	if s.stopSupervising != nil {
		s.stopSupervising()
	}
	for _, p := range s.runtimes() {
		if p != nil {
			errs = append(errs, p.Stop(10*time.Second))
		}
	}
	if s.stopRegistry != nil {
		s.stopRegistry()
	}
	if s.Cluster != nil {
		errs = append(errs, s.Cluster.Down())
	}
	return errors.Join(errs...)
}

// stackState records the runtimes a stack started, with their start times,
// so that another process (make demo-down) stops them and nothing else.
type stackState struct {
	Processes []localcp.Process `json:"processes"`
}

func (s *Stack) save() error {
	st := stackState{}
	for _, p := range s.runtimes() {
		if p != nil {
			st.Processes = append(st.Processes, p.Process)
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.cfg.Dir, "runtimes.json"), b, 0o600)
}

// DownDir stops a stack that Up started in another process (make demo).
// A recorded process whose PID now belongs to another process (its start
// time differs) is left alone.
func DownDir(dir string) error {
	var errs []error
	if b, err := os.ReadFile(filepath.Join(dir, "runtimes.json")); err == nil {
		st := stackState{}
		if err := json.Unmarshal(b, &st); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(dir, "runtimes.json"), err))
		}
		for _, p := range st.Processes {
			errs = append(errs, p.Stop(10*time.Second))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster", "state.json")); err == nil {
		errs = append(errs, localcp.Down(filepath.Join(dir, "cluster")))
	}
	return errors.Join(errs...)
}

// Get reads an object as unstructured.
func (s *Stack) Get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
}

// WriteInstanceTypes writes the instance types of cloud's catalog as
// Karpenter's kwok provider reads them (its INSTANCE_TYPES_FILE_PATH), for
// further control planes that should offer what the function sizes from.
func WriteInstanceTypes(path string, cloud sizing.Cloud) error {
	cat, err := sizing.LoadCatalog(cloud)
	if err != nil {
		return err
	}
	b, err := sizing.KWOKInstanceTypesJSON(cat)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// runtimes are the stack's own processes: the function, the provider (or
// each replica's current process) and the fail-safe.
func (s *Stack) runtimes() []*Proc {
	ps := []*Proc{s.Function}
	if len(s.Replicas) == 0 {
		ps = append(ps, s.Provider)
	}
	for _, r := range s.Replicas {
		ps = append(ps, r.Proc())
	}
	return append(ps, s.Failsafe)
}
