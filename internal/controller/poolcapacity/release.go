package poolcapacity

import (
	"context"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func releasesExecutors(_ target, _ *v1alpha1.PoolCapacity, p *planned) bool {
	return p.plan.Release != nil
}

// releaseExecutors releases the executors the plan lets go from the
// executor gate.
func releaseExecutors(ctx context.Context, t target, _ *v1alpha1.PoolCapacity, p *planned) []error {
	return release(ctx, t.client, p.plan.Release, p.now)
}

// bufferPoll is how often a release waiting for the buffer's autoscaler
// reads the buffer.
const bufferPoll = 50 * time.Millisecond

// bufferSeen reports whether the autoscaler has seen the buffer at b's
// replicas or fewer: the buffer's status.replicas, which the autoscaler
// writes from the spec it provisions for (Karpenter v1.14.1
// pkg/controllers/capacitybuffer/controller.go sets it in the reconcile
// that refreshes the buffer's virtual pods). A buffer that is gone holds
// nothing to wait for.
func bufferSeen(ctx context.Context, c client.Client, b capacity.BufferScale) (bool, error) {
	u, err := getBuffer(ctx, c, b)
	if kerrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	n, ok, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	return ok && n <= int64(b.Replicas), nil
}

// release removes the gate from the executors r lists: at once those it
// releases now, and the buffered ones once the buffer's autoscaler has
// seen their count, or at r.Until. It waits in the reconcile: the wait is
// the autoscaler's reaction to one spec change, normally milliseconds,
// and ExecutorGateBound at most.
func release(ctx context.Context, c client.Client, r *capacity.Release, now time.Time) []error {
	var errs []error
	for _, u := range r.Now {
		if _, err := ungatePod(ctx, c, u); err != nil {
			errs = append(errs, err)
		}
	}
	if len(r.Buffered) == 0 || r.Buffer == nil {
		return errs
	}
	limit := min(max(r.Until.Sub(now), 0), capacity.ExecutorGateBound)
	var last error
	seen := func(ctx context.Context) (bool, error) {
		ok, err := bufferSeen(ctx, c, *r.Buffer)
		last = err
		return ok, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, bufferPoll, limit, true, seen); err != nil && last != nil {
		errs = append(errs, last)
	}
	for _, u := range r.Buffered {
		if _, err := ungatePod(ctx, c, u); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
