package devplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

// The programs of burstpool's runtime images (hack/package.sh: imagebuild
// puts the program of package NAME at /usr/local/bin/NAME), and the
// binaries of the checkout Prepare builds in their place.
var programs = map[string]struct{ image, checkout string }{
	"Function": {image: "/usr/local/bin/function-pool-compose", checkout: "pool-compose"},
	"Provider": {image: "/usr/local/bin/provider-burstpool", checkout: "provider"},
}

// programOf returns the path of the program a pod of revision rev (kind
// Function or Provider) runs: with Config.Release the program of the
// image Crossplane resolved for the revision (its status.resolvedImage),
// extracted from the loopback registry for this machine's architecture;
// otherwise the binary Prepare built from the checkout.
func (s *Stack) programOf(ctx context.Context, kind, rev string) (string, error) {
	prog := programs[kind]
	if !s.cfg.Release {
		return filepath.Join(s.bin, prog.checkout), nil
	}
	var image string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, packageActive, true, func(ctx context.Context) (bool, error) {
		r := &unstructured.Unstructured{}
		r.SetAPIVersion("pkg.crossplane.io/v1")
		r.SetKind(kind + "Revision")
		if err := s.Client.Get(ctx, types.NamespacedName{Name: rev}, r); err != nil {
			return false, nil //nolint:nilerr // the revision may be in the making; poll again
		}
		image, _, _ = unstructured.NestedString(r.Object, "status", "resolvedImage")
		return image != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("%sRevision %s names no resolved image after %s: %w", kind, rev, packageActive, err)
	}
	b, err := ocireg.File(ctx, image, v1.Platform{OS: "linux", Architecture: runtime.GOARCH}, prog.image)
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.cfg.Dir, "revisions", rev, filepath.Base(prog.image))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, b, 0o755); err != nil { //nolint:gosec // a program to run
		return "", err
	}
	return path, nil
}

// runFunction starts the function of FunctionRevision rev on the port the
// running one (if any) does not use, points the revision at it and then
// stops the one it replaces: Crossplane calls the old process until the
// new revision names the new one.
func (s *Stack) runFunction(ctx context.Context, rev string) error {
	cfg := s.cfg
	fnName, _ := s.PackageNames()
	path, err := s.programOf(ctx, "Function", rev)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(s.functionPorts[0])
	if addr == s.functionAddr {
		addr = "127.0.0.1:" + strconv.Itoa(s.functionPorts[1])
	}
	ports, err := localcp.FreePorts(1)
	if err != nil {
		return err
	}
	metrics := "127.0.0.1:" + strconv.Itoa(ports[0])
	certs := filepath.Join(cfg.Dir, "certs", fnName)
	p, err := start(filepath.Join(cfg.Dir, "logs"), fnName, cfg.StopWithParent,
		[]string{"TLS_SERVER_CERTS_DIR=" + certs}, path, "--address", addr, "--debug", "--kwok-catalog", string(cfg.catalog()),
		"--metrics-address", metrics)
	if err != nil {
		return err
	}
	if err := localcp.WaitPort(ctx, addr, runtimeListening); err != nil {
		return errors.Join(fmt.Errorf("function of %s did not listen on %s: %w\n%s", rev, addr, err, p.Tail(20)), p.Stop(10*time.Second))
	}
	if err := MarkRuntime(ctx, s.Client, "FunctionRevision", rev, addr, s.functionSecret); err != nil {
		return errors.Join(err, p.Stop(10*time.Second))
	}
	old := s.Function
	s.Function, s.functionAddr, s.FunctionMetricsAddr = p, addr, metrics
	s.setRevision(&s.functionRevision, rev)
	if old != nil {
		if err := old.Stop(10 * time.Second); err != nil {
			return err
		}
	}
	return s.save()
}

// providerCommand is how a pod of ProviderRevision rev would run the
// capacity provider: its program, an environment whose kubeconfig holds a
// token of the pod's service account, and its arguments.
func (s *Stack) providerCommand(ctx context.Context, rev string) (path string, env, args []string, err error) {
	if path, err = s.programOf(ctx, "Provider", rev); err != nil {
		return "", nil, nil, err
	}
	account, err := s.providerAccount(ctx, rev)
	if err != nil {
		return "", nil, nil, err
	}
	// The provider runs as the service account its pod would, with the
	// rights bound to it only.
	kubeconfig := filepath.Join(s.cfg.Dir, "provider-"+account+".kubeconfig")
	if err := AccountKubeconfig(ctx, s.Client, s.Cluster.Config, account, kubeconfig, 7*24*3600); err != nil {
		return "", nil, nil, err
	}
	// Elected through a Lease in Crossplane's namespace, as in a Pod,
	// with the shipped Role's rights on Leases.
	return path, []string{"KUBECONFIG=" + kubeconfig}, []string{"--poll-interval", "10s", "--leader-election-namespace", CrossplaneNS}, nil
}

// providerAccount is the service account a pod of ProviderRevision rev
// runs as. On the Deployment runtime it is the one of the Deployment
// Crossplane made for the revision: the runtime config's, when an
// ImageConfig gave the revision deploy/provider's, else one named after
// the revision. On the External runtime it is the shipped runtime
// config's, ProviderServiceAccount.
func (s *Stack) providerAccount(ctx context.Context, rev string) (string, error) {
	if !s.cfg.providerOnDeployment() {
		return ProviderServiceAccount, nil
	}
	var account string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, packageActive, true, func(ctx context.Context) (bool, error) {
		d, err := RevisionDeployment(ctx, s.Client, rev)
		if err != nil {
			return false, nil //nolint:nilerr // Crossplane makes it once the revision is established; poll again
		}
		account = d.Spec.Template.Spec.ServiceAccountName
		return account != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("no Deployment of ProviderRevision %s after %s (Crossplane's Deployment runtime makes it): %w", rev, packageActive, err)
	}
	return account, nil
}

// RevisionDeployment is the Deployment in CrossplaneNS that package
// revision rev controls: the one Crossplane's Deployment runtime made for
// it.
func RevisionDeployment(ctx context.Context, c client.Client, rev string) (*appsv1.Deployment, error) {
	l := &appsv1.DeploymentList{}
	if err := c.List(ctx, l, client.InNamespace(CrossplaneNS)); err != nil {
		return nil, err
	}
	for i := range l.Items {
		for _, o := range l.Items[i].OwnerReferences {
			if o.Name == rev && o.Controller != nil && *o.Controller {
				return &l.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no Deployment in %s is controlled by %s", CrossplaneNS, rev)
}

// runProvider starts the capacity provider of ProviderRevision rev, waits
// until it serves, and then stops the one it replaces, as a rolling update
// does: the new process waits as a standby, and takes the Lease at once
// when the old one gives it up as it stops.
func (s *Stack) runProvider(ctx context.Context, rev string) error {
	if len(s.Replicas) > 0 {
		return errors.New("the provider runs as replicas, which follow no revision")
	}
	_, provName := s.PackageNames()
	path, env, args, err := s.providerCommand(ctx, rev)
	if err != nil {
		return err
	}
	ports, err := localcp.FreePorts(2)
	if err != nil {
		return err
	}
	metrics := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := start(filepath.Join(s.cfg.Dir, "logs"), provName, s.cfg.StopWithParent, env, path,
		append(args, "--metrics-address", metrics, "--health-address", "127.0.0.1:"+strconv.Itoa(ports[1]))...)
	if err != nil {
		return err
	}
	if err := localcp.WaitPort(ctx, metrics, runtimeListening); err != nil {
		return errors.Join(fmt.Errorf("provider of %s did not serve metrics on %s: %w\n%s", rev, metrics, err, p.Tail(20)), p.Stop(10*time.Second))
	}
	old := s.Provider
	s.Provider, s.MetricsAddr = p, metrics
	s.setRevision(&s.providerRevision, rev)
	if old != nil {
		if err := old.Stop(10 * time.Second); err != nil {
			return err
		}
	}
	return s.save()
}

// FollowRevisions does, until ctx is done, what Crossplane's pod runtime
// does when a package is upgraded or deleted: once the Function's or the
// Provider's active revision is not the one its local process runs (and,
// on the Deployment runtime, Crossplane has made the revision's
// Deployment), it starts the revision's program (Release: from the
// revision's image) beside the old process and stops the old one once the
// new one serves; once the package is being deleted, it stops its
// process, as its Deployment goes. It returns nil when ctx is done, or the
// first error. Nothing else may start or stop the runtimes meanwhile.
func (s *Stack) FollowRevisions(ctx context.Context) error {
	fnName, provName := s.PackageNames()
	certs := filepath.Join(s.cfg.Dir, "certs", provName)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
		if err := s.stopDeleted(ctx); err != nil {
			return err
		}
		running, runningProvider := s.Revisions()
		if running == "" && runningProvider == "" {
			continue
		}
		if rev, err := activeRevision(ctx, s.Client, "Function", fnName); err == nil && running != "" && rev != "" && rev != running {
			s.cfg.say("FunctionRevision %s is active: running its function in place of %s's", rev, running)
			if err := s.runFunction(ctx, rev); err != nil {
				return err
			}
		}
		rev, err := activeRevision(ctx, s.Client, "Provider", provName)
		if err != nil || runningProvider == "" || rev == "" || rev == runningProvider {
			continue
		}
		if s.cfg.providerOnDeployment() {
			if _, err := RevisionDeployment(ctx, s.Client, rev); err != nil {
				continue
			}
		} else if err := s.markProviderRevision(ctx, provName, certs, rev); err != nil {
			return err
		}
		s.cfg.say("ProviderRevision %s is active: running its provider in place of %s's", rev, runningProvider)
		if err := s.runProvider(ctx, rev); err != nil {
			return err
		}
	}
}

// stopDeleted stops the local function or provider whose package is gone
// or being deleted.
func (s *Stack) stopDeleted(ctx context.Context) error {
	fnName, provName := s.PackageNames()
	stopped := false
	for _, r := range []struct {
		kind, name string
		proc       **Proc
		rev        *string
	}{{"Function", fnName, &s.Function, &s.functionRevision}, {"Provider", provName, &s.Provider, &s.providerRevision}} {
		if *r.proc == nil || len(s.Replicas) > 0 && r.kind == "Provider" {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("pkg.crossplane.io/v1")
		u.SetKind(r.kind)
		err := s.Client.Get(ctx, types.NamespacedName{Name: r.name}, u)
		if client.IgnoreNotFound(err) != nil || err == nil && u.GetDeletionTimestamp() == nil {
			continue
		}
		s.cfg.say("%s %s is deleted: stopping its local process", r.kind, r.name)
		if err := (*r.proc).Stop(10 * time.Second); err != nil {
			return err
		}
		*r.proc = nil
		s.setRevision(r.rev, "")
		stopped = true
	}
	if !stopped {
		return nil
	}
	return s.save()
}

// Revisions are the package revisions the local function and provider
// run ("" once FollowRevisions stopped one whose package was deleted). It is safe to call while FollowRevisions runs.
func (s *Stack) Revisions() (function, provider string) {
	s.revisionsMu.Lock()
	defer s.revisionsMu.Unlock()
	return s.functionRevision, s.providerRevision
}

// setRevision records rev as the revision a local runtime runs.
func (s *Stack) setRevision(field *string, rev string) {
	s.revisionsMu.Lock()
	defer s.revisionsMu.Unlock()
	*field = rev
}
