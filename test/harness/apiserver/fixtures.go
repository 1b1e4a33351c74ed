package apiserver

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// QueryService is a QueryService namespace/name with labels and
// spec.executor, for the QueryService CRD in examples/crds.
func QueryService(name, namespace string, labels map[string]string, executor map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"executor": executor}}}
	u.SetGroupVersionKind(qsv1alpha1.GroupVersionKind)
	u.SetName(name)
	u.SetNamespace(namespace)
	u.SetLabels(labels)
	return u
}

// Parallel runs fn for 0..n-1 on workers goroutines, as a test creates
// many objects, and fails the test with one of fn's errors.
func Parallel(t testing.TB, n, workers int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}
