package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// lunchSpec is basicSpec (2 warm, 8 at most) with a window that keeps 6
// warm from 13:00 to 13:30 UTC every day; the test clock reads 12:00.
const lunchSpec = basicSpec + `  warmPolicy:
    type: Scheduled
    windows:
    - {name: lunch, schedule: "0 13 * * *", duration: 30m, executors: 6}
`

// warmSeen is what a response says of the warm level.
type warmSeen struct {
	// Cache is how the decision cache answered.
	Cache string
	// Placeholders are the placeholder Deployment's replicas; Slots the
	// PoolCapacity's spec.forProvider.warmSlots.slots.
	Placeholders, Slots int64
	// Executors, Source and Until are status.warmPolicy's.
	Executors     int64
	Source, Until string
	// TTL is the response's: when Crossplane comes back.
	TTL time.Duration
}

func seeWarm(rsp *fnv1.RunFunctionResponse, cache string) warmSeen {
	wp, _ := status(rsp)["warmPolicy"].(map[string]any)
	s := warmSeen{Cache: cache, TTL: rsp.GetMeta().GetTtl().AsDuration(),
		Placeholders: nestedNumber(desired(rsp, "placeholder").Object, "spec", "replicas"),
		Slots:        nestedNumber(desired(rsp, "capacity").Object, "spec", "forProvider", "warmSlots", "slots"),
		Executors:    nestedNumber(wp, "executors")}
	s.Source, _ = wp["source"].(string)
	s.Until, _ = wp["until"].(string)
	return s
}

// TestWarmWindowBoundary follows a settled Scheduled pool (one executor
// running) across its window's lead and close through the decision cache,
// as Crossplane's polls would: until the lead before the window opens the
// kept response is served, asking Crossplane back at the lead; from the
// lead, a fresh decision raises the placeholders and the PoolCapacity's
// warm slots before the window opens; once it closes, another lowers them
// again. A kept response is never served across a boundary.
func TestWarmWindowBoundary(t *testing.T) {
	req := settled(t, scenario{XR: xpool("burst", "pools", lunchSpec), QueryServices: allQS, CRDs: kwokCRDs}, nil)
	f := &Function{size: fakeSize, decisions: newDecisionCache(16, 64<<20)}
	lead := now.Add(58 * time.Minute)
	steps := []struct {
		reason string
		at     time.Time
		want   warmSeen
	}{{
		reason: "Decided at 12:00: 2 warm (1 placeholder beside the running executor) until the lead before the window, 12:58.",
		at:     now,
		want:   warmSeen{Cache: "miss", Placeholders: 1, Slots: 2, Executors: 2, Source: "MinExecutors", Until: "2026-11-22T12:58:00Z", TTL: time.Minute},
	}, {
		reason: "Polled at 12:57:30: the kept response holds, and asks Crossplane back at 12:58, not a minute later.",
		at:     lead.Add(-30 * time.Second),
		want:   warmSeen{Cache: "hit", Placeholders: 1, Slots: 2, Executors: 2, Source: "MinExecutors", Until: "2026-11-22T12:58:00Z", TTL: 30 * time.Second},
	}, {
		reason: "At 12:58 the window is within the lead: decided afresh, 6 warm, 2 minutes before it opens.",
		at:     lead,
		want:   warmSeen{Cache: "miss", Placeholders: 5, Slots: 6, Executors: 6, Source: "Window", Until: "2026-11-22T13:30:00Z", TTL: time.Minute},
	}, {
		reason: "Polled inside the window: the kept response holds.",
		at:     now.Add(75 * time.Minute),
		want:   warmSeen{Cache: "hit", Placeholders: 5, Slots: 6, Executors: 6, Source: "Window", Until: "2026-11-22T13:30:00Z", TTL: time.Minute},
	}, {
		reason: "At 13:30 the window closes: decided afresh, back to 2 until tomorrow's lead.",
		at:     now.Add(90 * time.Minute),
		want:   warmSeen{Cache: "miss", Placeholders: 1, Slots: 2, Executors: 2, Source: "MinExecutors", Until: "2026-11-23T12:58:00Z", TTL: time.Minute},
	}}
	for _, s := range steps {
		rsp, cache := decisionOf(t, f, proto.Clone(req).(*fnv1.RunFunctionRequest), s.at)
		if diff := cmp.Diff(s.want, seeWarm(rsp, cache)); diff != "" {
			t.Errorf("%s\n-want, +got:\n%s", s.reason, diff)
		}
	}
}

// learnedSpec is basicSpec (2 warm, 8 at most) under a Learned policy.
const learnedSpec = basicSpec + `  warmPolicy:
    type: Learned
`

// TestLearnedWarmLevel settles a Learned pool whose PoolCapacity carries
// the provider's recommendation, under settings that cap learned levels,
// and checks that the PoolCapacity asks for the level with the settings'
// target, lead and caps, that the recommendation reaches the placeholders
// and the warm slots, bounded by the settings' maxSlots, and that the
// status says so, with the slots' cost and when the level is revised.
func TestLearnedWarmLevel(t *testing.T) {
	env := []string{environmentConfig("burstpool", "  warmPolicy:\n    leadTime: 3m\n    learned: {maxSlots: 5, maxDollarsPerHour: \"10\"}\n")}
	revised := now.Add(15 * time.Minute).Format(time.RFC3339)
	req := settled(t, scenario{XR: xpool("burst", "pools", learnedSpec), QueryServices: allQS, CRDs: kwokCRDs, Environment: env}, func(n string, u *unstructured.Unstructured) map[string]any {
		if n != "capacity" {
			return nil
		}
		st := healthy(1, 2)(n, u)
		st["atProvider"].(map[string]any)["warmRecommendation"] = map[string]any{
			"executors": int64(7), "until": revised, "reason": "Mondays at noon want 7", "expectedWarmPercent": int64(93), "dollarsPerHour": "3.5", "weeks": int64(4),
		}
		st["atProvider"].(map[string]any)["cost"] = map[string]any{"accountedUntil": revised, "since": revised, "dollarsPerHour": "1", "dollars": "0", "nodeSeconds": "0",
			"byNodeType": []any{map[string]any{"instanceType": "m-16x-amd64-linux", "capacityType": "on-demand", "pricePerHour": "0.5", "nodes": "2", "dollarsPerHour": "1", "nodeSeconds": "0", "dollars": "0"}}}
		return st
	})
	rsp, _ := (&Function{now: func() time.Time { return now }, size: fakeSize}).compose(proto.Clone(req).(*fnv1.RunFunctionRequest), now)
	if got, want := seeWarm(rsp, ""), (warmSeen{Placeholders: 4, Slots: 5, Executors: 5, Source: "Learned", Until: revised, TTL: time.Minute}); got != want {
		t.Errorf("a recommendation of 7 under maxSlots 5, one executor running: -want, +got:\n%s", cmp.Diff(want, got))
	}
	goal, _, _ := unstructured.NestedMap(desired(rsp, "capacity").Object, "spec", "forProvider", "warmPolicy", "learned")
	if diff := cmp.Diff(map[string]any{"targetWarmPercent": float64(90), "lead": "3m0s", "maxSlots": float64(5), "maxDollarsPerHour": "10"}, goal); diff != "" {
		t.Errorf("the PoolCapacity asks for a learned level with the settings' default target, lead and caps: -want, +got:\n%s", diff)
	}
	wp := status(rsp)["warmPolicy"].(map[string]any)
	if got, want := wp["dollarsPerHour"], "2.5"; got != want {
		t.Errorf("status.warmPolicy.dollarsPerHour = %v, want %s: 5 slots of a $0.50 node each", got, want)
	}
	if r, _ := wp["reason"].(string); !strings.Contains(r, "Mondays at noon want 7") || !strings.Contains(r, "maxSlots (5)") {
		t.Errorf("status.warmPolicy.reason %q does not say what the history says and which cap bound it", r)
	}
}

// TestCapacityDocWarmSettings runs the warm policy settings that
// docs/capacity.md shows: they are valid, and at 10:00 in Berlin on a
// Monday the class's business hours hold a Scheduled pool of an analytics
// namespace at their 8 executors.
func TestCapacityDocWarmSettings(t *testing.T) {
	const marker = "# EnvironmentConfig burstpool, data:\nwarmPolicy:\n"
	_, block, ok := strings.Cut(readFile(t, "../../docs/capacity.md"), marker)
	if !ok {
		t.Fatal("docs/capacity.md shows no warmPolicy settings")
	}
	block, _, _ = strings.Cut(block, "```")
	data := indent("warmPolicy:\n" + block + attachAnywhere)
	spec := basicSpec + "  warmPolicy:\n    type: Scheduled\n    windows:\n    - {name: nightly-etl, schedule: \"30 1 * * *\", duration: 2h, executors: 4}\n"
	s := scenario{XR: xpool("burst", "analytics-eu", spec), QueryServices: allQS, CRDs: kwokCRDs, Environment: []string{environmentConfig("burstpool", data)}}
	monday := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	rsp, _ := (&Function{now: func() time.Time { return monday }, size: fakeSize}).compose(s.request(t), monday)
	if msg, _ := status(rsp)["message"].(string); strings.Contains(msg, "EnvironmentConfig") {
		t.Fatalf("the settings docs/capacity.md shows are refused: %s", msg)
	}
	wp, _ := status(rsp)["warmPolicy"].(map[string]any)
	if wp["executors"] != float64(8) || wp["source"] != "Window" || !strings.Contains(fmt.Sprint(wp["reason"]), "platform/business-hours") {
		t.Errorf("status.warmPolicy %v, want 8 executors from the class's window platform/business-hours", wp)
	}
}

// TestInvalidWindowKeepsLevel settles a pool inside its window (6 warm),
// then changes its window to a schedule no cron parser takes, which the
// API's field-count check lets through: the claim is told what to fix (a
// False WarmPolicy condition and a warning event naming the window), the
// warm level stays at 6, and every object the pool composed stays
// composed.
func TestInvalidWindowKeepsLevel(t *testing.T) {
	inside := now.Add(65 * time.Minute) // 13:05, inside lunch
	pool := scenario{XR: xpool("burst", "pools", lunchSpec), QueryServices: allQS, CRDs: kwokCRDs}
	f := &Function{now: func() time.Time { return inside }, size: fakeSize}
	first, _ := f.compose(pool.request(t), inside)
	pool.Observed = observe(t, first, healthy(1, 2))
	req := pool.request(t)
	req.Observed.Composite.Resource.Fields["status"] = first.GetDesired().GetComposite().GetResource().GetFields()["status"]
	if got := seeWarm(first, ""); got.Executors != 6 {
		t.Fatalf("inside the window the level is %d, want 6: %+v", got.Executors, got)
	}
	structAt(req.Observed.Composite.Resource, "spec", "warmPolicy").Fields["windows"].GetListValue().GetValues()[0].GetStructValue().Fields["schedule"] = structpb.NewStringValue("0 25 * * *")

	rsp, _ := f.compose(req, inside)
	if got := conditions(rsp)[decision.CondWarmPolicy]; got != "FALSE/"+decision.ReasonInvalidWarmPolicy {
		t.Errorf("condition WarmPolicy %s, want FALSE/%s", got, decision.ReasonInvalidWarmPolicy)
	}
	if got := strings.Join(results(rsp), "\n"); !strings.Contains(got, "WARNING "+decision.ReasonInvalidWarmPolicy) || !strings.Contains(got, `window "lunch"`) || !strings.Contains(got, "0 25 * * *") {
		t.Errorf("events do not name the window and its schedule:\n%s", got)
	}
	if got := seeWarm(rsp, ""); got.Executors != 6 || got.Placeholders != 5 || got.Slots != 6 {
		t.Errorf("the refused window's pool holds %+v, want the level it had: 6 (5 placeholders beside the running executor)", got)
	}
	if got, want := desiredNames(rsp), desiredNames(first); !cmp.Equal(got, want) {
		t.Errorf("composed %v after the refusal, %v before it", got, want)
	}
}
