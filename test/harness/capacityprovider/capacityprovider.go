// Package capacityprovider is test harness: it runs the capacity
// provider's controllers (ProviderConfig and PoolCapacity) in process
// against an API server, as cmd/provider runs them, for the integration
// and adversarial tests.
package capacityprovider

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	capacitycontroller "github.com/burstpool/burstpool/internal/controller"
	"github.com/burstpool/burstpool/internal/controller/poolcapacity"
	"github.com/burstpool/burstpool/internal/metrics"
	"github.com/burstpool/burstpool/internal/watch"
)

// PollInterval is how often the provider reconciles each PoolCapacity:
// each reconcile is a round in which the pool's policies may evict.
const PollInterval = 2 * time.Second

// A Provider is one run of the capacity provider.
type Provider struct {
	// Metrics holds the provider's Prometheus metrics.
	Metrics *prometheus.Registry

	cancel context.CancelFunc
	done   chan error
}

// Start runs the provider's controllers with the identity of cfg, its
// objects decoded by s (which must hold the core, policy and capacity
// types), its observers configured by w, until Stop. It does not wait for
// the controllers to start.
func Start(t testing.TB, cfg *rest.Config, s *runtime.Scheme, w watch.Options) *Provider {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		t.Fatalf("cannot create a manager: %v", err)
	}
	reg := prometheus.NewRegistry()
	o := poolcapacity.Options{
		Options: controller.Options{
			Logger:                  logging.NewNopLogger(),
			GlobalRateLimiter:       ratelimiter.NewGlobal(100),
			PollInterval:            PollInterval,
			MaxConcurrentReconciles: 2,
		},
		Watch:   w,
		Metrics: metrics.New(reg),
	}
	if err := capacitycontroller.Setup(mgr, o); err != nil {
		t.Fatalf("cannot set up the controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Provider{Metrics: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- mgr.Start(ctx) }()
	return p
}

// Stop stops the provider and waits up to timeout for it to stop; an
// error it stopped with fails the test.
func (p *Provider) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	p.cancel()
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("the provider stopped with an error: %v", err)
		}
	case <-time.After(timeout):
		t.Fatal("the provider did not stop")
	}
}
