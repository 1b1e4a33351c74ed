package capacity

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

type scale struct{ pods, nodes, pools int }

var ladder = []scale{
	{pods: 5000, nodes: 500, pools: 20},
	{pods: 20000, nodes: 2000, pools: 80},
	{pods: 50000, nodes: 5000, pools: 200},
}

// cluster returns pods and nodes spread evenly over pools; every pod runs on
// a node of its pool.
func cluster(rng *rand.Rand, s scale) ([]*Pod, []*Node) {
	nodes := make([]*Node, s.nodes)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("node-%05d", i), fmt.Sprintf("pool-%03d", i%s.pools), true)
	}
	pods := make([]*Pod, s.pools*0+s.pods)
	for i := range pods {
		n := nodes[rng.Intn(s.nodes/s.pools)*s.pools+i%s.pools]
		pods[i] = executor(fmt.Sprintf("qs-%02d", i%17), fmt.Sprintf("exec-%06d", i), n.Pool, fmt.Sprintf("qs-%02d", i%17), running(n.Name))
	}
	return pods, nodes
}

// BenchmarkApply measures the amortised cost of one pod event applied to a
// store in batches of 100, the way the watch feeds it.
func BenchmarkApply(b *testing.B) {
	const batch = 100
	for _, s := range ladder {
		b.Run(fmt.Sprintf("pods=%d/nodes=%d/pools=%d", s.pods, s.nodes, s.pools), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			pods, nodes := cluster(rng, s)
			st := NewStore()
			st.Replace(List{Pods: pods, Nodes: nodes})
			events := make([]Event, batch)
			b.ReportAllocs()
			b.ResetTimer()
			applied := 0
			for i := 0; i < b.N; i++ {
				for j := range events {
					old := pods[rng.Intn(len(pods))]
					p := *old
					p.State = PodState(rng.Intn(3))
					events[j] = Event{Pod: &p}
				}
				st.Apply(events)
				applied += batch
			}
			b.StopTimer()
			if got, _ := st.Current().Len(); got != s.pods {
				b.Fatalf("store holds %d pods after updates, want %d", got, s.pods)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(applied), "ns/event")
		})
	}
}

// BenchmarkCompute measures one pool's status recompute at 2,500 pods in a
// cluster of 50,000 pods, 5,000 nodes and 200 pools.
func BenchmarkCompute(b *testing.B) {
	for _, poolPods := range []int{250, 2500} {
		b.Run(fmt.Sprintf("poolPods=%d", poolPods), func(b *testing.B) {
			rng := rand.New(rand.NewSource(2))
			pods, nodes := cluster(rng, ladder[2])
			// Move the first poolPods pods into pool-000 on its 25 nodes.
			var big []*Node
			for _, n := range nodes {
				if n.Pool == "pool-000" {
					big = append(big, n)
				}
			}
			for i := 0; i < poolPods; i++ {
				p := *pods[i]
				p.Pool = "pool-000"
				p.Labels = map[string]string{}
				for k, v := range pods[i].Labels {
					p.Labels[k] = v
				}
				p.Labels[qsv1alpha1.LabelPool] = "pool-000"
				p.NodeName = big[i%len(big)].Name
				pods[i] = &p
			}
			snap := NewSnapshot(pods, nodes)
			want := 0
			snap.Pods("pool-000", func(*Pod) bool { want++; return true })
			spec := v1alpha1.PoolCapacityParameters{
				Pool:             v1alpha1.PoolRef{Name: "pool-000", Namespace: "a"},
				NodeSelector:     map[string]string{qsv1alpha1.LabelPool: "pool-000"},
				ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: "pool-000", qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
				ExecutorsPerNode: 200, MaxExecutors: 100000,
				// Every pool holds warm slots, here with a CapacityBuffer.
				WarmSlots: &v1alpha1.WarmSlots{
					Selector: map[string]string{qsv1alpha1.LabelPool: "pool-000", qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
					Gate:     qsv1alpha1.GateWarmSlot, Slots: 10,
					CapacityBuffer: &v1alpha1.WarmBuffer{Name: "pool-000-warm-slots", Holds: true},
				},
			}
			for i := 0; i < 17; i++ {
				spec.QueryServices = append(spec.QueryServices, v1alpha1.AttachedQueryService{Name: fmt.Sprintf("qs-%02d", i), Namespace: fmt.Sprintf("qs-%02d", i)})
			}
			now := time.Unix(1_800_000_000, 0)
			var prev v1alpha1.PoolCapacityObservation
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := Compute(spec, snap, prev, now)
				if int(res.Observation.OccupiedExecutors) != want {
					b.Fatalf("occupied = %d, want %d", res.Observation.OccupiedExecutors, want)
				}
				prev = res.Observation
			}
			b.ReportMetric(float64(want), "pods")
		})
	}
}

// BenchmarkReplace measures a relist replacing the snapshot wholesale.
func BenchmarkReplace(b *testing.B) {
	for _, s := range ladder {
		b.Run(fmt.Sprintf("pods=%d/nodes=%d/pools=%d", s.pods, s.nodes, s.pools), func(b *testing.B) {
			pods, nodes := cluster(rand.New(rand.NewSource(3)), s)
			st := NewStore()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st.Replace(List{Pods: pods, Nodes: nodes})
			}
			b.StopTimer()
			if got, n := st.Current().Len(); got != s.pods || n != s.nodes {
				b.Fatalf("store holds %d pods and %d nodes, want %d and %d", got, n, s.pods, s.nodes)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/relist")
		})
	}
}
