package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// realisticQS is realisticObject as JSON.
func realisticQS(i int, name, ns, pool, poolNS, image, cpu, mem string, labels map[string]string) string {
	b, err := json.Marshal(realisticObject(i, name, ns, pool, poolNS, image, cpu, mem, labels))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// realisticObject is a QueryService the size the API server returns a real one
// (about 8 KB): the spec qs writes plus the last-applied-configuration
// annotation kubectl apply leaves, managedFields of two managers and the
// status an operator reports. i varies its uid and figures.
func realisticObject(i int, name, ns, pool, poolNS, image, cpu, mem string, labels map[string]string) map[string]any {
	executor := map[string]any{
		"image": image, "replicas": 2, "instanceType": "r7gd.4xlarge",
		"resources":   map[string]any{"cpu": cpu, "memory": mem},
		"autoscaling": map[string]any{"enabled": true, "maxExecutors": 12, "minExecutors": 1},
		"env": []any{
			map[string]any{"name": "E6_CACHE_DIR", "value": "/mnt/nvme/cache"},
			map[string]any{"name": "E6_LOG_LEVEL", "value": "info"},
		},
	}
	if pool != "" {
		executor["poolRef"] = map[string]any{"name": pool, "namespace": poolNS}
	}
	spec := map[string]any{
		"executor":  executor,
		"planner":   map[string]any{"image": strings.Replace(image, "executor", "planner", 1), "resources": map[string]any{"cpu": "2", "memory": "8Gi"}},
		"queue":     map[string]any{"image": strings.Replace(image, "executor", "queue", 1), "resources": map[string]any{"cpu": "1", "memory": "2Gi"}},
		"storage":   map[string]any{"bucket": fmt.Sprintf("s3://e6data-%s-%s", ns, name), "region": "us-east-1"},
		"catalog":   map[string]any{"type": "glue", "region": "us-east-1", "refreshInterval": "10m"},
		"workspace": ns,
	}
	lbl := map[string]any{"app.kubernetes.io/name": "queryservice", "app.kubernetes.io/instance": name, "app.kubernetes.io/managed-by": "e6-operator"}
	for k, v := range labels {
		lbl[k] = v
	}
	applied, _ := json.Marshal(map[string]any{"apiVersion": "e6data.io/v1alpha1", "kind": "QueryService", "metadata": map[string]any{"name": name, "namespace": ns, "labels": labels}, "spec": spec})
	fields := func(prefix string, n int) map[string]any {
		m := map[string]any{}
		for j := range n {
			m[fmt.Sprintf("f:%s%02d", prefix, j)] = map[string]any{".": map[string]any{}, "f:value": map[string]any{}, "f:name": map[string]any{}}
		}
		return m
	}
	var conds, pods []any
	for j, t := range []string{"Ready", "PlannerReady", "QueueReady", "ExecutorsReady", "StorageReachable", "CatalogSynced"} {
		conds = append(conds, map[string]any{
			"type": t, "status": "True", "reason": "Reconciled", "lastTransitionTime": fmt.Sprintf("2026-11-%02dT10:%02d:00Z", 1+j, i%60),
			"message": "the " + t + " check passed on the last reconcile of the workspace " + ns, "observedGeneration": 3,
		})
	}
	for j := range 8 {
		pods = append(pods, map[string]any{"name": fmt.Sprintf("%s-executor-%05d-%d", name, i, j), "node": fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", j, i%250), "phase": "Running", "startedAt": "2026-11-22T10:00:00Z"})
	}
	o := map[string]any{
		"apiVersion": "e6data.io/v1alpha1", "kind": "QueryService",
		"metadata": map[string]any{
			"name": name, "namespace": ns, "labels": lbl,
			"uid": fmt.Sprintf("5f0c6a4e-%04x-4c1e-9d7a-%012x", i%0xffff, i), "resourceVersion": fmt.Sprint(100000 + i), "generation": 3,
			"creationTimestamp": "2026-10-01T08:00:00Z",
			"annotations":       map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(applied) + "\n"},
			"finalizers":        []any{"e6data.io/queryservice"},
			"managedFields": []any{
				map[string]any{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "e6data.io/v1alpha1", "time": "2026-10-01T08:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": fields("ann", 2), "f:labels": fields("label", 4)}, "f:spec": map[string]any{"f:executor": fields("exec", 10), "f:planner": fields("plan", 4), "f:queue": fields("queue", 4), "f:storage": fields("store", 2), "f:catalog": fields("cat", 3)}}},
				map[string]any{"manager": "e6-operator", "operation": "Update", "apiVersion": "e6data.io/v1alpha1", "time": "2026-11-22T10:00:00Z", "fieldsType": "FieldsV1", "subresource": "status",
					"fieldsV1": map[string]any{"f:status": fields("status", 12)}},
			},
		},
		"spec":   spec,
		"status": map[string]any{"phase": "Running", "observedGeneration": 3, "conditions": conds, "executors": pods, "readyExecutors": 8, "endpoint": fmt.Sprintf("https://%s.%s.svc.cluster.local:9443", name, ns)},
	}
	return o
}
