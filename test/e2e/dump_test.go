package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// dumpKinds are what a failed scenario's dump holds, in its namespaces or,
// for cluster-scoped kinds, about its pools: the claims and their
// QueryServices, the composite, what the pool composes, the executors and
// placeholders, nodes, and events. A kind the cluster does not serve is
// left out.
var dumpKinds = []struct {
	apiVersion, kind string
	namespaced       bool
}{
	{claimAPI, "Pool", true},
	{claimAPI, "QueryService", true},
	{poolv1.CompositeGroupVersionKind.GroupVersion().String(), poolv1.CompositeKind, false},
	{karpenterAPI, "NodePool", false},
	{karpenterAPI, "NodeClaim", false},
	// The NodeClasses functions/pool-compose/objects builds.
	{"karpenter.kwok.sh/v1alpha1", "KWOKNodeClass", false},
	{"karpenter.k8s.aws/v1", "EC2NodeClass", false},
	{"eks.amazonaws.com/v1", "NodeClass", false},
	{"karpenter.k8s.gcp/v1alpha1", "GCENodeClass", false},
	{"karpenter.azure.com/v1beta1", "AKSNodeClass", false},
	// The cloud node groups and node pools of TestNodeGroupPool and
	// TestLinodePool, and the provider-kubernetes Objects through which
	// TestRemoteClusters' pools compose in their workload cluster.
	{"eks.aws.upbound.io/v1beta1", "NodeGroup", false},
	{"lke.linode.upbound.io/v1alpha1", "NodePool", false},
	{"kubernetes.crossplane.io/v1alpha2", "Object", false},
	{capacityAPI, "PoolCapacity", false},
	{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", false},
	{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", false},
	// The capacity provider's executor gate, and the pool's CapacityBuffer.
	{"admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", false},
	{"admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", false},
	{"autoscaling.x-k8s.io/v1beta1", "CapacityBuffer", true},
	{"apps/v1", "Deployment", true},
	{"apps/v1", "DaemonSet", true},
	{"apps/v1", "ReplicaSet", true},
	{"v1", "Pod", true},
	{"v1", "Node", false},
	{"v1", "Event", true},
}

// dump writes, under dir, one YAML file per kind (<kind>.yaml, lower case,
// objects separated by ---) of what belongs to a scenario: objects in
// namespaces, and objects anywhere that name or carry the label of one of
// pools. Events are kept when they are in namespaces or are about such an
// object. It returns the files written.
func dump(ctx context.Context, c client.Client, dir string, namespaces, pools []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	var files []string
	for i, k := range dumpKinds {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(k.apiVersion)
		l.SetKind(k.kind + "List")
		if err := c.List(ctx, l); err != nil {
			continue // not served here
		}
		var b strings.Builder
		for _, o := range l.Items {
			if o.GetKind() == "" {
				o.SetAPIVersion(k.apiVersion)
				o.SetKind(k.kind)
			}
			if !inDump(&o, namespaces, pools) {
				continue
			}
			o.SetManagedFields(nil)
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				return files, err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		if b.Len() == 0 {
			continue
		}
		name := dumpFile(i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}

// dumpFile is the name of the file that holds the objects of dumpKinds[i]:
// <kind>.yaml, lower case, or <kind>.<group>.yaml when an earlier kind of
// another group has the same name (Karpenter's NodePool, LKE's).
func dumpFile(i int) string {
	k := dumpKinds[i]
	name := strings.ToLower(k.kind)
	for _, o := range dumpKinds[:i] {
		if o.kind == k.kind {
			group, _, _ := strings.Cut(k.apiVersion, "/")
			return name + "." + group + ".yaml"
		}
	}
	return name + ".yaml"
}

// inDump reports whether o belongs in the dump of a scenario that owns
// namespaces and pools: it is in one of namespaces, or it names or
// carries the label of one of pools (a pool's composed objects are named
// {pool}-nodepool and so on, its node IAM objects <namespace>.{pool}-...,
// and Crossplane labels a composite with its claim's name). An event
// belongs when it is in one of namespaces or is about such an object.
func inDump(o *unstructured.Unstructured, namespaces, pools []string) bool {
	ofPool := func(name string, labels map[string]string) bool {
		for _, p := range pools {
			if name == p || strings.HasPrefix(name, p+"-") || strings.Contains(name, "."+p+"-") || strings.HasSuffix(name, "."+p) ||
				labels[qsv1.LabelPool] == p || labels["crossplane.io/claim-name"] == p || labels["karpenter.sh/nodepool"] == p+"-nodepool" {
				return true
			}
		}
		return false
	}
	if o.GetNamespace() != "" && slices.Contains(namespaces, o.GetNamespace()) {
		return true
	}
	if o.GetKind() == "Event" {
		name, _, _ := unstructured.NestedString(o.Object, "involvedObject", "name")
		return ofPool(name, nil)
	}
	return ofPool(o.GetName(), o.GetLabels())
}

// dumpContext bounds a dump: a failed scenario's own context may be done.
func dumpContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitReconcile)
}

// dumpDir is where the dump of test name (such as TestPool/ScaleDown) goes:
// _output/e2e/<TestName>/<scenario>/ at the repository root.
func dumpDir(root, name string) string {
	return filepath.Join(root, "_output", "e2e", filepath.FromSlash(name))
}

// describeDump is what a failed scenario's log says about its dump.
func describeDump(dir string, files []string, err error) string {
	if err != nil {
		return fmt.Sprintf("dump under %s incomplete: %v (wrote %v)", dir, err, files)
	}
	return fmt.Sprintf("dump of the scenario's objects at %s: %s (%s)", dir, strings.Join(files, ", "), time.Now().UTC().Format(time.RFC3339))
}
