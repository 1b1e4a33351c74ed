package poolcapacity

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// TestExternalSharesConnectorState checks that a client Connect hands out
// shares the connector's state across reconciles: the eviction rate limit
// and the record of the last over-share evictions, which makes the next
// ones wait until the snapshot shows the previous ones gone.
func TestExternalSharesConnectorState(t *testing.T) {
	c := &connector{}
	c.evictions, c.shed, c.staleAfter = newEvictions(60, 10), newMemo[[]capacity.Eviction](), time.Minute
	cr := &v1alpha1.PoolCapacity{}
	cr.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	ext, err := c.Connect(t.Context(), cr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	e, ok := ext.(*external)
	if !ok {
		t.Fatalf("Connect returned %T, want *external", ext)
	}
	if e.shed != c.shed {
		t.Errorf("external.shed = %p, want the connector's %p", e.shed, c.shed)
	}
	if e.evictions != c.evictions || e.staleAfter != c.staleAfter {
		t.Errorf("external does not share the connector's evictions (%p, %s), want (%p, %s)", e.evictions, e.staleAfter, c.evictions, c.staleAfter)
	}
}
