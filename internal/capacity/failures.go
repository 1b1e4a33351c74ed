package capacity

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// MaxFailures bounds status.atProvider.failures.
const MaxFailures = 20

// A failureKey identifies a failure record: one per pod, whatever its
// reason, so that a pod that fails again updates its record.
type failureKey struct{ namespace, pod string }

// A failureLog records the failures of the pool's executors in one count,
// against those the previous status lists.
type failureLog struct {
	prev map[failureKey]v1alpha1.Failure
	seen map[failureKey]struct{}
	// current are the failures of the pods counted, in pod order.
	current []v1alpha1.Failure
}

func newFailureLog(prev []v1alpha1.Failure) failureLog {
	l := failureLog{prev: make(map[failureKey]v1alpha1.Failure, len(prev)), seen: map[failureKey]struct{}{}}
	for _, f := range prev {
		l.prev[failureKey{f.Namespace, f.Pod}] = f
	}
	return l
}

// record records the failure d of executor p, and reports whether an
// earlier status already records it.
func (l *failureLog) record(p *Pod, d Diagnosis, now time.Time) bool {
	k := failureKey{p.Namespace, p.Name}
	if _, dup := l.seen[k]; dup {
		return false
	}
	l.seen[k] = struct{}{}
	// A failure is dated from the pod alone, never from the clock, so that
	// every reconcile dates and orders it the same way.
	f := v1alpha1.Failure{Pod: p.Name, Namespace: p.Namespace, QueryService: p.Labels[qsv1alpha1.LabelQueryService], Reason: d.Reason,
		ExitCode: d.ExitCode, Message: d.Message, At: metav1.NewTime(failedAt(d, p, now))}
	pf, recorded := l.prev[k]
	switch {
	case recorded && pf.Reason == d.Reason:
		f.At = pf.At
	case recorded && d.Reason == v1alpha1.FailureDisrupted:
		// Evicting or deleting a pod that had already failed (the
		// deleteFailedExecutors policy, pod garbage collection) is its
		// cleanup, not why it failed.
		f = pf
	}
	l.current = append(l.current, f)
	return recorded
}

// merged returns the current failures and the earlier ones whose pods are
// gone, newest first, at most MaxFailures. The order is total (time, then
// namespace and pod), so the same failures always list the same way.
func (l *failureLog) merged(prev []v1alpha1.Failure) []v1alpha1.Failure {
	out := slices.Clone(l.current)
	for _, f := range prev {
		if _, ok := l.seen[failureKey{f.Namespace, f.Pod}]; !ok {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.At.Equal(&b.At) {
			return a.At.After(b.At.Time)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Pod < b.Pod
	})
	if len(out) > MaxFailures {
		out = out[:MaxFailures]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// failedAt dates a failure: the container's finish time when its status has
// one, else the pod's latest condition change, else its start.
func failedAt(d Diagnosis, p *Pod, now time.Time) time.Time {
	for _, t := range []time.Time{d.At, p.Transitioned, p.Started} {
		if !t.IsZero() {
			return t.UTC().Truncate(time.Second)
		}
	}
	return now
}

// warmups tallies the pool's warmup pods: the images with a running
// warmup pod, and the images whose pulls fail.
type warmups struct {
	failing map[string]*warmTally
	ready   map[string]struct{}
}

type warmTally struct {
	reason, message string
	nodes           map[string]struct{}
}

func newWarmups() warmups {
	return warmups{failing: map[string]*warmTally{}, ready: map[string]struct{}{}}
}

// add accounts for one warmup pod.
func (w warmups) add(p *Pod) {
	if p.State == PodDeleted {
		return
	}
	for _, c := range p.Containers {
		if !IsImagePullError(c.WaitingReason) {
			continue
		}
		img := orDefault(p.Image, c.Image)
		t, ok := w.failing[img]
		if !ok {
			t = &warmTally{reason: c.WaitingReason, message: c.WaitingMessage, nodes: map[string]struct{}{}}
			w.failing[img] = t
		}
		if c.WaitingReason < t.reason {
			t.reason = c.WaitingReason
		}
		if c.WaitingMessage != "" && (t.message == "" || c.WaitingMessage < t.message) {
			t.message = c.WaitingMessage
		}
		t.nodes[orDefault(p.NodeName, p.Name)] = struct{}{}
		return
	}
	if p.State == PodRunning && p.Image != "" {
		w.ready[p.Image] = struct{}{}
	}
}

// failures lists one failure per image. The kubelet alternates a failing
// pull between ErrImagePull and ImagePullBackOff, with messages to match,
// so an image already listed keeps its reason and message for as long as
// it keeps failing; only the node count follows the pods.
func (w warmups) failures(prev []v1alpha1.WarmupFailure) []v1alpha1.WarmupFailure {
	if len(w.failing) == 0 {
		return nil
	}
	listed := make(map[string]v1alpha1.WarmupFailure, len(prev))
	for _, f := range prev {
		listed[f.Image] = f
	}
	out := make([]v1alpha1.WarmupFailure, 0, len(w.failing))
	for img, t := range w.failing {
		f := v1alpha1.WarmupFailure{Image: img, Reason: t.reason, Message: t.message, Nodes: int32(len(t.nodes))}
		if l, ok := listed[img]; ok {
			f.Reason, f.Message = l.Reason, l.Message
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out
}
