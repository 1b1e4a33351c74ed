//go:build tools

// Package etcd is test tooling: it pins the etcd server that backs the local
// API server.
package etcd

import _ "go.etcd.io/etcd/server/v3"
