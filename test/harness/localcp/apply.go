package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// FieldManager is the server-side apply field manager of Apply.
const FieldManager = "localcp"

// Apply server-side applies every object of a multi-document YAML stream,
// in order, taking ownership of conflicting fields. Namespaced objects
// without a namespace go to "default". A kind the API server does not serve
// yet (a CRD applied just before) is retried for up to kindServedTimeout.
func Apply(ctx context.Context, cfg *rest.Config, manifests []byte) error {
	objs, err := Decode(manifests)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(kindServedTimeout)
	for _, o := range objs {
		for {
			err = applyOne(ctx, c, o)
			if err == nil {
				break
			}
			if !meta.IsNoMatchError(err) || time.Now().After(deadline) {
				return fmt.Errorf("cannot apply %s %s: %w", o.GetKind(), objName(o), err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
			// A fresh client discovers the kinds served since.
			if c, err = newClient(cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// ApplyFiles applies every *.yaml and *.yml file of the given folders, in
// name order.
func ApplyFiles(ctx context.Context, cfg *rest.Config, dirs ...string) error {
	var buf bytes.Buffer
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("cannot read manifests: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() || (!strings.HasSuffix(e.Name(), ".yaml") && !strings.HasSuffix(e.Name(), ".yml")) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, e.Name())) //nolint:gosec // manifests the caller names
			if err != nil {
				return err
			}
			buf.WriteString("\n---\n")
			buf.Write(b)
		}
	}
	return Apply(ctx, cfg, buf.Bytes())
}

// CRDNames returns the names of the CustomResourceDefinitions among the
// *.yaml files of the given folders.
func CRDNames(dirs ...string) ([]string, error) {
	var names []string
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("cannot read manifests: %w", err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".yaml") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, e.Name())) //nolint:gosec // manifests the caller names
			if err != nil {
				return nil, err
			}
			objs, err := Decode(b)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", e.Name(), err)
			}
			for _, o := range objs {
				if o.GetKind() == "CustomResourceDefinition" {
					names = append(names, o.GetName())
				}
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// WaitEstablished waits until every named CustomResourceDefinition has the
// Established condition.
func WaitEstablished(ctx context.Context, cfg *rest.Config, timeout time.Duration, names ...string) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, n := range names {
		for {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			err := c.Get(ctx, types.NamespacedName{Name: n}, crd)
			if err == nil && hasCondition(crd, "Established", "True") {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("CustomResourceDefinition %s is not Established after %s (last error: %v)", n, timeout, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// hasCondition reports whether u's status has condition typ with status.
func hasCondition(u *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}

func newClient(cfg *rest.Config) (client.Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("cannot discover the API: %w", err)
	}
	return client.New(cfg, client.Options{HTTPClient: hc, Mapper: m})
}

func applyOne(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	if o.GetNamespace() == "" {
		namespaced, err := c.IsObjectNamespaced(o)
		if err != nil {
			return err
		}
		if namespaced {
			o.SetNamespace("default")
		}
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldManager), client.ForceOwnership)
}

// Decode splits a YAML or JSON stream into objects, as Apply reads it,
// skipping empty documents; an object needs an apiVersion and a kind.
func Decode(manifests []byte) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	var out []*unstructured.Unstructured
	for {
		var raw runtime.RawExtension
		if err := d.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("cannot decode manifests: %w", err)
		}
		if len(raw.Raw) == 0 {
			continue
		}
		m := map[string]any{}
		// Numbers as unstructured holds them: int64 where whole.
		if err := utiljson.Unmarshal(raw.Raw, &m); err != nil {
			return nil, fmt.Errorf("cannot decode manifests: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetKind() == "" || o.GetAPIVersion() == "" {
			return nil, fmt.Errorf("manifest %q has no apiVersion or kind", o.GetName())
		}
		out = append(out, o)
	}
}

func objName(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
