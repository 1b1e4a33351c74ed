package capacity

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type snapshotView struct {
	Pods  []string
	Nodes []string
	Gone  []string
}

func view(s Snapshot, names ...string) snapshotView {
	var v snapshotView
	for _, p := range s.AllPods() {
		v.Pods = append(v.Pods, fmt.Sprintf("%s:%s/%s:%s:%s", p.Pool, p.Namespace, p.Name, p.State, p.NodeName))
	}
	for _, n := range s.AllNodes() {
		v.Nodes = append(v.Nodes, fmt.Sprintf("%s:%s:%t", n.Pool, n.Name, n.Ready))
	}
	for _, n := range names {
		if s.NodeGone(n) {
			v.Gone = append(v.Gone, n)
		}
	}
	return v
}

func TestSnapshot(t *testing.T) {
	base := NewSnapshot(
		[]*Pod{executor("a", "e1", "p1", "qs"), executor("a", "e2", "p2", "qs")},
		[]*Node{node("n1", "p1", true), node("n2", "p2", true)},
	)
	cases := map[string]struct {
		reason string
		change func(Snapshot) Snapshot
		want   snapshotView
	}{
		"UpdateAddsPod": {
			reason: "WithUpdate adds a pod that is not there yet.",
			change: func(s Snapshot) Snapshot { return s.WithUpdate(executor("a", "e3", "p1", "qs")) },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Pending:", "p1:a/e3:Pending:", "p2:a/e2:Pending:"},
				Nodes: []string{"p1:n1:true", "p2:n2:true"},
			},
		},
		"UpdateReplacesPod": {
			reason: "WithUpdate replaces the pod with the same key.",
			change: func(s Snapshot) Snapshot { return s.WithUpdate(executor("a", "e1", "p1", "qs", running("n1"))) },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Running:n1", "p2:a/e2:Pending:"},
				Nodes: []string{"p1:n1:true", "p2:n2:true"},
			},
		},
		"UpdateMovesPodToAnotherPool": {
			reason: "A pod whose pool label changes leaves its old pool.",
			change: func(s Snapshot) Snapshot { return s.WithUpdate(executor("a", "e1", "p2", "qs")) },
			want: snapshotView{
				Pods:  []string{"p2:a/e1:Pending:", "p2:a/e2:Pending:"},
				Nodes: []string{"p1:n1:true", "p2:n2:true"},
			},
		},
		"WithoutPod": {
			reason: "WithoutPod removes the pod by key, whatever its pool.",
			change: func(s Snapshot) Snapshot { return s.WithoutPod(PodKey{"a", "e2"}) },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Pending:"},
				Nodes: []string{"p1:n1:true", "p2:n2:true"},
			},
		},
		"WithoutMissingPod": {
			reason: "Removing a pod that is not there changes nothing.",
			change: func(s Snapshot) Snapshot { return s.WithoutPod(PodKey{"a", "nope"}) },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Pending:", "p2:a/e2:Pending:"},
				Nodes: []string{"p1:n1:true", "p2:n2:true"},
			},
		},
		"WithoutNodeRemembersIt": {
			reason: "A deleted node is remembered as gone.",
			change: func(s Snapshot) Snapshot { return s.WithoutNode("n1") },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Pending:", "p2:a/e2:Pending:"},
				Nodes: []string{"p2:n2:true"},
				Gone:  []string{"n1"},
			},
		},
		"NodeComesBack": {
			reason: "A node that comes back is no longer gone.",
			change: func(s Snapshot) Snapshot { return s.WithoutNode("n1").WithNode(node("n1", "p1", false)) },
			want: snapshotView{
				Pods:  []string{"p1:a/e1:Pending:", "p2:a/e2:Pending:"},
				Nodes: []string{"p1:n1:false", "p2:n2:true"},
			},
		},
		"ReplacedRemembersMissingNodes": {
			reason: "A relist that lacks a node remembers it as gone.",
			change: func(s Snapshot) Snapshot {
				return s.Replaced(List{Pods: []*Pod{executor("a", "e9", "p1", "qs")}, Nodes: []*Node{node("n2", "p2", true)}})
			},
			want: snapshotView{
				Pods:  []string{"p1:a/e9:Pending:"},
				Nodes: []string{"p2:n2:true"},
				Gone:  []string{"n1"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := view(base, "n1", "n2")
			got := view(tc.change(base), "n1", "n2")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, view(base, "n1", "n2")); diff != "" {
				t.Errorf("%s\nthe original snapshot changed: -before, +after:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEventsAndRelistConverge applies a random stream of events one batch at
// a time and checks that the result equals a relist of the final objects.
func TestEventsAndRelistConverge(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	st := NewStore()
	pods := map[PodKey]*Pod{}
	nodes := map[string]*Node{}
	for batch := 0; batch < 200; batch++ {
		var events []Event
		for i := 0; i < 1+rng.Intn(20); i++ {
			pool := fmt.Sprintf("p%d", rng.Intn(4))
			switch r := rng.Intn(10); {
			case r < 5:
				p := executor("ns", fmt.Sprintf("e%d", rng.Intn(60)), pool, "qs", state(PodState(rng.Intn(6))))
				pods[p.Key()] = p
				events = append(events, Event{Pod: p})
			case r < 7:
				k := PodKey{"ns", fmt.Sprintf("e%d", rng.Intn(60))}
				delete(pods, k)
				events = append(events, Event{Pod: &Pod{Namespace: k.Namespace, Name: k.Name}, Deleted: true})
			case r < 9:
				n := node(fmt.Sprintf("n%d", rng.Intn(15)), pool, rng.Intn(2) == 0)
				nodes[n.Name] = n
				events = append(events, Event{Node: n})
			default:
				name := fmt.Sprintf("n%d", rng.Intn(15))
				delete(nodes, name)
				events = append(events, Event{Node: &Node{Name: name}, Deleted: true})
			}
		}
		st.Apply(events)
	}
	var lp []*Pod
	for _, p := range pods {
		lp = append(lp, p)
	}
	var ln []*Node
	for _, n := range nodes {
		ln = append(ln, n)
	}
	var names []string
	for i := 0; i < 15; i++ {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	relisted := NewSnapshot(nil, nil).Replaced(List{Pods: lp, Nodes: ln})
	want, got := view(relisted, names...), view(st.Current(), names...)
	want.Gone, got.Gone = nil, nil // a fresh relist has no history of deleted nodes
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events and a relist of the same objects disagree: -relist, +events:\n%s", diff)
	}

	// Replacing the evented snapshot wholesale with the same objects changes
	// nothing either.
	st.Replace(List{Pods: lp, Nodes: ln})
	if diff := cmp.Diff(view(st.Current(), names...), view(st.Current().Replaced(List{Pods: lp, Nodes: ln}), names...)); diff != "" {
		t.Errorf("a second relist changed the snapshot:\n%s", diff)
	}
}

func TestStoreNotifiesTouchedPools(t *testing.T) {
	st := NewStore()
	var got [][]string
	st.Subscribe(func(_ Snapshot, pools []string) { got = append(got, pools) })
	st.Apply([]Event{{Pod: executor("a", "e1", "p1", "qs")}, {Node: node("n1", "p2", true)}})
	st.Apply([]Event{{Pod: executor("a", "e1", "p3", "qs")}})
	st.Replace(List{})
	want := [][]string{{"p1", "p2"}, {"p1", "p3"}, {"p2", "p3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscribers should hear the pools each commit touched: -want, +got:\n%s", diff)
	}
}

// TestConcurrentReadersAndWriters reads snapshots and derives new ones while
// the store commits batches; run with -race.
func TestConcurrentReadersAndWriters(t *testing.T) {
	st := NewStore()
	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				s := st.Current()
				n := 0
				s.Pods("p1", func(*Pod) bool { n++; return true })
				_ = s.WithUpdate(executor("x", "reader", "p1", "qs"))
			}
		}()
	}
	for i := 0; i < 300; i++ {
		st.Apply([]Event{{Pod: executor("a", fmt.Sprintf("e%d", i%50), "p1", "qs")}, {Node: node(fmt.Sprintf("n%d", i%7), "p1", true)}})
	}
	close(done)
	readers.Wait()
	if pods, nodes := st.Current().Len(); pods != 50 || nodes != 7 {
		t.Errorf("store holds %d pods and %d nodes, want 50 and 7", pods, nodes)
	}
}
