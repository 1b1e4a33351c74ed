package failsafe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	b := Bounds{Gate: 30 * time.Second, Grace: 30 * time.Second, OpenAfter: 5 * time.Minute}
	const gate, key = "e6data.io/pool-slot", "e6data.io/warming"
	warming := corev1.Taint{Key: key, Value: "p", Effect: corev1.TaintEffectNoSchedule}
	poolTaint := corev1.Taint{Key: "e6data.io/pool", Value: "p", Effect: corev1.TaintEffectNoSchedule}
	sel := map[string]string{"e6data.io/pool": "p"}
	pool := Pool{Name: "p-capacity", Taint: warming, NodeSelector: sel, OpenAfter: time.Minute}
	pod := func(name string, created time.Duration, gates ...string) Pod {
		return Pod{Namespace: "ws", Name: name, Gates: gates, Created: ago(created)}
	}
	node := func(name string, created time.Duration, ready bool, labels map[string]string, taints ...corev1.Taint) Node {
		return Node{Name: name, Labels: labels, Taints: taints, Created: ago(created), Ready: ready}
	}

	cases := map[string]struct {
		reason string
		// up: a provider replica renews the Lease.
		up    bool
		pods  []Pod
		nodes []Node
		pools []Pool
		want  Plan
	}{
		"WithinTheGateBound": {
			reason: "an executor gated for less than the bound is the provider's to release",
			pods:   []Pod{pod("young", 29*time.Second, gate)},
		},
		"PastTheGateBound": {
			reason: "an executor gated past the bound loses the executor gate and keeps any other",
			pods:   []Pod{pod("old", 31*time.Second, "other", gate)},
			want:   Plan{Release: []Release{{Pod: pod("old", 31*time.Second, "other", gate), Gates: []string{"other"}, Waited: 31 * time.Second}}},
		},
		"ProviderUp": {
			reason: "while the provider leads, the gate is its own: it holds executors above their share as long as the share is taken",
			up:     true,
			pods:   []Pod{pod("held", time.Hour, gate)},
		},
		"ProviderUpNodeOverdue": {
			reason: "a node past openAfter is one the provider missed, whether it leads or not",
			up:     true,
			nodes:  []Node{node("n1", 91*time.Second, true, sel, warming)},
			pools:  []Pool{pool},
			want: Plan{Open: []Open{{Node: node("n1", 91*time.Second, true, sel, warming), Taints: []corev1.Taint{},
				Waited: 91 * time.Second, Pool: "p-capacity"}}},
		},
		"OtherGatesOnly": {
			reason: "a placeholder's warm-slot gate (or any other) is not the fail-safe's",
			pods:   []Pod{pod("placeholder", time.Hour, "e6data.io/warm-slot")},
		},
		"BoundOrDeleting": {
			reason: "a pod bound to a node, or being deleted, is left alone",
			pods: []Pod{
				{Namespace: "ws", Name: "bound", Gates: []string{gate}, NodeName: "n", Created: ago(time.Hour)},
				{Namespace: "ws", Name: "deleting", Gates: []string{gate}, Deleting: true, Created: ago(time.Hour)},
			},
		},
		"NodeWithinOpenAfterAndGrace": {
			reason: "a pool node warming for less than its pool's openAfter plus the grace stays closed",
			nodes:  []Node{node("n1", 89*time.Second, true, sel, poolTaint, warming)},
			pools:  []Pool{pool},
		},
		"NodePastOpenAfterAndGrace": {
			reason: "past them, the startup taint goes and the pool's own taint stays",
			nodes:  []Node{node("n1", 91*time.Second, true, sel, poolTaint, warming)},
			pools:  []Pool{pool},
			want: Plan{Open: []Open{{Node: node("n1", 91*time.Second, true, sel, poolTaint, warming), Taints: []corev1.Taint{poolTaint},
				Waited: 91 * time.Second, Pool: "p-capacity"}}},
		},
		"NodeNotReady": {
			reason: "a node not Ready could run no executor; the provider waits for it too",
			nodes:  []Node{node("n1", time.Hour, false, sel, warming)},
			pools:  []Pool{pool},
		},
		"NoPoolClaimsTheNode": {
			reason: "a node no PoolCapacity claims (a workload cluster's) opens after the default openAfter plus the grace",
			nodes: []Node{
				node("young", 5*time.Minute+29*time.Second, true, sel, warming),
				node("old", 5*time.Minute+31*time.Second, true, sel, warming),
			},
			want: Plan{Open: []Open{{Node: node("old", 5*time.Minute+31*time.Second, true, sel, warming), Taints: []corev1.Taint{}, Waited: 5*time.Minute + 31*time.Second}}},
		},
		"AnotherPoolsTaint": {
			reason: "a pool's openAfter applies only to nodes its selector finds",
			nodes:  []Node{node("n1", 2*time.Minute, true, map[string]string{"e6data.io/pool": "q"}, warming)},
			pools:  []Pool{pool},
		},
		"ShortestOpenAfterWins": {
			reason: "with two pools claiming a node, the shorter openAfter applies",
			nodes:  []Node{node("n1", 91*time.Second, true, sel, warming)},
			pools:  []Pool{{Name: "long", Taint: warming, NodeSelector: sel, OpenAfter: time.Hour}, pool},
			want: Plan{Open: []Open{{Node: node("n1", 91*time.Second, true, sel, warming), Taints: []corev1.Taint{},
				Waited: 91 * time.Second, Pool: "p-capacity"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Decide(now, b, !tc.up, gate, key, tc.pods, tc.nodes, tc.pools)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDecide: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestProviderDown(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason  string
		renewed time.Time
		want    bool
	}{
		"NoLease":  {reason: "no Lease: no provider ever led here", want: true},
		"Renewed":  {reason: "renewed within the silence: a replica leads", renewed: now.Add(-5 * time.Second), want: false},
		"Takeover": {reason: "a standby takes a killed leader's Lease within 13 s: still within the silence", renewed: now.Add(-13 * time.Second), want: false},
		"Silent":   {reason: "not renewed for longer than the silence: every replica is down", renewed: now.Add(-21 * time.Second), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ProviderDown(now, tc.renewed, 20*time.Second); got != tc.want {
				t.Errorf("%s\nProviderDown: got %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
