package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// qsWith is a QueryService attached to pools/burst with extra executor
// fields (YAML lines indented four spaces).
func qsWith(name, ns, cpu, mem, extra string) string {
	return qs(name, ns, "burst", "pools", "ghcr.io/e6data/executor:3.1", cpu, mem, nil) + extra
}

// TestRuleArchitecture: the architecture follows an explicit type or
// family; otherwise spec.instanceConfig.architecture, what the attached
// QueryServices declare, the type executors have run on, or amd64.
func TestRuleArchitecture(t *testing.T) {
	pool := func(extra string) string {
		return "  maxExecutors: 4\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  - {name: reporting, namespace: team-b}\n" + extra
	}
	plain := qsWith("analytics", "team-a", "2", "4Gi", "")
	type want struct {
		Arch, From string
		Warnings   []string
	}
	cases := map[string]struct {
		reason string
		xr     string
		qss    []string
		want   want
	}{
		"DefaultAMD64": {
			reason: "Nothing declares an arch: amd64, although the cheapest type for 2 CPU / 4Gi is a Graviton c7g.xlarge.",
			xr:     xpool("burst", "pools", pool("")), qss: []string{plain},
			want: want{Arch: "amd64", From: decision.ArchFromDefault},
		},
		"PoolField": {
			reason: "spec.instanceConfig.architecture arm64 picks from arm64 types.",
			xr:     xpool("burst", "pools", pool("  instanceConfig: {architecture: arm64}\n")), qss: []string{plain},
			want: want{Arch: "arm64", From: "spec.instanceConfig.architecture"},
		},
		"QueryServiceNodeSelector": {
			reason: "The executor's kubernetes.io/arch node selector is arm64.",
			xr:     xpool("burst", "pools", pool("")), qss: []string{qsWith("analytics", "team-a", "2", "4Gi", "    nodeSelector: {kubernetes.io/arch: arm64}\n")},
			want: want{Arch: "arm64", From: "QueryService team-a/analytics (executor nodeSelector kubernetes.io/arch=arm64)"},
		},
		"QueryServiceInstanceType": {
			reason: "The executors run on r7gd.4xlarge, a Graviton (arm64) type.",
			xr:     xpool("burst", "pools", pool("")), qss: []string{qsWith("analytics", "team-a", "2", "4Gi", "    instanceType: r7gd.4xlarge\n")},
			want: want{Arch: "arm64", From: "QueryService team-a/analytics (its executors run on r7gd.4xlarge, arm64)"},
		},
		"FamilyWins": {
			reason: "The r6i family is amd64: it decides, and the arm64 field is reported as overridden.",
			xr:     xpool("burst", "pools", pool("  instanceConfig: {instanceFamily: r6i, architecture: arm64}\n")), qss: []string{plain},
			want: want{Arch: "amd64", From: "spec.instanceConfig.instanceFamily r6i", Warnings: []string{"ArchitectureOverridden"}},
		},
		"QueryServicesDisagree": {
			reason: "team-a/analytics declares arm64 and decides (first by namespace); team-b/reporting declares amd64 and is reported.",
			xr:     xpool("burst", "pools", pool("")),
			qss: []string{qsWith("analytics", "team-a", "2", "4Gi", "    nodeSelector: {kubernetes.io/arch: arm64}\n"),
				qsWith("reporting", "team-b", "2", "4Gi", "    nodeSelector: {kubernetes.io/arch: amd64}\n")},
			want: want{Arch: "arm64", From: "QueryService team-a/analytics (executor nodeSelector kubernetes.io/arch=arm64)", Warnings: []string{"ArchitectureConflict"}},
		},
		"ExecutorsRanOnArm64": {
			reason: "Executors have run on c7g.xlarge (arm64) and nothing declares an arch: the pool stays arm64 rather than moving to amd64.",
			xr:     withStatus(xpool("burst", "pools", pool("")), "  derivedInstanceType: c7g.xlarge\n  sizing: {executorsHaveRun: true}\n"), qss: []string{plain},
			want: want{Arch: "arm64", From: "the previous type c7g.xlarge, which executors have run on"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{XR: tc.xr, QueryServices: tc.qss, CRDs: awsCRDs, Catalog: true}.run(t)
			sz, _ := status(rsp)["sizing"].(map[string]any)
			got := want{}
			got.Arch, _ = sz["architecture"].(string)
			got.From, _ = sz["architectureFrom"].(string)
			for _, r := range results(rsp) {
				if strings.HasPrefix(r, "WARNING Architecture") {
					got.Warnings = append(got.Warnings, strings.TrimPrefix(strings.SplitN(r, ":", 2)[0], "WARNING "))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool", tc.reason)
			}
			for _, r := range np.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["requirements"].([]any) {
				m := r.(map[string]any)
				if m["key"] == objects.LabelArch && !cmp.Equal(m["values"], []any{tc.want.Arch}) {
					t.Errorf("%s\nNodePool arch requirement %v, want %s", tc.reason, m["values"], tc.want.Arch)
				}
			}
		})
	}
}
