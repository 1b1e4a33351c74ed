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
	var out bytes.Buffer
	for _, f := range stageFiles {
		b, err := os.ReadFile(filepath.Join(kwokDir, f))
		if err != nil {
			return nil, fmt.Errorf("cannot read kwok's default stage: %w", err)
		}
		st := map[string]any{}
		if err := yaml.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("cannot parse kwok's stage %s: %w", f, err)
		}
		if err := hold(st); err != nil {
			return nil, fmt.Errorf("kwok's stage %s: %w", f, err)
		}
		y, err := yaml.Marshal(st)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), nil
}

// hold makes st wait for AnnotationStartAt when it is one of heldStages.
func hold(st map[string]any) error {
	meta, _ := st["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
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
