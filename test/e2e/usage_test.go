package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testUsageEnforced checks that the local control plane enforces
// Crossplane's Usages as a Helm install does: an object in use cannot be
// deleted while its user exists, and its deletion is replayed once the user
// is gone.
func testUsageEnforced(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	of := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-usage-of"}}
	by := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-usage-by"}}
	for _, o := range []client.Object{of, by} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(name string) map[string]any {
		return map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "resourceRef": map[string]any{"name": name}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage",
		"metadata": map[string]any{"name": "e2e-usage"},
		"spec":     map[string]any{"of": ref(of.Name), "by": ref(by.Name), "replayDeletion": true},
	}}
	if err := c.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	var refused error
	eventually(t, waitReconcile, "deleting a ClusterRole in use is refused", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(of), of); err != nil {
			return false, err
		}
		if of.Labels["crossplane.io/in-use"] != "true" {
			return false, fmt.Errorf("not labelled in use yet")
		}
		refused = c.Delete(ctx, of)
		return refused != nil, fmt.Errorf("deleted while in use")
	})
	if !strings.Contains(refused.Error(), "nousages.protection.crossplane.io") {
		t.Errorf("deletion refused, but not by Crossplane's Usage webhook: %v", refused)
	}
	t.Logf("deletion of an object in use refused: %v", refused)
	if err := c.Delete(ctx, by); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitReconcile, "the refused deletion is replayed once the user is gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(of), &rbacv1.ClusterRole{})
		return kerrors.IsNotFound(err), fmt.Errorf("still there: %v", err)
	})
}
