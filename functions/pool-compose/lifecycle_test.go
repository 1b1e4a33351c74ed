package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestPoolTypeLifecycle walks one r7gd family pool through its life with
// the real AWS catalog, feeding each call's status and objects back as the
// next call's observed state: created with no QueryService, the first
// QueryService attaches, executors run, a bigger QueryService attaches
// (autoUpgrade off, then on), and every QueryService detaches. Figures:
// r7gd.medium is the family's smallest size (1 vCPU); a 15 CPU / 30Gi
// executor needs r7gd.4xlarge (15.68 CPU allocatable), a 30 CPU / 60Gi one
// r7gd.8xlarge (31.64 CPU).
func TestPoolTypeLifecycle(t *testing.T) {
	small := (qs("small", "analytics", "lc", "pools", "ghcr.io/e6data/executor:3.1", "15", "30Gi", map[string]string{"e6data.io/pool": "lc"}))
	big := (qs("big", "analytics", "lc", "pools", "ghcr.io/e6data/executor:3.1", "30", "60Gi", map[string]string{"e6data.io/pool": "lc"}))
	spec := func(autoUpgrade bool) string {
		up := "false"
		if autoUpgrade {
			up = "true"
		}
		return "  maxExecutors: 8\n  queryServiceSelector: {matchLabels: {e6data.io/pool: lc}}\n  imageConfig: {autoCollectImages: false}\n  instanceConfig: {instanceFamily: r7gd, autoUpgrade: " + up + "}\n"
	}
	type step struct {
		name        string
		autoUpgrade bool
		qss         []string
		occupied    int64
		want        map[string]any
	}
	steps := []step{
		{name: "CreatedWithoutQueryService", want: lc("r7gd.medium", "Active", false, nil)},
		{name: "FirstQueryServiceDecides", qss: []string{small}, want: lc("r7gd.4xlarge", "Active", false, nil)},
		{name: "ExecutorsRun", qss: []string{small}, occupied: 2, want: lc("r7gd.4xlarge", "Active", true, nil)},
		{name: "BiggerQueryServiceWithoutAutoUpgrade", qss: []string{small, big}, occupied: 2, want: lc("r7gd.4xlarge", "Active", true, []string{"big"})},
		{name: "BiggerQueryServiceWithAutoUpgrade", autoUpgrade: true, qss: []string{small, big}, occupied: 2, want: lc("r7gd.8xlarge", "Active", true, nil)},
		{name: "AllQueryServicesDetach", autoUpgrade: true, want: lc("r7gd.8xlarge", "Active", true, nil)},
	}
	var prev scenario
	var prevStatus map[string]any
	for i, s := range steps {
		sc := scenario{XR: xpool("lc", "pools", spec(s.autoUpgrade)), QueryServices: s.qss, CRDs: awsCRDs, Catalog: true}
		if s.qss == nil {
			sc.QueryServices = []string{}
		}
		if i > 0 {
			// What the previous call composed, ready, with this step's
			// executors; the XPool carries the status it wrote.
			sc.Observed = observe(t, prev.run(t), healthy(s.occupied, 2))
			b, err := yaml.Marshal(prevStatus)
			if err != nil {
				t.Fatal(err)
			}
			sc.XR = withStatus(sc.XR, indent(string(b)))
		}
		rsp := sc.run(t)
		if i == 0 {
			// The first call finds nothing observed (Creating); the pool
			// turns Active once its objects are ready.
			if got := status(rsp)["phase"]; got != "Creating" {
				t.Fatalf("%s: first call phase %v, want Creating", s.name, got)
			}
			sc.Observed = observe(t, rsp, healthy(0, 2))
			rsp = sc.run(t)
		}
		st := status(rsp)
		if diff := cmp.Diff(s.want, lifecycleView(st)); diff != "" {
			t.Errorf("%s: -want, +got:\n%s", s.name, diff)
		}
		prev, prevStatus = sc, st
	}
}

// lc is what the lifecycle test checks of one step.
func lc(typ, phase string, locked bool, incompatible []string) map[string]any {
	return map[string]any{"type": typ, "phase": phase, "locked": locked, "incompatible": incompatible}
}

// lifecycleView picks the type, the phase, the lock and the incompatible
// QueryServices out of a status.
func lifecycleView(st map[string]any) map[string]any {
	sz, _ := st["sizing"].(map[string]any)
	locked, _ := sz["executorsHaveRun"].(bool)
	var incompatible []string
	for _, a := range asList(st["attachedQueryServices"]) {
		m := a.(map[string]any)
		if m["attached"] == true && m["compatible"] != true {
			incompatible = append(incompatible, m["queryService"].(map[string]any)["name"].(string))
		}
	}
	return lc(st["derivedInstanceType"].(string), st["phase"].(string), locked, incompatible)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// indent indents YAML by two spaces.
func indent(y string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(y, "\n"), "\n", "\n  ") + "\n"
}
