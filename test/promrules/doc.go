// Package promrules only tests: it loads the example PrometheusRule
// (examples/monitoring/prometheusrule.yaml) with the packages promtool
// checks rules with, in a module of its own so that Prometheus's
// requirements do not raise the versions the shipped binaries build with.
package promrules
