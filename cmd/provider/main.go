// Command provider ships as the capacity provider's runtime image: it
// observes pool nodes and executor pods and writes what each pool holds into
// PoolCapacity status.
package main

import (
	"time"

	"github.com/alecthomas/kong"
	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	capacitycontroller "github.com/burstpool/burstpool/internal/controller"
	"github.com/burstpool/burstpool/internal/controller/poolcapacity"
	"github.com/burstpool/burstpool/internal/metrics"
	"github.com/burstpool/burstpool/internal/version"
	"github.com/burstpool/burstpool/internal/watch"
)

// CLI of the provider.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	MetricsAddress string `default:":8080" help:"Address to serve Prometheus metrics on: every interface by default, where a PodMonitor scrapes the pod; pass 127.0.0.1:PORT to run it outside a pod."`
	HealthAddress  string `default:":8081" help:"Address to serve health and readiness probes on (every interface by default, where the kubelet probes the pod)."`
	Profile        string `help:"Serve runtime profiling data via HTTP at /debug/pprof on this address; off when unset." placeholder:"host:port"`

	PollInterval            time.Duration `default:"1m" help:"How often every PoolCapacity is recomputed even when no pod or node changed."`
	RelistInterval          time.Duration `default:"1m" help:"How often pool pods and nodes are relisted after a watch error (or always, with --no-watch)."`
	SyncPeriod              time.Duration `default:"1h" help:"Resync period of the provider's own caches."`
	Watch                   bool          `default:"true" negatable:"" help:"Watch pool pods and nodes; with --no-watch they are only relisted."`
	PollStateMetricInterval time.Duration `name:"poll-state-metric-interval" default:"5s" help:"How often the leader counts PoolCapacities that exist, are Ready and are Synced (crossplane_managed_resource_exists/ready/synced)."`

	MaxReconcileRate int `default:"10" help:"Maximum reconciles per second across controllers."`

	MaxEvictionsPerMinute float64 `default:"6" help:"Pods one pool's policies may evict a minute (through the Eviction API), after a burst of --eviction-burst."`
	EvictionBurst         int     `default:"3" help:"Evictions one pool's policies may make at once."`

	StaleAfter              time.Duration `default:"5m" help:"How long a pool's cluster may go unobserved (watch and relists failing) before its PoolCapacity's Stale condition turns True."`
	LeaderElection          bool          `default:"true" negatable:"" help:"Elect a leader through a Lease, so that only one replica acts at a time (--no-leader-election for a single process run by hand)."`
	LeaderElectionNamespace string        `env:"POD_NAMESPACE" help:"Namespace of the leader election Lease; in a Pod, the Pod's namespace."`
	// A standby takes over a leader that stopped without giving the Lease
	// up (killed, its node lost) within LeaseDuration + RetryPeriod; docs/capacity.md states the bound.
	LeaseDuration time.Duration `default:"12s" help:"How long a standby waits, after the leader's last renewal, before it takes the Lease."`
	RenewDeadline time.Duration `default:"10s" help:"How long the leader keeps retrying to renew the Lease before it stops acting (and the process exits, to be restarted as a standby)."`
	RetryPeriod   time.Duration `default:"1s" help:"How often replicas try to take or renew the Lease."`
}

// Run runs the provider until the process is stopped.
func (c *CLI) Run() error {
	zl := zap.New(zap.UseDevMode(c.Debug))
	ctrl.SetLogger(zl)
	log := logging.NewLogrLogger(zl.WithName("provider-burstpool"))

	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return errors.Wrap(err, "cannot register Kubernetes types")
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return errors.Wrap(err, "cannot register capacity types")
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  s,
		Metrics:                 metricsserver.Options{BindAddress: c.MetricsAddress},
		HealthProbeBindAddress:  c.HealthAddress,
		PprofBindAddress:        c.Profile,
		LeaderElection:          c.LeaderElection,
		LeaderElectionID:        "provider-burstpool-capacity",
		LeaderElectionNamespace: c.LeaderElectionNamespace,
		// The process ends when the manager stops, so it may give the
		// Lease up at once: a restarted or rolled provider acts without
		// waiting for the Lease to expire.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &c.LeaseDuration,
		RenewDeadline:                 &c.RenewDeadline,
		RetryPeriod:                   &c.RetryPeriod,
		// The cache holds PoolCapacities, ProviderConfigs and their
		// usages; no controller reads their managed fields.
		Cache: cache.Options{SyncPeriod: &c.SyncPeriod, DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return errors.Wrap(err, "cannot create the controller manager")
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return errors.Wrap(err, "cannot add the health check")
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return errors.Wrap(err, "cannot add the readiness check")
	}

	// crossplane-runtime's managed-resource metrics, as every Crossplane
	// provider exports them: reconcile timings, and the state gauges
	// (crossplane_managed_resource_exists, _ready, _synced).
	mrm := managed.NewMRMetricRecorder()
	mrsm := statemetrics.NewMRStateMetrics()
	crmetrics.Registry.MustRegister(mrm, mrsm)
	if err := version.Register(crmetrics.Registry, "provider"); err != nil {
		return errors.Wrap(err, "cannot export the build info")
	}
	log.Info("Starting the capacity provider", "version", version.Version)
	o := poolcapacity.Options{
		Options: controller.Options{
			Logger:                  log,
			GlobalRateLimiter:       ratelimiter.NewGlobal(c.MaxReconcileRate),
			PollInterval:            c.PollInterval,
			MaxConcurrentReconciles: c.MaxReconcileRate,
			MetricOptions: &controller.MetricOptions{
				MRMetrics:               mrm,
				MRStateMetrics:          mrsm,
				PollStateMetricInterval: c.PollStateMetricInterval,
			},
		},
		Watch:              watch.Options{Watch: c.Watch, PollInterval: c.RelistInterval},
		Metrics:            metrics.New(crmetrics.Registry),
		EvictionsPerMinute: c.MaxEvictionsPerMinute,
		EvictionBurst:      c.EvictionBurst,
		StaleAfter:         c.StaleAfter,
		// The Pod's namespace, where its service account is.
		ProviderNamespace: c.LeaderElectionNamespace,
	}
	if err := capacitycontroller.Setup(mgr, o); err != nil {
		return err
	}
	return errors.Wrap(mgr.Start(ctrl.SetupSignalHandler()), "cannot run the controller manager")
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The burstpool capacity provider."))
	ctx.FatalIfErrorf(ctx.Run())
}
