package burst

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// KwokModule and KwokVersion are the kwok whose default stages the
// simulated cloud starts from (the version tools/kwok pins).
const (
	KwokModule  = "sigs.k8s.io/kwok"
	KwokVersion = "v0.7.0"
)

// stageFiles are kwok's default stages (what kwok runs with an empty
// config and its default node lease duration), relative to its module.
var stageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// heldStages are the stages that wait for AnnotationStartAt.
var heldStages = map[string]bool{"node-initialize": true, "pod-ready": true}

// KwokConfig is kwok's --config for the simulated cloud: kwok's default
// stages, read from its module at kwokDir, where node-initialize and
// pod-ready wait until the object carries AnnotationStartAt and until the
// time it names.
func KwokConfig(kwokDir string) ([]byte, error) {
	stages, err := defaultStages(kwokDir)
	if err != nil {
		return nil, err
	}
	for _, st := range stages {
		if err := hold(st); err != nil {
			return nil, fmt.Errorf("kwok's stage %s: %w", stageName(st), err)
		}
	}
	return writeStages(stages)
}

// defaultStages reads kwok's default stages from its module at kwokDir.
func defaultStages(kwokDir string) ([]map[string]any, error) {
	var out []map[string]any
	for _, f := range stageFiles {
		b, err := os.ReadFile(filepath.Join(kwokDir, f))
		if err != nil {
			return nil, fmt.Errorf("cannot read kwok's default stage: %w", err)
		}
		st := map[string]any{}
		if err := yaml.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("cannot parse kwok's stage %s: %w", f, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// writeStages writes stages as YAML documents.
func writeStages(stages []map[string]any) ([]byte, error) {
	var out bytes.Buffer
	for _, st := range stages {
		y, err := yaml.Marshal(st)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), nil
}

func stageName(st map[string]any) string {
	meta, _ := st["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}

// hold makes st wait for AnnotationStartAt when it is one of heldStages.
func hold(st map[string]any) error {
	name := stageName(st)
	if !heldStages[name] {
		return nil
	}
	spec, ok := st["spec"].(map[string]any)
	if !ok {
		return fmt.Errorf("stage %q has no spec", name)
	}
	sel, _ := spec["selector"].(map[string]any)
	if sel == nil {
		sel = map[string]any{}
		spec["selector"] = sel
	}
	key := fmt.Sprintf(".metadata.annotations[%q]", AnnotationStartAt)
	exprs, _ := sel["matchExpressions"].([]any)
	sel["matchExpressions"] = append(exprs, map[string]any{"key": key, "operator": "Exists"})
	if _, ok := spec["delay"]; ok {
		return fmt.Errorf("stage %q already has a delay", name)
	}
	spec["delay"] = map[string]any{"durationFrom": map[string]any{"expressionFrom": key}}
	return nil
}

// KwokConfigPulling is kwok's --config for a control plane that runs every
// pod at once, as kwok's defaults do, except the warmup pods of the pool
// namespaces ns: they stay Pending, as while their pull init container
// runs, until they carry AnnotationStartAt and until the time it names.
// A test models a pull's end with it.
func KwokConfigPulling(kwokDir string, ns []string) ([]byte, error) {
	stages, err := defaultStages(kwokDir)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, st := range stages {
		if stageName(st) != "pod-ready" || len(ns) == 0 {
			out = append(out, st)
			continue
		}
		split, err := pullingStages(st, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, split...)
	}
	return writeStages(out)
}

// pullingStages splits kwok's pod-ready stage in three, since a selector
// cannot say "not a warmup pod of ns": pods outside ns, pods of ns other
// than warmup pods, and warmup pods of ns, held on AnnotationStartAt.
func pullingStages(st map[string]any, ns []string) ([]map[string]any, error) {
	values := make([]any, 0, len(ns))
	for _, n := range ns {
		values = append(values, n)
	}
	component := `.metadata.labels["e6data.io/component"]`
	with := func(name string, exprs ...map[string]any) (map[string]any, error) {
		b, err := yaml.Marshal(st)
		if err != nil {
			return nil, err
		}
		c := map[string]any{}
		if err := yaml.Unmarshal(b, &c); err != nil {
			return nil, err
		}
		c["metadata"].(map[string]any)["name"] = name
		spec := c["spec"].(map[string]any)
		sel, _ := spec["selector"].(map[string]any)
		if sel == nil {
			sel = map[string]any{}
			spec["selector"] = sel
		}
		all, _ := sel["matchExpressions"].([]any)
		for _, e := range exprs {
			all = append(all, e)
		}
		sel["matchExpressions"] = all
		return c, nil
	}
	outside, err := with("pod-ready", map[string]any{"key": ".metadata.namespace", "operator": "NotIn", "values": values})
	if err != nil {
		return nil, err
	}
	others, err := with("pod-ready-pool-namespaces", map[string]any{"key": ".metadata.namespace", "operator": "In", "values": values},
		map[string]any{"key": component, "operator": "NotIn", "values": []any{"warmup"}})
	if err != nil {
		return nil, err
	}
	pulling, err := with("pod-ready-pulling", map[string]any{"key": ".metadata.namespace", "operator": "In", "values": values},
		map[string]any{"key": component, "operator": "In", "values": []any{"warmup"}})
	if err != nil {
		return nil, err
	}
	pulling["metadata"].(map[string]any)["name"] = "pod-ready"
	if err := hold(pulling); err != nil {
		return nil, err
	}
	pulling["metadata"].(map[string]any)["name"] = "pod-ready-pulling"
	return []map[string]any{outside, others, pulling}, nil
}
