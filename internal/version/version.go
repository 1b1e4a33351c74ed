// Package version ships in burstpool's binaries: the release a binary was
// built for, and the series that tells a scrape which release runs.
package version

import "github.com/prometheus/client_golang/prometheus"

// Version is the release the binary was built for. hack/package.sh links
// in the packages' VERSION (-X
// github.com/burstpool/burstpool/internal/version.Version=v0.1.0); a
// binary built otherwise says "dev".
var Version = "dev"

// Register exports burstpool_build_info{component, version}, always 1, to
// reg: which release of component (function, provider) the process runs,
// so an upgrade shows in the metrics as the series of the new version.
func Register(reg prometheus.Registerer, component string) error {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "burstpool_build_info",
		Help: "The release the process runs (label version), always 1.",
	}, []string{"component", "version"})
	g.WithLabelValues(component, Version).Set(1)
	return reg.Register(g)
}
