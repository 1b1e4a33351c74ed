// Package deploy ships manifests, not code: those that install burstpool
// beside its packages (deploy/provider: the capacity provider's runtime
// config and roles, and the executor gate's static admission policies),
// and the tests that hold them to what the provider may do.
package deploy
