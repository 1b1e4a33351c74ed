// Package api_test tests the API: it installs the Pool and QueryService CRDs
// generated from apis/ into a real API server and checks what it accepts,
// rejects and defaults. The reference's example pools apply as written and
// invalid pools are rejected with messages that say what to fix.
package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/reference"
)

var (
	cfg    *rest.Config
	c      client.Client
	dyn    *dynamic.DynamicClient
	kube   *kubernetes.Clientset
	poolsR = schema.GroupVersionResource{Group: "e6data.io", Version: "v1alpha1", Resource: "pools"}
	qsR    = schema.GroupVersionResource{Group: "e6data.io", Version: "v1alpha1", Resource: "queryservices"}
)

const ns = "e6-pools"

// TestMain runs the package's tests against a real API server and etcd
// serving the Pool and QueryService CRDs.
func TestMain(m *testing.M) {
	apiserver.Main(m, func(e *envtest.Environment) {
		cfg = e.Config
		var err error
		if c, err = client.New(cfg, client.Options{}); err != nil {
			panic(fmt.Sprintf("cannot create a client of the API server: %v", err))
		}
		dyn = dynamic.NewForConfigOrDie(cfg)
		kube = kubernetes.NewForConfigOrDie(cfg)
	}, filepath.Join("..", "..", "apis", "crds"), filepath.Join("..", "..", "examples", "crds"))
}

// readObjects reads every object of a (multi-document) YAML file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localcp.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// TestReferenceManifestsApplyAsWritten creates each section-4 manifest of
// e6data's Pool reference, read from its byte-for-byte copy in the
// repository, with strict field validation (what kubectl apply does): the
// API server accepts it and stores every field it sets.
func TestReferenceManifestsApplyAsWritten(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	for _, m := range reference.Manifests {
		t.Run(m.Section, func(t *testing.T) {
			objs := readObjects(t, m.Path(filepath.Join("..", "..")))
			if len(objs) != 1 || objs[0].GetName() != m.Pool {
				t.Fatalf("%s: want one Pool %s, read %d objects", m.File, m.Pool, len(objs))
			}
			createStrict(t, objs[0])
		})
	}
	t.Run("PullSecretKept", func(t *testing.T) {
		for _, c := range []struct{ pool, name, namespace string }{
			{"high-memory-pool", "e6data-registry-secret", ns},
			{"prewarmed-pool", "registry-secret", ""},
		} {
			got, err := dyn.Resource(poolsR).Namespace(ns).Get(context.Background(), c.pool, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			name, _, _ := unstructured.NestedString(got.Object, "spec", "imageConfig", "pullSecret", "name")
			namespace, _, _ := unstructured.NestedString(got.Object, "spec", "imageConfig", "pullSecret", "namespace")
			if name != c.name || namespace != c.namespace {
				t.Errorf("%s: stored pullSecret %q/%q, want %q/%q", c.pool, namespace, name, c.namespace, c.name)
			}
		}
	})
}

// TestExamplesApplyAsWritten creates burstpool's own example pools the same
// way.
func TestExamplesApplyAsWritten(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "pools", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example pools in examples/pools")
	}
	fixture.CreateNamespaces(t, c, ns)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			for _, u := range readObjects(t, f) {
				createStrict(t, u)
			}
		})
	}
}

// TestStrictValidationRejectsUnknownFields proves the checks above would
// see a field the schema lacks.
func TestStrictValidationRejectsUnknownFields(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	u := pool("unknown-field", map[string]any{
		"maxExecutors":         int64(5),
		"allowedQueryServices": []any{map[string]any{"name": "qs"}},
		"imageConfig":          map[string]any{"pullSecrets": map[string]any{"name": "x"}},
	})
	_, err := dyn.Resource(poolsR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.imageConfig.pullSecrets"`) {
		t.Errorf("creating a Pool with an unknown field: got %v, want a strict decoding error naming it", err)
	}
}

// createStrict creates u with strict field validation and checks that the
// stored spec has everything u's spec says (defaults may add fields, but
// none is dropped or changed).
func createStrict(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	want := u.DeepCopy()
	got, err := dyn.Resource(poolsR).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("the API server rejected Pool %s: %v", u.GetName(), err)
	}
	if diff := cmp.Diff(want.Object["spec"], subset(got.Object["spec"], want.Object["spec"])); diff != "" {
		t.Errorf("stored spec of %s differs from the manifest (-manifest +stored):\n%s", u.GetName(), diff)
	}
}

// subset returns the parts of got that want has keys for, so that defaulted
// fields do not count as differences.
func subset(got, want any) any {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if !gok || !wok {
		return got
	}
	out := map[string]any{}
	for k, wv := range wm {
		if gv, ok := gm[k]; ok {
			out[k] = subset(gv, wv)
		}
	}
	return out
}

func TestDefaults(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	u := pool("defaults", map[string]any{
		"maxExecutors":         int64(5),
		"allowedQueryServices": []any{map[string]any{"name": "qs"}},
	})
	got, err := dyn.Resource(poolsR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"minExecutors":         int64(0),
		"maxExecutors":         int64(5),
		"executorsPerNode":     int64(1),
		"imageConfig":          map[string]any{"autoCollectImages": true, "unusedImageRetention": "1h"},
		"tolerations":          []any{},
		"allowedQueryServices": []any{map[string]any{"name": "qs"}},
	}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
}

// pool is the Pool claim ns/name with spec.
func pool(name string, spec map[string]any) *unstructured.Unstructured {
	return fixture.Pool{Name: name, Namespace: ns}.Claim(spec)
}

func TestInvalidPoolsRejected(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	allowed := []any{map[string]any{"name": "analytics-cluster", "namespace": "workspace-analytics-prod"}}
	valid := func(extra map[string]any) map[string]any {
		s := map[string]any{"maxExecutors": int64(10), "allowedQueryServices": allowed}
		for k, v := range extra {
			if v == nil {
				delete(s, k)
				continue
			}
			s[k] = v
		}
		return s
	}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   string
	}{
		"NoQueryServices": {
			reason: "A pool must say which QueryServices may use it.",
			spec:   valid(map[string]any{"allowedQueryServices": nil}),
			want:   "set allowedQueryServices or queryServiceSelector: a pool must say which QueryServices may use it",
		},
		"EmptyAllowedList": {
			reason: "An empty allowedQueryServices list allows nobody.",
			spec:   valid(map[string]any{"allowedQueryServices": []any{}}),
			want:   "set allowedQueryServices or queryServiceSelector",
		},
		"MaxExecutorsMissing": {
			reason: "maxExecutors is required.",
			spec:   valid(map[string]any{"maxExecutors": nil}),
			want:   "spec.maxExecutors: Required value",
		},
		"MaxExecutorsZero": {
			reason: "maxExecutors must be at least 1.",
			spec:   valid(map[string]any{"maxExecutors": int64(0)}),
			want:   "maxExecutors must be at least 1",
		},
		"MinAboveMax": {
			reason: "minExecutors must not exceed maxExecutors.",
			spec:   valid(map[string]any{"minExecutors": int64(11)}),
			want:   "minExecutors must not exceed maxExecutors",
		},
		"ExecutorsPerNodeZero": {
			reason: "executorsPerNode must be at least 1.",
			spec:   valid(map[string]any{"executorsPerNode": int64(0)}),
			want:   "executorsPerNode must be at least 1",
		},
		"RetentionNotADuration": {
			reason: "unusedImageRetention must be a Go duration.",
			spec:   valid(map[string]any{"imageConfig": map[string]any{"unusedImageRetention": "one hour"}}),
			want:   "imageConfig.unusedImageRetention must be a duration such as 1h, 30m or 1h30m",
		},
		"TypeOutsideFamily": {
			reason: "instanceType and instanceFamily must agree.",
			spec:   valid(map[string]any{"instanceConfig": map[string]any{"instanceType": "m7i.4xlarge", "instanceFamily": "r7gd"}}),
			want:   "instanceConfig.instanceType must belong to instanceConfig.instanceFamily",
		},
		"AzureTypeOutsideFamily": {
			reason: "An Azure size must be of its family's series and version.",
			spec:   valid(map[string]any{"instanceConfig": map[string]any{"instanceType": "Standard_D16s_v5", "instanceFamily": "Edsv5"}}),
			want:   "instanceConfig.instanceType must belong to instanceConfig.instanceFamily",
		},
		"ExistsWithValue": {
			reason: "A toleration with operator Exists takes no value.",
			spec:   valid(map[string]any{"tolerations": []any{map[string]any{"key": "k", "operator": "Exists", "value": "v"}}}),
			want:   "a toleration with operator Exists must not set a value",
		},
		"EqualWithoutKey": {
			reason: "A toleration without a key must use Exists.",
			spec:   valid(map[string]any{"tolerations": []any{map[string]any{"operator": "Equal", "value": "v"}}}),
			want:   "a toleration without a key must use operator Exists",
		},
		"TolerationSecondsWithoutNoExecute": {
			reason: "tolerationSeconds is only valid with NoExecute.",
			spec:   valid(map[string]any{"tolerations": []any{map[string]any{"key": "k", "effect": "NoSchedule", "tolerationSeconds": int64(30)}}}),
			want:   "tolerationSeconds is only valid with effect NoExecute",
		},
		"BadTolerationEffect": {
			reason: "A toleration effect must be one Kubernetes knows.",
			spec:   valid(map[string]any{"tolerations": []any{map[string]any{"key": "k", "effect": "NoRun"}}}),
			want:   `Unsupported value: "NoRun"`,
		},
		"StorageAgentWithoutImage": {
			reason: "An enabled storage agent needs an image.",
			spec:   valid(map[string]any{"storageAgent": map[string]any{"enabled": true}}),
			want:   "storageAgent.image is required when storageAgent.enabled is true",
		},
		"UnknownCloud": {
			reason: "spec.provisioning.cloud is a closed set.",
			spec:   valid(map[string]any{"provisioning": map[string]any{"cloud": "mainframe"}}),
			want:   `spec.provisioning.cloud: Unsupported value: "mainframe"`,
		},
		"AllowedQueryServiceWithoutName": {
			reason: "Every allowed QueryService needs a name.",
			spec:   valid(map[string]any{"allowedQueryServices": []any{map[string]any{"namespace": "workspace-reporting"}}}),
			want:   "spec.allowedQueryServices[0].name: Required value",
		},
		"ScheduledWithoutWindows": {
			reason: "A Scheduled warm policy needs a window.",
			spec:   valid(map[string]any{"warmPolicy": map[string]any{"type": "Scheduled"}}),
			want:   "warmPolicy.type Scheduled needs at least one window in warmPolicy.windows: add one, or use type Static",
		},
		"UnknownWarmPolicy": {
			reason: "The warm policy is Static, Scheduled or Learned.",
			spec:   valid(map[string]any{"warmPolicy": map[string]any{"type": "Predictive"}}),
			want:   `spec.warmPolicy.type: Unsupported value: "Predictive"`,
		},
		"WindowAboveMaxExecutors": {
			reason: "A window may not warm more executors than the pool runs.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{executors: 11})}),
			want:   "every warmPolicy.windows[].executors must be at most maxExecutors: lower the window's executors or raise maxExecutors",
		},
		"WindowLongerThanAWeek": {
			reason: "A window lasts at most a week.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{duration: "169h"})}),
			want:   "spec.warmPolicy.windows[0].duration: Invalid value: \"169h\": duration must be more than 0 and at most a week (168h)",
		},
		"WindowOfNoTime": {
			reason: "A window lasts more than nothing.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{duration: "0s"})}),
			want:   "duration must be more than 0 and at most a week (168h)",
		},
		"WindowDurationNotADuration": {
			reason: "A window's duration is a duration.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{duration: "two hours"})}),
			want:   "spec.warmPolicy.windows[0].duration: Invalid value: \"two hours\": duration must be a duration such as 10h, 90m or 1h30m",
		},
		"CronWithSeconds": {
			reason: "A schedule has five fields: a seconds field is refused.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{schedule: "0 0 8 * * mon-fri"})}),
			want:   "spec.warmPolicy.windows[0].schedule: Invalid value: \"0 0 8 * * mon-fri\": schedule must be a cron expression of five fields",
		},
		"CronTooShort": {
			reason: "A schedule has five fields.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{schedule: "8 * *"})}),
			want:   "schedule must be a cron expression of five fields",
		},
		"CronTimeZonePrefix": {
			reason: "The time zone is a field of its own, not a CRON_TZ prefix.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{schedule: "CRON_TZ=Europe/Berlin 0 8 * * *"})}),
			want:   "no CRON_TZ prefix (set timeZone instead)",
		},
		"NegativeWindowExecutors": {
			reason: "A window warms no fewer than zero executors.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{executors: -1})}),
			want:   "spec.warmPolicy.windows[0].executors: Invalid value: -1: spec.warmPolicy.windows[0].executors in body should be greater than or equal to 0",
		},
		"DuplicateWindowNames": {
			reason: "Each window has its own name, by which status and messages name it.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(warmWindow{}, warmWindow{schedule: "0 20 * * *"})}),
			want:   "warmPolicy.windows[].name must be unique: give each window its own name",
		},
		"TooManyWindows": {
			reason: "A pool names at most 16 windows.",
			spec:   valid(map[string]any{"warmPolicy": scheduled(manyWindows(17)...)}),
			want:   "spec.warmPolicy.windows: Too many: 17: must have at most 16 items",
		},
		"TargetAbove100": {
			reason: "A target share is at most 100%.",
			spec:   valid(map[string]any{"warmPolicy": map[string]any{"type": "Learned", "learned": map[string]any{"targetWarmPercent": int64(101)}}}),
			want:   "targetWarmPercent must be between 1 and 100: the share of executors, in percent, to start on an existing node",
		},
		"TargetZero": {
			reason: "A target share of 0% asks for nothing.",
			spec:   valid(map[string]any{"warmPolicy": map[string]any{"type": "Learned", "learned": map[string]any{"targetWarmPercent": int64(0)}}}),
			want:   "targetWarmPercent must be between 1 and 100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := dyn.Resource(poolsR).Namespace(ns).Create(context.Background(), pool(strings.ToLower(name), tc.spec), metav1.CreateOptions{})
			if err == nil {
				t.Fatalf("%s\nthe API server accepted the pool; want rejection with %q", tc.reason, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nrejection message\n  %s\ndoes not contain\n  %s", tc.reason, err, tc.want)
			}
		})
	}
}

// warmWindow is a window of a Scheduled warm policy; each field left
// empty takes a valid value.
type warmWindow struct {
	name, schedule, duration string
	executors                int64
}

func (w warmWindow) object() map[string]any {
	if w.name == "" {
		w.name = "business-hours"
	}
	if w.schedule == "" {
		w.schedule = "0 8 * * mon-fri"
	}
	if w.duration == "" {
		w.duration = "10h"
	}
	if w.executors == 0 {
		w.executors = 4
	}
	return map[string]any{"name": w.name, "schedule": w.schedule, "duration": w.duration, "executors": w.executors}
}

// scheduled is a Scheduled warm policy of windows.
func scheduled(ws ...warmWindow) map[string]any {
	l := make([]any, 0, len(ws))
	for _, w := range ws {
		l = append(l, w.object())
	}
	return map[string]any{"type": "Scheduled", "windows": l}
}

// manyWindows are n windows of distinct names.
func manyWindows(n int) []warmWindow {
	out := make([]warmWindow, 0, n)
	for i := range n {
		out = append(out, warmWindow{name: fmt.Sprintf("window-%d", i)})
	}
	return out
}

// TestWarmPoliciesAccepted creates pools of each warm policy, as their
// documentation writes them.
func TestWarmPoliciesAccepted(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	allowed := []any{map[string]any{"name": "qs"}}
	cases := map[string]map[string]any{
		"static":           {"type": "Static"},
		"defaulted-static": {},
		"scheduled": {"type": "Scheduled", "windows": []any{
			warmWindow{name: "business-hours", schedule: "0 8 * * mon-fri", duration: "10h", executors: 6}.object(),
			map[string]any{"name": "nightly-etl", "schedule": "30 1 * * *", "duration": "2h30m", "executors": int64(10), "timeZone": "America/New_York"},
			warmWindow{name: "month-end", schedule: "0 0 28-31 * *", duration: "168h", executors: 10}.object(),
		}},
		"learned":                   {"type": "Learned"},
		"learned-target":            {"type": "Learned", "learned": map[string]any{"targetWarmPercent": int64(95)}},
		"windows-kept-while-static": {"type": "Static", "windows": []any{warmWindow{}.object()}},
	}
	for name, wp := range cases {
		t.Run(name, func(t *testing.T) {
			createStrict(t, pool("warm-"+name, map[string]any{"maxExecutors": int64(10), "allowedQueryServices": allowed, "warmPolicy": wp}))
		})
	}
}

func TestConsistentInstanceConfigAccepted(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	cases := map[string]map[string]any{
		"aws":   {"instanceType": "r7gd.8xlarge", "instanceFamily": "r7gd"},
		"gcp":   {"instanceType": "n2-highmem-16", "instanceFamily": "n2-highmem"},
		"azure": {"instanceType": "Standard_E16ds_v5", "instanceFamily": "Edsv5"},
	}
	for name, ic := range cases {
		t.Run(name, func(t *testing.T) {
			u := pool("consistent-"+name, map[string]any{"maxExecutors": int64(3), "allowedQueryServices": []any{map[string]any{"name": "qs"}}, "instanceConfig": ic})
			if _, err := dyn.Resource(poolsR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
				t.Errorf("the API server rejected a consistent instanceConfig %v: %v", ic, err)
			}
		})
	}
}

func TestPrinterColumns(t *testing.T) {
	fixture.CreateNamespaces(t, c, ns)
	u := pool("columns", map[string]any{"maxExecutors": int64(3), "allowedQueryServices": []any{map[string]any{"name": "qs"}}})
	if _, err := dyn.Resource(poolsR).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Ask for a server-side table, as kubectl get does.
	raw, err := kube.DiscoveryClient.RESTClient().Get().AbsPath("/apis/e6data.io/v1alpha1/namespaces", ns, "pools").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tbl := &metav1.Table{}
	if err := json.Unmarshal(raw, tbl); err != nil {
		t.Fatal(err)
	}
	var normal, wide []string
	for _, c := range tbl.ColumnDefinitions {
		wide = append(wide, strings.ToUpper(c.Name))
		if c.Priority == 0 {
			normal = append(normal, strings.ToUpper(c.Name))
		}
	}
	if diff := cmp.Diff([]string{"NAME", "PHASE", "AVAILABLE", "OCCUPIED", "TOTAL"}, normal); diff != "" {
		t.Errorf("kubectl get pool columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NAME", "PHASE", "AVAILABLE", "OCCUPIED", "TOTAL", "INSTANCE", "CLOUD"}, wide); diff != "" {
		t.Errorf("kubectl get pool -o wide columns (-want +got):\n%s", diff)
	}
}

func TestQueryServicePreservesUnknownFields(t *testing.T) {
	objs := readObjects(t, filepath.Join("..", "..", "examples", "queryservices.yaml"))
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			fixture.CreateNamespaces(t, c, u.GetName())
		}
	}
	for _, u := range objs {
		if u.GetKind() != "QueryService" {
			continue
		}
		// A real QueryService carries fields burstpool does not model.
		if err := unstructured.SetNestedField(u.Object, "s3://warehouse", "spec", "catalog", "location"); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(u.Object, int64(3), "spec", "executor", "jvm", "threads"); err != nil {
			t.Fatal(err)
		}
		got, err := dyn.Resource(qsR).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the API server rejected QueryService %s: %v", u.GetName(), err)
		}
		if diff := cmp.Diff(u.Object["spec"], got.Object["spec"]); diff != "" {
			t.Errorf("QueryService %s spec not stored as written (-want +got):\n%s", u.GetName(), diff)
		}
	}
}
