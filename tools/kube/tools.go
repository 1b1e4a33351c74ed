//go:build tools

// Package kube is test tooling: it pins the Kubernetes control-plane binaries
// that the integration and end-to-end suites run (kube-apiserver,
// kube-scheduler, kube-controller-manager, kubectl).
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
