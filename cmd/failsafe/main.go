// Command failsafe ships at /failsafe in the capacity provider's runtime
// image and runs as its own Deployment (deploy/provider/failsafe.yaml),
// beside the provider and independent of it: while no provider replica
// renews the provider's Lease, it removes the executor gate from executors
// gated longer than --gate-bound, and it removes the startup taint from a
// Ready pool node still closed --grace past its pool's openAfter. Its service account may do nothing else: the admission
// policy of failsafe.yaml refuses any other change it asks for.
package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/failsafe"
)

// CLI of the fail-safe.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	MetricsAddress string        `default:":8080" help:"Address to serve Prometheus metrics and /healthz on: every interface by default, inside a Pod; pass 127.0.0.1:PORT outside one."`
	Interval       time.Duration `default:"2s" help:"How often the fail-safe reads the cluster."`
	GateBound      time.Duration `default:"30s" help:"How long an executor may wait at the executor gate before the fail-safe removes the gate (the provider removes it within 10s, or a standby within its takeover)."`
	Grace          time.Duration `default:"30s" help:"How long past its pool's openAfter a Ready pool node may stay closed before the fail-safe opens it."`
	OpenAfter      time.Duration `default:"5m" help:"openAfter of a warming node no PoolCapacity of this cluster claims (a workload cluster's pools): the settings' warmup.openAfter."`
	Silence        time.Duration `default:"20s" help:"How long the provider's Lease may go unrenewed before the fail-safe takes the provider for down and removes executor gates past --gate-bound (a standby takes over within 13 s)."`
	LeaseNamespace string        `default:"crossplane-system" env:"POD_NAMESPACE" help:"Namespace of the provider's Lease provider-burstpool-capacity (the provider's namespace)."`
}

// Run runs the fail-safe until the process is stopped.
func (c *CLI) Run() error {
	log := zap.New(zap.UseDevMode(c.Debug)).WithName("burstpool-failsafe")
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r := &failsafe.Runner{
		Client:   cl,
		Lease:    types.NamespacedName{Namespace: c.LeaseNamespace, Name: "provider-burstpool-capacity"},
		Bounds:   failsafe.Bounds{Gate: c.GateBound, Grace: c.Grace, OpenAfter: c.OpenAfter, Silence: c.Silence},
		Interval: c.Interval,
		Metrics:  failsafe.NewMetrics(reg),
		Log:      log,
		Now:      time.Now,
	}
	ctx := ctrl.SetupSignalHandler()
	ln, err := net.Listen("tcp", c.MetricsAddress)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "metrics server stopped")
		}
	}()
	log.Info("running", "gateBound", c.GateBound.String(), "grace", c.Grace.String(), "openAfter", c.OpenAfter.String())
	err = r.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return err
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The burstpool fail-safe: removes the executor gate and the startup taint when the capacity provider has not within their bounds."))
	ctx.FatalIfErrorf(ctx.Run())
}
