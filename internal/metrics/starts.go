package metrics

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// labelPlacement names the placement of an executor's start: existing_node
// or new_node.
const labelPlacement = "placement"

// starts exports each pool's status.atProvider.executorStarts as a
// histogram. Like the cost counters, it is the status's, so it goes on
// from where it was when the provider starts again.
type starts struct {
	seconds *prometheus.Desc

	mu   sync.Mutex
	last map[v1alpha1.PoolRef]*v1alpha1.ExecutorStarts
}

func newStarts() *starts {
	return &starts{
		seconds: prometheus.NewDesc("burstpool_executor_start_seconds",
			"Time from a pool executor's creation to its containers running, in seconds, by placement: existing_node (a node created before it: a warm slot or room on a used node) or new_node (a node launched for it).",
			[]string{labelPool, labelNamespace, labelPlacement}, nil),
		last: map[v1alpha1.PoolRef]*v1alpha1.ExecutorStarts{},
	}
}

// Describe sends the histogram's description.
func (s *starts) Describe(ch chan<- *prometheus.Desc) { ch <- s.seconds }

// Collect sends every pool's histograms.
func (s *starts) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, o := range s.last {
		for _, pl := range o.ByPlacement {
			buckets := make(map[float64]uint64, len(pl.Buckets))
			for _, b := range pl.Buckets {
				buckets[number(b.UpToSeconds)] = uint64(max(b.Count, 0))
			}
			ch <- prometheus.MustNewConstHistogram(s.seconds, uint64(max(pl.Count, 0)), number(pl.SumSeconds), buckets,
				p.Name, p.Namespace, placementLabel(pl.Placement))
		}
	}
}

// placementLabel is a placement as a label value: ExistingNode is
// existing_node.
func placementLabel(p v1alpha1.Placement) string {
	var b strings.Builder
	for i, r := range string(p) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}

func (s *starts) set(p v1alpha1.PoolRef, o *v1alpha1.ExecutorStarts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o == nil {
		delete(s.last, p)
		return
	}
	s.last[p] = o.DeepCopy()
}

// Starts sets the start-time histograms of the pool spec names from o,
// the PoolCapacity's status.atProvider.executorStarts (nil drops them).
func (m *Metrics) Starts(spec v1alpha1.PoolCapacityParameters, o *v1alpha1.ExecutorStarts) {
	m.starts.set(spec.Pool, o)
}
