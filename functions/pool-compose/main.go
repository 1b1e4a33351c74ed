package main

import (
	"time"

	"github.com/alecthomas/kong"

	"github.com/crossplane/function-sdk-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/internal/version"
)

// defaultHelperImage is the warmup helper image of pools whose input and
// settings name none. A release links in its own (hack/package.sh with
// REGISTRY: -X main.defaultHelperImage=REGISTRY/warm:VERSION), so a
// function package defaults to the helper image released with it.
var defaultHelperImage = "ghcr.io/burstpool/warm:v0.1.0"

// CLI of the function.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network     string `default:"tcp" help:"Network on which to listen for gRPC connections."`
	Address     string `default:":9443" help:"Address at which to listen for gRPC connections: every interface by default, where Crossplane reaches a function's pod; pass 127.0.0.1:PORT to run it outside a pod."`
	TLSCertsDir string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure    bool   `help:"Run without mTLS credentials. Only for crossplane render; Crossplane itself always uses mTLS."`

	MetricsAddress     string `default:":8080" help:"Address of the Prometheus metrics endpoint (every interface by default, where a PodMonitor scrapes the pod); empty turns it off."`
	MaxRecvMessageSize int    `default:"32" help:"Maximum size of a received message (a RunFunctionRequest) in MiB: a request carries the pool's QueryServices, about 8 KB each."`
	KWOKCatalog        string `default:"kwok" env:"KWOK_CATALOG" enum:"kwok,aws,gcp,azure" help:"Instance catalog that pools on a kwok cluster (Karpenter's kwok provider) are sized from: the one its instance types file was rendered from (internal/sizing KWOKInstanceTypesJSON). aws simulates AWS instance types under their real names."`

	DecisionCacheEntries int `default:"1024" help:"Most responses the decision cache keeps, to answer a request Crossplane sends again unchanged without deciding it again; 0 turns the cache off."`
	DecisionCacheMiB     int `default:"128" name:"decision-cache-mib" help:"Most memory the decision cache's responses hold, in MiB (estimated); 0 turns the cache off."`
}

// Run serves the function until the process is stopped.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	if _, err := sizing.LoadCatalog(sizing.Cloud(c.KWOKCatalog)); err != nil {
		return err
	}
	maxRecv := c.MaxRecvMessageSize * 1024 * 1024
	decisions := newDecisionCache(c.DecisionCacheEntries, int64(c.DecisionCacheMiB)*1024*1024)
	if c.MetricsAddress != "" {
		// The SDK serves the default registry.
		if err := version.Register(prometheus.DefaultRegisterer, "function"); err != nil {
			return err
		}
		if decisions != nil {
			if err := prometheus.Register(decisions); err != nil {
				return err
			}
		}
	}
	log.Info("Starting the pool-compose function", "version", version.Version)
	return function.Serve(wireServer{f: &Function{log: log, now: time.Now, cache: &renderCache{}, decisions: decisions, kwokCatalog: sizing.Cloud(c.KWOKCatalog), maxRecv: maxRecv}},
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.WithMetricsServer(c.MetricsAddress),
		function.MaxRecvMessageSize(maxRecv))
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The burstpool pool-compose composition function."))
	ctx.FatalIfErrorf(ctx.Run())
}
