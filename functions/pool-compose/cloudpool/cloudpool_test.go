package cloudpool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/golden"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// base is a valid LKE input that cases change.
func base() Input {
	return Input{
		Pool:               "burst",
		Namespace:          "e6-pools",
		Method:             MethodLKE,
		ClusterID:          "284519",
		InstanceType:       "g6-dedicated-8",
		MinNodes:           1,
		MaxNodes:           5,
		Labels:             map[string]string{"e6data.io/instance": "g6-dedicated-8"},
		Taints:             []corev1.Taint{{Key: "e6data.io/burst", Effect: corev1.TaintEffectNoSchedule}},
		ProviderConfigName: "linode",
		Region:             "us-east",
	}
}

func with(f func(*Input)) Input {
	in := base()
	f(&in)
	return in
}

func TestBuild(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		golden string
	}{
		"LKEAutoscaled": {
			reason: "Different min and max become a one-item autoscaler and no nodeCount; clusterId is a number.",
			in:     base(),
			golden: "lke-autoscaled.yaml",
		},
		"LKEFixed": {
			reason: "Equal min and max become a fixed nodeCount without autoscaler.",
			in:     with(func(in *Input) { in.MinNodes, in.MaxNodes = 3, 3 }),
			golden: "lke-fixed.yaml",
		},
		"LKEMinRaisedToOne": {
			reason: "LKE cannot scale to zero, so a minimum of 0 becomes 1; no provider config leaves the default.",
			in: with(func(in *Input) {
				in.MinNodes, in.MaxNodes = 0, 4
				in.ProviderConfigName, in.Region, in.Labels, in.Taints = "", "", nil, nil
			}),
			golden: "lke-min-raised.yaml",
		},
		"LKEPoolTaintKept": {
			reason: "A pool taint the caller already set is not added twice.",
			in: with(func(in *Input) {
				in.Taints = []corev1.Taint{{Key: "e6data.io/pool", Value: "burst", Effect: corev1.TaintEffectNoSchedule}}
			}),
			golden: "lke-pool-taint-kept.yaml",
		},
		"DOKSAutoscaled": {
			reason: "DOKS scales to zero with autoScale, minNodes and maxNodes; nodeCount is left out.",
			in: with(func(in *Input) {
				in.Method, in.ClusterID, in.InstanceType = MethodDOKS, "8d8b2f7c-2d4f-4f8e-9c1a-5a8a0c1d2e3f", "s-8vcpu-16gb"
				in.MinNodes, in.MaxNodes, in.ProviderConfigName, in.Region = 0, 6, "do", "nyc1"
			}),
			golden: "doks-autoscaled.yaml",
		},
		"DOKSFixed": {
			reason: "Equal min and max turn autoScale off and fix nodeCount.",
			in: with(func(in *Input) {
				in.Method, in.ClusterID, in.InstanceType = MethodDOKS, "8d8b2f7c-2d4f-4f8e-9c1a-5a8a0c1d2e3f", "s-8vcpu-16gb"
				in.MinNodes, in.MaxNodes = 2, 2
			}),
			golden: "doks-fixed.yaml",
		},
		"DOKSNamespaced": {
			reason: "Namespaced emits the .m. group in the claim's namespace, with a provider config kind.",
			in: with(func(in *Input) {
				in.Method, in.ClusterID, in.InstanceType = MethodDOKS, "8d8b2f7c-2d4f-4f8e-9c1a-5a8a0c1d2e3f", "s-8vcpu-16gb"
				in.Namespaced, in.ProviderConfigName = true, "do"
			}),
			golden: "doks-namespaced.yaml",
		},
		"CoreWeaveTarget": {
			reason: "CKS has no autoscaler yet: autoscaling stays off and targetNodes is what burstpool asks (3 of at most 8); no cluster ID needed.",
			in: with(func(in *Input) {
				in.Method, in.ClusterID, in.InstanceType = MethodCoreWeave, "", "gd-8xh100ib-i128"
				in.MinNodes, in.MaxNodes, in.TargetNodes, in.ProviderConfigName = 0, 8, 3, ""
			}),
			golden: "coreweave-target.yaml",
		},
		"CoreWeaveFixed": {
			reason: "A target below the minimum (0 of at least 2) is raised to it.",
			in: with(func(in *Input) {
				in.Method, in.InstanceType = MethodCoreWeave, "cd-gp-a192-genoa"
				in.MinNodes, in.MaxNodes = 2, 2
			}),
			golden: "coreweave-fixed.yaml",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := Build(tc.in)
			if err != nil {
				t.Fatalf("\n%s\nBuild(...): unexpected error: %v", tc.reason, err)
			}
			got, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatalf("cannot marshal: %v", err)
			}
			golden.File(t, filepath.Join("testdata", tc.golden), got)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		want   []string // substrings the error must contain
	}{
		"NoPool": {
			reason: "A pool name is needed for every object.",
			in:     with(func(in *Input) { in.Pool = "" }),
			want:   []string{"Pool", "set it"},
		},
		"UnknownMethod": {
			reason: "Karpenter methods are not built here.",
			in:     with(func(in *Input) { in.Method = "karpenter" }),
			want:   []string{"Method", `"karpenter"`, "lke"},
		},
		"NoClusterID": {
			reason: "LKE and DOKS pools must name their cluster.",
			in:     with(func(in *Input) { in.Method, in.ClusterID = MethodDOKS, "" }),
			want:   []string{"ClusterID", "spec.provisioning.clusterId"},
		},
		"NonNumericLKEClusterID": {
			reason: "The LKE provider takes the cluster ID as a number.",
			in:     with(func(in *Input) { in.ClusterID = "lke-284519" }),
			want:   []string{"ClusterID", "numeric"},
		},
		"NoInstanceType": {
			reason: "Every cloud needs a node type.",
			in:     with(func(in *Input) { in.InstanceType = "" }),
			want:   []string{"InstanceType"},
		},
		"NoMaxNodes": {
			reason: "A pool of at most zero nodes is not a pool.",
			in:     with(func(in *Input) { in.MinNodes, in.MaxNodes = 0, 0 }),
			want:   []string{"MaxNodes", "at least 1"},
		},
		"MinAboveMax": {
			reason: "The minimum cannot exceed the maximum.",
			in:     with(func(in *Input) { in.MinNodes, in.MaxNodes = 4, 2 }),
			want:   []string{"MinNodes", "MaxNodes"},
		},
		"NamespacedLKE": {
			reason: "Only DOKS has a namespaced variant.",
			in:     with(func(in *Input) { in.Namespaced = true }),
			want:   []string{"Namespaced", "doks"},
		},
		"NamespacedWithoutNamespace": {
			reason: "A namespaced object needs its namespace.",
			in:     with(func(in *Input) { in.Method, in.Namespaced, in.Namespace = MethodDOKS, true, "" }),
			want:   []string{"Namespace", "claim"},
		},
		"BadTaintEffect": {
			reason: "Clouds accept only the three Kubernetes taint effects.",
			in:     with(func(in *Input) { in.Taints = []corev1.Taint{{Key: "a", Effect: "NoWay"}} }),
			want:   []string{"Taints[0].Effect", "NoSchedule"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := Build(tc.in)
			if err == nil {
				t.Fatalf("\n%s\nBuild(...): want error, got object %v", tc.reason, u.Object)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nBuild(...): error %q does not contain %q", tc.reason, err, w)
				}
			}
		})
	}
}

// TestGoldenFilesMatchUpstreamSchemas holds the golden objects to the
// providers' published CRDs, so a field the provider would prune or reject
// fails here. CoreWeave publishes no schema; its goldens are held to the
// documentation in coreweave's comment instead.
func TestGoldenFilesMatchUpstreamSchemas(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream CRDs: %v", err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (run go test -update): %v", err)
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "coreweave-") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := reg.Validate(u); err != nil {
			t.Errorf("%s does not match its CRD:\n%v", f, err)
		}
	}
}

// coreweaveDocumented are the NodePool spec fields CoreWeave documents, the
// only ones a CoreWeave pool may use while no schema is published
// (lifecycle.scaleDownStrategy, IdleOnly or PreferIdle: "Autoscale Node
// Pools").
var coreweaveDocumented = map[string]bool{
	"instanceType": true, "targetNodes": true, "minNodes": true, "maxNodes": true,
	"autoscaling": true, "nodeLabels": true, "nodeAnnotations": true, "nodeTaints": true,
	"lifecycle": true,
}

func TestCoreWeaveUsesDocumentedFields(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "coreweave-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CoreWeave golden files (run go test -update): %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		for k := range spec {
			if !coreweaveDocumented[k] {
				t.Errorf("%s: spec.%s is not a documented CoreWeave NodePool field", f, k)
			}
		}
		for _, k := range []string{"instanceType", "targetNodes", "autoscaling"} {
			if _, ok := spec[k]; !ok {
				t.Errorf("%s: spec.%s is missing", f, k)
			}
		}
	}
}
