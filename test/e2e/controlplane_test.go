package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// A NodePool that allows the two instance types of
// testdata/instance_types.json and removes empty nodes at once, and its
// KWOKNodeClass.
const nodePool = `
apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: e2e
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: e2e
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.kwok.sh
        kind: KWOKNodeClass
        name: e2e
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [bp-2x-amd64-linux, bp-4x-amd64-linux]
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 0s
`

// A pod that fits only on a new node.
const pendingPod = `
apiVersion: v1
kind: Pod
metadata:
  name: e2e-burst
  namespace: default
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    resources:
      requests:
        cpu: "1"
        memory: 1Gi
`

// TestControlPlane proves the path burstpool relies on: a pending pod makes
// Karpenter (kwok provider, instance types from a file) create a NodeClaim,
// the Node registers and becomes Ready under kwok, kube-scheduler binds the
// pod and kwok runs it; once the pod is gone, Karpenter removes the empty
// node.
func TestControlPlane(t *testing.T) {
	t.Parallel()
	instanceTypes, err := filepath.Abs(filepath.Join("testdata", "instance_types.json"))
	if err != nil {
		t.Fatal(err)
	}
	cp := controlPlane(t, func(c *localcp.Config) {
		c.SkipCrossplane = true
		c.InstanceTypesFile = instanceTypes
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// Pods need the default ServiceAccount, which the controller manager makes.
	eventually(t, waitReconcile, "ServiceAccount default/default", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, err
	})

	start := time.Now()
	if err := localcp.Apply(t.Context(), cp.Config, []byte(nodePool)); err != nil {
		t.Fatal(err)
	}
	if err := localcp.Apply(t.Context(), cp.Config, []byte(pendingPod)); err != nil {
		t.Fatal(err)
	}

	var claim string
	d := eventually(t, waitReconcile, "Karpenter creates a NodeClaim", func(ctx context.Context) (bool, error) {
		l := list(ctx, c, "karpenter.sh/v1", "NodeClaimList")
		if len(l) == 0 {
			return false, nil
		}
		claim = l[0].GetName()
		return true, nil
	})
	t.Logf("NodePool -> NodeClaim %s: %s", claim, d.Round(10*time.Millisecond))

	var node string
	eventually(t, waitReconcile, "a Node for NodeClaim "+claim+" is Ready", func(ctx context.Context) (bool, error) {
		nodes := &corev1.NodeList{}
		if err := c.List(ctx, nodes, client.MatchingLabels{"karpenter.sh/nodepool": "e2e"}); err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			for _, cd := range n.Status.Conditions {
				if cd.Type == corev1.NodeReady && cd.Status == corev1.ConditionTrue {
					node = n.Name
					return true, nil
				}
			}
		}
		return false, nil
	})
	t.Logf("NodePool -> Node %s Ready: %s", node, time.Since(start).Round(10*time.Millisecond))

	pod := &corev1.Pod{}
	eventually(t, waitReconcile, "pod default/e2e-burst is Running", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "e2e-burst"}, pod); err != nil {
			return false, err
		}
		return pod.Status.Phase == corev1.PodRunning, nil
	})
	t.Logf("pod -> Running on %s: %s", pod.Spec.NodeName, time.Since(start).Round(10*time.Millisecond))
	if pod.Spec.NodeName != node {
		t.Errorf("pod runs on %q, want the new node %q", pod.Spec.NodeName, node)
	}
	n := &corev1.Node{}
	if err := c.Get(t.Context(), types.NamespacedName{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	if it := n.Labels[corev1.LabelInstanceTypeStable]; it != "bp-2x-amd64-linux" {
		t.Errorf("node %s has instance type %q, want the cheapest that fits, bp-2x-amd64-linux", node, it)
	}
	logUsage(t, cp)

	// The empty node goes away: consolidateAfter is 0s.
	if err := c.Delete(t.Context(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	d = eventually(t, waitEmptyNode, "Karpenter removes the empty NodeClaim "+claim, func(ctx context.Context) (bool, error) {
		nc := &unstructured.Unstructured{}
		nc.SetAPIVersion("karpenter.sh/v1")
		nc.SetKind("NodeClaim")
		err := c.Get(ctx, types.NamespacedName{Name: claim}, nc)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	t.Logf("pod deleted -> NodeClaim removed: %s", d.Round(10*time.Millisecond))
	eventually(t, waitQuick, "Node "+node+" is removed", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Name: node}, &corev1.Node{})
		return apierrors.IsNotFound(err), nil
	})
}

// list lists objects of an unstructured list kind, nil on error.
func list(ctx context.Context, c client.Client, apiVersion, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind)
	if err := c.List(ctx, l); err != nil {
		return nil
	}
	return l.Items
}
