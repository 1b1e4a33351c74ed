package localcp

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Folders under Config.Dir that Up owns and recreates.
var ownedDirs = []string{"etcd", "pki", "logs", "run", "crossplane"}

// Up starts the control plane that cfg describes and returns once every
// component is ready. A failure stops whatever was started and returns an
// error that carries the failing component's log tail. Up refuses a Dir
// whose state.json still names running processes.
func Up(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if err := cfg.defaults(ctx); err != nil {
		return nil, err
	}
	if err := cfg.Binaries.check(!cfg.SkipKarpenter, !cfg.SkipCrossplane); err != nil {
		return nil, err
	}
	if old, lerr := Load(cfg.Dir); lerr == nil {
		if r := old.Running(); len(r) > 0 {
			return nil, fmt.Errorf("a control plane is already running in %s (%s pid %d): run `localcp down --dir %s` first", cfg.Dir, r[0].Name, r[0].PID, cfg.Dir)
		}
	}
	for _, d := range ownedDirs {
		if err := os.RemoveAll(filepath.Join(cfg.Dir, d)); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"logs", "run"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}

	c := &Cluster{Dir: cfg.Dir, State: State{
		Kubeconfig: filepath.Join(cfg.Dir, "kubeconfig"),
		Ports:      map[string]int{},
		ReadyAfter: map[string]time.Duration{},
	}}
	c.r.withParent = cfg.StopWithParent
	c.cfg = &cfg
	defer func() {
		if err != nil {
			_ = c.Down()
		}
	}()
	if err := c.save(); err != nil {
		return nil, err
	}
	u := &upper{cfg: cfg, c: c, start: time.Now()}
	if err := u.run(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// upper carries the state of one Up.
type upper struct {
	cfg   Config
	c     *Cluster
	pki   pki
	start time.Time
}

func (u *upper) path(elem ...string) string {
	return filepath.Join(append([]string{u.cfg.Dir}, elem...)...)
}

func (u *upper) run(ctx context.Context) error {
	names := []string{"etcd", "etcd-peer", "apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
	if !u.cfg.SkipKarpenter {
		names = append(names, "karpenter-health", "karpenter-metrics")
	}
	if !u.cfg.SkipCrossplane {
		names = append(names, "crossplane-health", "crossplane-metrics", crossplaneWebhookName)
	}
	ports, err := FreePorts(len(names))
	if err != nil {
		return err
	}
	for i, n := range names {
		u.c.Ports[n] = ports[i]
	}
	if u.pki, err = writePKI(u.path("pki")); err != nil {
		return fmt.Errorf("cannot make keys and certificates: %w", err)
	}

	if err := u.startEtcd(ctx); err != nil {
		return err
	}
	if err := u.startAPIServer(ctx); err != nil {
		return err
	}

	// The rest start together; each waits for its own readiness.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return u.startKCM(gctx) })
	g.Go(func() error { return u.startScheduler(gctx) })
	g.Go(func() error { return u.startKwok(gctx) })
	if !u.cfg.SkipKarpenter {
		g.Go(func() error { return u.startKarpenter(gctx) })
	}
	if !u.cfg.SkipCrossplane {
		g.Go(func() error { return u.startCrossplane(gctx) })
	}
	return g.Wait()
}

// launch starts s and records it in state.json.
func (u *upper) launch(s spec) (Process, error) {
	p, err := u.c.r.start(s, u.path("logs"))
	if err != nil {
		return Process{}, err
	}
	u.c.mu.Lock()
	if u.c.specs == nil {
		u.c.specs = map[string]spec{}
	}
	u.c.specs[s.name] = s
	u.c.mu.Unlock()
	return p, u.c.record(p)
}

// waitReady polls check until it succeeds, p exits or the timeout passes;
// failures carry p's log tail.
func (u *upper) waitReady(ctx context.Context, p Process, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	var last error
	for {
		if !p.alive() {
			return fmt.Errorf("%s exited while starting; last lines of %s:\n%s", p.Name, p.Log, tail(p.Log, 40))
		}
		cctx, ccancel := context.WithTimeout(ctx, readyCheckTimeout)
		last = check(cctx)
		ccancel()
		if last == nil {
			u.c.mu.Lock()
			u.c.ReadyAfter[p.Name] = time.Since(u.start).Round(time.Millisecond)
			u.c.mu.Unlock()
			return u.c.save()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is not ready after %s (%v); last lines of %s:\n%s", p.Name, u.cfg.Timeout, last, p.Log, tail(p.Log, 40))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// httpOK returns a check that GETs url and wants 200.
func httpOK(hc *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		rsp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer rsp.Body.Close() //nolint:errcheck // drained below
		b, _ := io.ReadAll(io.LimitReader(rsp.Body, 4096))
		if rsp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, rsp.Status, b)
		}
		return nil
	}
}

// insecureClient talks to the self-signed health endpoints of components.
var insecureClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probes of self-signed components
}}

func (u *upper) startEtcd(ctx context.Context) error {
	url := fmt.Sprintf("http://127.0.0.1:%d", u.c.Ports["etcd"])
	peer := fmt.Sprintf("http://127.0.0.1:%d", u.c.Ports["etcd-peer"])
	p, err := u.launch(spec{name: "etcd", path: u.cfg.Binaries.Etcd, args: []string{
		"--name=localcp",
		"--data-dir=" + u.path("etcd"),
		"--listen-client-urls=" + url,
		"--advertise-client-urls=" + url,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=localcp=" + peer,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(http.DefaultClient, url+"/health"))
}

func (u *upper) startAPIServer(ctx context.Context) error {
	port := u.c.Ports["apiserver"]
	p, err := u.launch(spec{name: "kube-apiserver", path: u.cfg.Binaries.KubeAPIServer, args: []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", u.c.Ports["etcd"]),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + u.path("pki", "apiserver"),
		"--tls-cert-file=" + u.pki.ServingCert,
		"--tls-private-key-file=" + u.pki.ServingKey,
		"--client-ca-file=" + u.pki.CACert,
		// Published to kube-system/extension-apiserver-authentication so that
		// the delegated authentication of the controller manager and the
		// scheduler finds a complete configuration.
		"--requestheader-client-ca-file=" + u.pki.CACert,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--token-auth-file=" + u.pki.TokenFile,
		"--authorization-mode=RBAC",
		"--service-account-key-file=" + u.pki.SAPub,
		"--service-account-signing-key-file=" + u.pki.SAKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/24",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}})
	if err != nil {
		return err
	}
	if err := writeKubeconfig(u.c.Kubeconfig, port, u.pki); err != nil {
		return fmt.Errorf("cannot write the kubeconfig: %w", err)
	}
	if u.c.Config, err = clientcmd.BuildConfigFromFlags("", u.c.Kubeconfig); err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(u.c.Config)
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(hc, u.c.Config.Host+"/readyz"))
}

// componentArgs are the flags kube-controller-manager and kube-scheduler share.
func (u *upper) componentArgs(name string) []string {
	return []string{
		"--kubeconfig=" + u.c.Kubeconfig,
		"--authentication-kubeconfig=" + u.c.Kubeconfig,
		"--authorization-kubeconfig=" + u.c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(u.c.Ports[name]),
		"--cert-dir=" + u.path("pki", name),
	}
}

func (u *upper) startKCM(ctx context.Context) error {
	const name = "kube-controller-manager"
	p, err := u.launch(spec{name: name, path: u.cfg.Binaries.KubeControllerManager, args: append(u.componentArgs(name),
		"--service-account-private-key-file="+u.pki.SAKey,
		"--root-ca-file="+u.pki.CACert,
		"--use-service-account-credentials=false",
		"--controllers=*",
		// kwok posts node heartbeats late when the machine is busy; with
		// the default grace the node lifecycle controller marks a live
		// fake node's pods NotReady, and kwok never marks them Ready again.
		"--node-monitor-grace-period=5m",
	)})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(insecureClient, fmt.Sprintf("https://127.0.0.1:%d/healthz", u.c.Ports[name])))
}

func (u *upper) startScheduler(ctx context.Context) error {
	const name = "kube-scheduler"
	p, err := u.launch(spec{name: name, path: u.cfg.Binaries.KubeScheduler, args: u.componentArgs(name)})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(insecureClient, fmt.Sprintf("https://127.0.0.1:%d/healthz", u.c.Ports[name])))
}

func (u *upper) startKwok(ctx context.Context) error {
	conf := u.path("run", "kwok.yaml")
	if err := os.WriteFile(conf, u.cfg.KwokConfig, 0o600); err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", u.c.Ports["kwok"])
	p, err := u.launch(spec{name: "kwok", path: u.cfg.Binaries.Kwok, args: []string{
		"--kubeconfig=" + u.c.Kubeconfig,
		"--config=" + conf,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation,
		"--manage-nodes-with-label-selector=",
		"--server-address=" + addr,
	}})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(http.DefaultClient, "http://"+addr+"/healthz"))
}

// netnsComponent describes a component that runs in its own loopback-only
// network namespace.
type netnsComponent struct {
	name    string
	path    string
	args    []string
	env     []string
	forward []int          // host ports reachable at the same port inside
	expose  map[string]int // host port name -> port inside
}

// startInNetns starts the host relay, then the component behind a relay in
// a new network namespace, and returns the latter.
func (u *upper) startInNetns(n netnsComponent) (Process, error) {
	var host, inside []Pair
	sock := func(name string) (string, error) {
		s := u.path("run", name+".sock")
		if len(s) > 100 {
			return "", fmt.Errorf("socket path %s is too long for a unix socket: use a shorter --dir", s)
		}
		return "unix:" + s, nil
	}
	for _, port := range n.forward {
		s, err := sock(n.name + "-" + strconv.Itoa(port))
		if err != nil {
			return Process{}, err
		}
		tcp := fmt.Sprintf("tcp:127.0.0.1:%d", port)
		host = append(host, Pair{Listen: s, Dial: tcp})
		inside = append(inside, Pair{Listen: tcp, Dial: s})
	}
	for hostName, port := range n.expose {
		s, err := sock(hostName)
		if err != nil {
			return Process{}, err
		}
		host = append(host, Pair{Listen: fmt.Sprintf("tcp:127.0.0.1:%d", u.c.Ports[hostName]), Dial: s})
		inside = append(inside, Pair{Listen: s, Dial: fmt.Sprintf("tcp:127.0.0.1:%d", port)})
	}
	hp, err := u.launch(spec{name: n.name + "-relay", path: u.cfg.RelayBinary,
		args: append([]string{RelayCommand}, RelayArgs(host, false)...)})
	if err != nil {
		return Process{}, err
	}
	// The inside relay dials the host relay's sockets only on connections,
	// but waiting for them keeps a failed host relay from looking like a
	// failed component.
	if err := waitSockets(hp, host); err != nil {
		return Process{}, err
	}
	p, err := u.launch(spec{name: n.name, path: u.cfg.RelayBinary, netns: true, env: n.env,
		args: append([]string{RelayCommand}, RelayArgs(inside, true, append([]string{n.path}, n.args...)...)...)})
	if err != nil {
		return Process{}, err
	}
	if err := waitSockets(p, inside); err != nil {
		return Process{}, err
	}
	return p, nil
}

// waitSockets waits for each unix socket a relay listens on (pairs whose
// Listen is "unix:PATH") to exist.
func waitSockets(p Process, pairs []Pair) error {
	for _, pr := range pairs {
		if !strings.HasPrefix(pr.Listen, "unix:") {
			continue
		}
		if err := waitPath(p, pr.Listen); err != nil {
			return err
		}
	}
	return nil
}

// waitPath waits for a relay's unix socket (addr "unix:PATH") to exist.
func waitPath(p Process, addr string) error {
	_, path, _ := splitAddr(addr)
	for range 600 { // 30 s: a relay binary may be large and the machine busy
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if !p.alive() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not open %s; last lines of %s:\n%s", p.Name, path, p.Log, tail(p.Log, 40))
}

// Ports the health and metrics servers of Karpenter and Crossplane bind
// inside their namespaces (their defaults).
const (
	nsMetricsPort = 8080
	nsHealthPort  = 8081
)

func (u *upper) ensureNamespace(ctx context.Context, name string) error {
	c, err := client.New(u.c.Config, client.Options{})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create namespace %s: %w", name, err)
	}
	return nil
}

func (u *upper) applyCRDs(ctx context.Context, dirs ...string) error {
	names, err := CRDNames(dirs...)
	if err != nil {
		return err
	}
	if err := ApplyFiles(ctx, u.c.Config, dirs...); err != nil {
		return err
	}
	return WaitEstablished(ctx, u.c.Config, u.cfg.Timeout, names...)
}

func (u *upper) startKarpenter(ctx context.Context) error {
	if err := u.ensureNamespace(ctx, KarpenterNS); err != nil {
		return err
	}
	if err := u.applyCRDs(ctx, u.cfg.KarpenterCRDDirs...); err != nil {
		return fmt.Errorf("cannot install Karpenter's CRDs: %w", err)
	}
	env := []string{
		"KUBECONFIG=" + u.c.Kubeconfig,
		"DISABLE_LEADER_ELECTION=true",
		"SYSTEM_NAMESPACE=" + KarpenterNS,
		"LOG_LEVEL=" + u.cfg.KarpenterLogLevel,
		"METRICS_PORT=" + strconv.Itoa(nsMetricsPort),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(nsHealthPort),
	}
	if u.cfg.InstanceTypesFile != "" {
		env = append(env, "INSTANCE_TYPES_FILE_PATH="+u.cfg.InstanceTypesFile)
	}
	p, err := u.startInNetns(netnsComponent{
		name:    "karpenter",
		path:    u.cfg.Binaries.Karpenter,
		env:     slices.Concat(env, u.cfg.KarpenterEnv),
		forward: []int{u.c.Ports["apiserver"]},
		expose:  map[string]int{"karpenter-health": nsHealthPort, "karpenter-metrics": nsMetricsPort},
	})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, httpOK(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", u.c.Ports["karpenter-health"])))
}
