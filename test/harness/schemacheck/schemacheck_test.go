package schemacheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// upstream loads the upstream registry once for all tests, or fails with
// what to do.
func upstream(t *testing.T) *Registry {
	t.Helper()
	r, err := Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream CRDs from %s: %v", UpstreamDir, err)
	}
	return r
}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	return u
}

const nodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: burst
  labels: {e6data.io/pool: burst}
spec:
  limits: {cpu: "640"}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 5m}
  template:
    metadata:
      labels: {e6data.io/pool: burst}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: burst}
      taints: [{key: e6data.io/pool, value: burst, effect: NoSchedule}]
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [r7gd.8xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`

const ec2NodeClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: burst}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

const doksNodePool = `
apiVersion: kubernetes.digitalocean.crossplane.io/v1alpha1
kind: NodePool
metadata: {name: burst-nodepool}
spec:
  forProvider:
    clusterId: 8d8b2f7c-2d4f-4f8e-9c1a-5a8a0c1d2e3f
    name: burst-nodepool
    size: s-8vcpu-16gb
    autoScale: true
    minNodes: 0
    maxNodes: 4
`

func TestValidate(t *testing.T) {
	r := upstream(t)
	cases := map[string]struct {
		reason string
		obj    string
		// want lists a field path and a fragment of its message for every
		// error expected; none means valid.
		want map[string]string
	}{
		"NodePoolValid": {
			reason: "A Karpenter NodePool as burstpool emits it is valid.",
			obj:    nodePool,
		},
		"NodePoolBadOperator": {
			reason: "A requirement operator outside the enum is rejected.",
			obj:    strings.Replace(nodePool, "operator: In, values: [on-demand]", "operator: Like, values: [on-demand]", 1),
			want:   map[string]string{"spec.template.spec.requirements[1].operator": `Unsupported value: "Like"`},
		},
		"NodePoolInWithoutValues": {
			reason: "A CEL rule rejects operator In without values.",
			obj:    strings.Replace(nodePool, "operator: In, values: [on-demand]", "operator: In, values: []", 1),
			want:   map[string]string{"spec.template.spec.requirements": "must have a value defined"},
		},
		"NodePoolUnknownField": {
			reason: "A field the schema lacks would be pruned by the server; it is an error here.",
			obj:    strings.Replace(nodePool, "  limits:", "  limit: {cpu: \"1\"}\n  limits:", 1),
			want:   map[string]string{"spec.limit": "unknown field"},
		},
		"NodePoolMissingNodeClassRef": {
			reason: "Required fields are required.",
			obj:    strings.Replace(nodePool, "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: burst}\n", "", 1),
			want:   map[string]string{"spec.template.spec.nodeClassRef": "Required value"},
		},
		"NodePoolBadDuration": {
			reason: "Patterns are checked: consolidateAfter is a duration or Never.",
			obj:    strings.Replace(nodePool, "consolidateAfter: 5m", "consolidateAfter: soon", 1),
			want:   map[string]string{"spec.disruption.consolidateAfter": "should match"},
		},
		"NodePoolNamespaceOnClusterScoped": {
			reason: "Cluster-scoped kinds take no namespace.",
			obj:    strings.Replace(nodePool, "  name: burst\n", "  name: burst\n  namespace: e6-pools\n", 1),
			want:   map[string]string{"metadata.namespace": "not allowed"},
		},
		"NodeClaimValid": {
			reason: "A NodeClaim with its required fields is valid.",
			obj: `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: burst-abcde}
spec:
  nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
  requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`,
		},
		"NodeClaimWrongType": {
			reason: "Types are checked.",
			obj: `
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: burst-abcde}
spec:
  nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
  requirements: {key: kubernetes.io/arch}
`,
			want: map[string]string{"spec.requirements": "must be of type array", "spec.requirements.key": "unknown field"},
		},
		"EC2NodeClassValid": {
			reason: "An EC2NodeClass with an AMI alias, role and selectors is valid.",
			obj:    ec2NodeClass,
		},
		"EC2NodeClassMissingAMISelectorTerms": {
			reason: "amiSelectorTerms is required.",
			obj:    strings.Replace(ec2NodeClass, "  amiSelectorTerms: [{alias: al2023@latest}]\n", "", 1),
			want:   map[string]string{"spec.amiSelectorTerms": "Required value"},
		},
		"EC2NodeClassRoleAndInstanceProfile": {
			reason: "A CEL rule on spec wants exactly one of role and instanceProfile.",
			obj:    strings.Replace(ec2NodeClass, "  role: KarpenterNodeRole-demo\n", "  role: KarpenterNodeRole-demo\n  instanceProfile: demo\n", 1),
			want:   map[string]string{"spec": "exactly one of ['role', 'instanceProfile']"},
		},
		"KWOKNodeClassValid": {
			reason: "Karpenter's test cloud needs nothing in its NodeClass.",
			obj:    "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: default}\n",
		},
		"KWOKNodeClassUnknownField": {
			reason: "Unknown fields are reported with their path.",
			obj:    "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: default}\nspec: {instanceTypes: [a]}\n",
			want:   map[string]string{"spec.instanceTypes": "unknown field"},
		},
		"MetadataChecked": {
			reason: "Unknown metadata fields and invalid names are reported as the server would.",
			obj:    "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: Bad_Name, lables: {a: b}}\n",
			want:   map[string]string{"metadata.lables": "unknown field", "metadata.name": "RFC 1123 subdomain"},
		},
		"AKSNodeClassValid": {
			reason: "An AKSNodeClass with an image family is valid.",
			obj:    "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: burst}\nspec: {imageFamily: AzureLinux, osDiskSizeGB: 128}\n",
		},
		"AKSNodeClassBadImageFamily": {
			reason: "Enums are checked.",
			obj:    "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: burst}\nspec: {imageFamily: Debian}\n",
			want:   map[string]string{"spec.imageFamily": `Unsupported value: "Debian"`},
		},
		"GCENodeClassValid": {
			reason: "A GCENodeClass with image selector terms is valid.",
			obj:    "apiVersion: karpenter.k8s.gcp/v1alpha1\nkind: GCENodeClass\nmetadata: {name: burst}\nspec:\n  imageSelectorTerms: [{alias: ContainerOptimizedOS@latest}]\n",
		},
		"GCENodeClassMissingImages": {
			reason: "imageSelectorTerms is required.",
			obj:    "apiVersion: karpenter.k8s.gcp/v1alpha1\nkind: GCENodeClass\nmetadata: {name: burst}\nspec: {serviceAccount: nodes@demo.iam.gserviceaccount.com}\n",
			want:   map[string]string{"spec.imageSelectorTerms": "Required value"},
		},
		"LKENodePoolValid": {
			reason: "An LKE node pool with a numeric cluster ID is valid.",
			obj:    "apiVersion: lke.linode.upbound.io/v1alpha1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec:\n  forProvider: {clusterId: 284519, type: g6-dedicated-8, autoscaler: [{min: 1, max: 4}]}\n",
		},
		"LKENodePoolClusterIDString": {
			reason: "The LKE provider takes the cluster ID as a number.",
			obj:    "apiVersion: lke.linode.upbound.io/v1alpha1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec:\n  forProvider: {clusterId: \"284519\", type: g6-dedicated-8}\n",
			want:   map[string]string{"spec.forProvider.clusterId": "must be of type number"},
		},
		"DOKSNodePoolValid": {
			reason: "A DOKS node pool with name and size is valid.",
			obj:    doksNodePool,
		},
		"DOKSNodePoolMissingSize": {
			reason: "The defaulted managementPolicies [*] make the provider's CEL rule require size.",
			obj:    strings.Replace(doksNodePool, "    size: s-8vcpu-16gb\n", "", 1),
			want:   map[string]string{"spec": "spec.forProvider.size is a required parameter"},
		},
		"DOKSNamespacedWithoutNamespace": {
			reason: "Namespaced kinds need a namespace.",
			obj:    strings.Replace(doksNodePool, "kubernetes.digitalocean.crossplane.io", "kubernetes.digitalocean.m.crossplane.io", 1),
			want:   map[string]string{"metadata.namespace": "Required value"},
		},
		"CompositionValid": {
			reason: "Crossplane's own types validate too.",
			obj: `
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata: {name: pool-compose}
spec:
  compositeTypeRef: {apiVersion: e6data.io/v1alpha1, kind: XPool}
  mode: Pipeline
  pipeline:
  - step: compose
    functionRef: {name: function-pool-compose}
`,
		},
		"CompositionBadMode": {
			reason: "Crossplane's enums are checked.",
			obj: `
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata: {name: pool-compose}
spec:
  compositeTypeRef: {apiVersion: e6data.io/v1alpha1, kind: XPool}
  mode: Resources
`,
			want: map[string]string{"spec.mode": `Unsupported value: "Resources"`},
		},
		"DaemonSetValid": {
			reason: "Built-in kinds decode strictly into their Go types.",
			obj: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: burst-warmup-abc, namespace: e6-pools}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec: {containers: [{name: w, image: busybox}]}
`,
		},
		"DaemonSetUnknownField": {
			reason: "Unknown fields of built-in kinds are reported.",
			obj: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: burst-warmup-abc, namespace: e6-pools}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec: {containers: [{name: w, image: busybox, pullPolicy: Always}]}
`,
			want: map[string]string{"spec.template.spec.containers[0].pullPolicy": "unknown field"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := r.Validate(object(t, tc.obj))
			got := map[string]string{}
			if err != nil {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("\n%s\nValidate(...): want *Error, got %v", tc.reason, err)
				}
				for _, fe := range se.Errs {
					got[fe.Field] = fe.Error()
				}
			}
			// Keep only a fragment of each message, to compare with want.
			for path, msg := range got {
				if w, ok := tc.want[path]; ok && strings.Contains(msg, w) {
					got[path] = w
				}
			}
			want := tc.want
			if want == nil {
				want = map[string]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("\n%s\nValidate(...): -want field errors, +got:\n%s\nfull error: %v", tc.reason, diff, err)
			}
		})
	}
}

func TestValidateSkipsCELAfterBlockingErrors(t *testing.T) {
	r := upstream(t)
	err := r.Validate(object(t, strings.Replace(ec2NodeClass, "  amiSelectorTerms: [{alias: al2023@latest}]\n", "", 1)))
	var se *Error
	if !errors.As(err, &se) || !se.CELSkipped || !strings.Contains(err.Error(), "CEL rules not checked") {
		t.Errorf("Validate(missing required field): want CELSkipped and a note, got %v", err)
	}
}

func TestValidateUnknownKind(t *testing.T) {
	r := upstream(t)
	err := r.Validate(object(t, "apiVersion: eks.amazonaws.com/v1\nkind: NodeClass\nmetadata: {name: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "no schema for NodeClass.eks.amazonaws.com") {
		t.Errorf("Validate(unknown kind): want a no-schema error, got %v", err)
	}
}

func TestValidateDoesNotChangeObject(t *testing.T) {
	r := upstream(t)
	u := object(t, doksNodePool)
	before := u.DeepCopy()
	_ = r.Validate(u)
	if diff := cmp.Diff(before.Object, u.Object); diff != "" {
		t.Errorf("Validate(...) changed its argument (defaults or pruning leaked):\n%s", diff)
	}
}

func TestUpstreamKinds(t *testing.T) {
	r := upstream(t)
	have := map[schema.GroupVersionKind]bool{}
	for _, k := range r.Kinds() {
		have[k] = true
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"},
		{Group: "karpenter.sh", Version: "v1", Kind: "NodeClaim"},
		{Group: "karpenter.kwok.sh", Version: "v1alpha1", Kind: "KWOKNodeClass"},
		{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"},
		{Group: "karpenter.azure.com", Version: "v1beta1", Kind: "AKSNodeClass"},
		{Group: "karpenter.k8s.gcp", Version: "v1alpha1", Kind: "GCENodeClass"},
		{Group: "lke.linode.upbound.io", Version: "v1alpha1", Kind: "NodePool"},
		{Group: "kubernetes.digitalocean.crossplane.io", Version: "v1alpha1", Kind: "NodePool"},
		{Group: "kubernetes.digitalocean.m.crossplane.io", Version: "v1alpha1", Kind: "NodePool"},
		{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"},
		{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"},
	} {
		if !have[gvk] {
			t.Errorf("Upstream(): missing %s", gvk)
		}
	}
	total := 0
	for _, gvk := range r.Kinds() {
		total += r.Rules(gvk)
	}
	if n := r.Rules(schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}); n == 0 {
		t.Errorf("Upstream(): NodePool has no CEL rules; want Karpenter's")
	}
	t.Logf("%d kinds, %d CEL rules, all compiled", len(r.Kinds()), total)
}

// widgetCRD is a namespaced CRD of kind Widget in group whose spec has an
// integer size of at least 1; specExtra is added to the spec's schema.
func widgetCRD(group, specExtra string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.` + group + `}
spec:
  group: ` + group + `
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            ` + specExtra + `
            properties:
              size: {type: integer, minimum: 1}
`
}

func TestLoadRejectsRulesThatDoNotCompile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "crd.yaml")
	crd := widgetCRD("example.com", `x-kubernetes-validations: [{rule: "self.nosuchfield > 1"}]`)
	if err := os.WriteFile(p, []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "do not compile") {
		t.Errorf("Load(CRD with a broken rule): want a compile error, got %v", err)
	}
}

func TestLoadXRD(t *testing.T) {
	p := filepath.Join(t.TempDir(), "definition.yaml")
	xrd := `apiVersion: apiextensions.crossplane.io/v1
kind: CompositeResourceDefinition
metadata: {name: xwidgets.example.com}
spec:
  group: example.com
  names: {kind: XWidget, plural: xwidgets}
  claimNames: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    referenceable: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Ready, Failed]}
`
	if err := os.WriteFile(p, []byte(xrd), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Load(p)
	if err != nil {
		t.Fatalf("Load(XRD): %v", err)
	}
	cases := map[string]struct {
		reason string
		obj    string
		want   []string // fragments of the error; none means valid
	}{
		"Valid": {
			reason: "Crossplane's machinery fields are accepted beside the declared ones.",
			obj:    "spec: {size: 2, compositionRef: {name: c}, resourceRefs: [{name: a}]}\nstatus: {phase: Ready, conditions: [{type: Ready}]}\n",
		},
		"DeclaredFieldsStrict": {
			reason: "Fields the XRD declares are checked, and unknown ones reported.",
			obj:    "spec: {size: 0, colour: red}\nstatus: {phase: Pending}\n",
			want:   []string{"spec.size", "spec.colour: Forbidden: unknown field", `status.phase: Unsupported value: "Pending"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := r.Validate(object(t, "apiVersion: example.com/v1\nkind: XWidget\nmetadata: {name: w}\n"+tc.obj))
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("\n%s\nValidate(...): %v", tc.reason, err)
				}
				return
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nValidate(...): want error containing %q, got %v", tc.reason, w, err)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	crd := func(group string) string { return widgetCRD(group, "") }
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	multi := write("multi.yaml", "# two CRDs\n---\n"+crd("a.example.com")+"---\n"+crd("b.example.com"))
	write("notes.yaml", "kind: Kustomization\napiVersion: kustomize.config.k8s.io/v1beta1\n")
	notCRD := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(notCRD, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dup := filepath.Join(t.TempDir(), "dup.yaml")
	if err := os.WriteFile(dup, []byte(crd("a.example.com")), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		reason  string
		paths   []string
		kinds   int
		wantErr string
	}{
		"MultiDocumentFile": {reason: "Every CRD of a multi-document file is loaded.", paths: []string{multi}, kinds: 2},
		"Directory":         {reason: "A directory's CRDs are loaded and other documents skipped.", paths: []string{dir}, kinds: 2},
		"FileWithoutCRD":    {reason: "A file named directly must hold CRDs.", paths: []string{notCRD}, wantErr: "not an apiextensions.k8s.io/v1 CustomResourceDefinition"},
		"DefinedTwice":      {reason: "A kind from two files is ambiguous.", paths: []string{multi, dup}, wantErr: "defined twice"},
		"Missing":           {reason: "A missing path is an error.", paths: []string{filepath.Join(dir, "nope")}, wantErr: "cannot read CRDs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Load(tc.paths...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("\n%s\nLoad(...): want error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nLoad(...): %v", tc.reason, err)
			}
			if got := len(r.Kinds()); got != tc.kinds {
				t.Errorf("\n%s\nLoad(...): want %d kinds, got %d", tc.reason, tc.kinds, got)
			}
			// A loaded schema validates: bounds are checked.
			bad := object(t, "apiVersion: a.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec: {size: 0}\n")
			if err := r.Validate(bad); err == nil || !strings.Contains(err.Error(), "spec.size") {
				t.Errorf("\n%s\nValidate(size 0): want a spec.size error, got %v", tc.reason, err)
			}
		})
	}
}
