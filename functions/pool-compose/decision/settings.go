package decision

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// The cluster's settings live in EnvironmentConfigs, which the function asks
// Crossplane for as a required resource; the Composition's input holds only
// safe defaults, so the packaged Composition fits every cluster.
//
// DefaultEnvironmentConfig is the name of the EnvironmentConfig read when the
// input selects none.
const DefaultEnvironmentConfig = "burstpool"

// EnvironmentName is the EnvironmentConfig a person is told to edit.
func EnvironmentName(cfg *v1beta1.Input) string {
	if e := cfg.EnvironmentConfig; e != nil && e.Name != "" && len(e.MatchLabels) == 0 {
		return e.Name
	}
	if e := cfg.EnvironmentConfig; e != nil && len(e.MatchLabels) > 0 {
		return "labelled " + selectorString(e.MatchLabels)
	}
	return DefaultEnvironmentConfig
}

// Settings are the function input with the cluster's EnvironmentConfigs
// merged over it, and where each value came from, so a problem names the
// object and field to fix.
type Settings struct {
	Config *v1beta1.Input
	// envs are the data of the EnvironmentConfigs read, in merge order.
	envs []NamedData
	// target is the EnvironmentConfig to edit: the last one read, else the
	// one the input selects.
	target string
	// input is the function input as sent, to tell which settings it set.
	input map[string]any
}

type NamedData struct {
	Name string
	Data map[string]any
}

// SettingError is a setting that is wrong or missing, by its path in an
// EnvironmentConfig's data (and in the function input).
type SettingError struct {
	Path string
	// Message says what is wrong; it does not repeat Path.
	Message string
}

// where names the object a setting at path should be fixed in: the
// EnvironmentConfig that set it, else the function input when the input set
// it, else the EnvironmentConfig the cluster's settings belong in.
//
// A path into a list entry (tenancy.namespaces[0].methods) is fixed where
// the entry is set when the field itself is not.
func (s Settings) where(path string) string {
	for p := path; p != ""; p = entryOf(p) {
		for i := len(s.envs) - 1; i >= 0; i-- {
			if has(s.envs[i].Data, p) {
				return fmt.Sprintf("EnvironmentConfig %s field data.%s", s.envs[i].Name, path)
			}
		}
		if has(s.input, p) {
			return fmt.Sprintf("the Composition's function input field %s", path)
		}
	}
	return fmt.Sprintf("EnvironmentConfig %s field data.%s", s.target, path)
}

// entryOf is the list entry a path leads into (a.b[1] of a.b[1].c), or ""
// when it leads into none.
func entryOf(path string) string {
	i := strings.LastIndex(path, "]")
	if i < 0 || i == len(path)-1 {
		i = strings.LastIndex(path[:max(i, 0)], "]")
	}
	if i < 0 {
		return ""
	}
	return path[:i+1]
}

// Problem formats setting errors as one message a person can act on.
func (s Settings) Problem(errs []SettingError) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%s %s", s.where(e.Path), e.Message))
	}
	return strings.Join(msgs, "; ")
}

// has tells whether the dotted path is set in m.
func has(m map[string]any, path string) bool {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		k, idx, indexed := strings.Cut(k, "[")
		mm, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = mm[k]; !ok {
			return false
		}
		if !indexed {
			continue
		}
		l, isList := v.([]any)
		i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if !isList || err != nil || i < 0 || i >= len(l) {
			return false
		}
		v = l[i]
	}
	return true
}

// MergeSettings merges the EnvironmentConfigs' data over the function input
// (objects field by field, lists and values whole), defaults what is unset
// and validates the result. input is the input as sent; cfg is it decoded;
// helperImage is the default warmup helper image (Default).
func MergeSettings(input *structpb.Struct, cfg *v1beta1.Input, envs []NamedData, helperImage string) (Settings, []SettingError) {
	// A problem found before the merge leaves the input's own settings,
	// defaulted, for Compute to detect the pool's cloud with.
	Default(cfg, helperImage)
	s := Settings{Config: cfg, envs: envs, target: EnvironmentName(cfg), input: input.AsMap()}
	if len(envs) > 0 && (cfg.EnvironmentConfig == nil || len(cfg.EnvironmentConfig.MatchLabels) == 0) {
		s.target = envs[len(envs)-1].Name
	}
	merged := s.input
	var errs []SettingError
	for _, e := range envs {
		for _, u := range unknownSettings("", e.Data, reflect.TypeFor[v1beta1.Input]()) {
			errs = append(errs, SettingError{Path: u, Message: "is not a setting (see docs/settings-reference.md)"})
		}
		merged = mergeMaps(merged, e.Data)
	}
	if len(errs) > 0 {
		return s, errs
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return s, []SettingError{{Path: "data", Message: err.Error()}}
	}
	out := &v1beta1.Input{}
	if err := json.Unmarshal(b, out); err != nil {
		var te *json.UnmarshalTypeError
		if stderrors.As(err, &te) {
			return s, []SettingError{{Path: te.Field, Message: fmt.Sprintf("must be a %s, not a %s", te.Type, te.Value)}}
		}
		return s, []SettingError{{Path: "data", Message: err.Error()}}
	}
	// The input alone chooses where settings come from.
	out.EnvironmentConfig = cfg.EnvironmentConfig
	Default(out, helperImage)
	s.Config = out
	return s, ValidateInput(out)
}

// mergeMaps returns over merged into base: objects merge field by field,
// anything else in over replaces base's.
func mergeMaps(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeMaps(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// unknownSettings lists the paths in data that name no field of t (a
// struct type with JSON tags); environmentConfig is not a setting.
func unknownSettings(prefix string, data map[string]any, t reflect.Type) []string {
	fields := settingFields(t)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		p := prefix + k
		ft, ok := fields[k]
		if !ok {
			out = append(out, p)
			continue
		}
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		sub, isMap := data[k].(map[string]any)
		if isMap && ft.Kind() == reflect.Struct {
			out = append(out, unknownSettings(p+".", sub, ft)...)
		}
		if l, isList := data[k].([]any); isList && ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			for i, it := range l {
				if m, ok := it.(map[string]any); ok {
					out = append(out, unknownSettings(fmt.Sprintf("%s[%d].", p, i), m, ft.Elem())...)
				}
			}
		}
	}
	return out
}

// settingFields are the JSON fields of the struct type t by name, those of
// its inlined (embedded) structs included.
func settingFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			maps.Copy(fields, settingFields(f.Type))
			continue
		}
		if name == "" || name == "-" || name == "environmentConfig" {
			continue
		}
		fields[name] = f.Type
	}
	return fields
}

// RequiredSettings are the settings a pool's cloud and method need that
// neither the EnvironmentConfig nor the input sets, checked before anything
// is composed. manageNodePool tells whether the pool's cloud node pool is
// composed; clusterID is the pool's (or the settings') cluster ID.
func RequiredSettings(det Detection, manageNodePool bool, clusterID string, c *v1beta1.Input) []SettingError {
	// nodeAccess checks what every AWS NodeClass needs: a role, and how to
	// find subnets and security groups.
	nodeAccess := func(prefix, on string, hasRole bool, subnets, sgs []v1beta1.SelectorTerm) []SettingError {
		var errs []SettingError
		if !hasRole {
			errs = append(errs, SettingError{Path: prefix + ".role", Message: "is required on " + on + ": the IAM role pool nodes run with (burstpool does not create it)"})
		}
		if c.ClusterName == "" && (len(subnets) == 0 || len(sgs) == 0) {
			errs = append(errs, SettingError{Path: "clusterName", Message: "is required on " + on + " unless " + prefix + ".subnetSelectorTerms and " +
				prefix + ".securityGroupSelectorTerms are set: pool nodes find their subnets and security groups by the tag karpenter.sh/discovery={clusterName}"})
		}
		return errs
	}
	switch {
	case det.Cloud == cloudAWS && det.Method == methodKarpenter:
		a := c.AWS
		return nodeAccess("aws", "AWS with Karpenter", a.Role != "" || a.InstanceProfile != "", a.SubnetSelectorTerms, a.SecurityGroupSelectorTerms)
	case det.Method == methodEKSAutoMode:
		e := c.EKSAutoMode
		return nodeAccess("eksAutoMode", "EKS Auto Mode", e.Role != "", e.SubnetSelectorTerms, e.SecurityGroupSelectorTerms)
	case det.Method == methodNodeGroup:
		return nodeGroupSettings(det.Cloud, c) // nodegroup.go
	case manageNodePool && (det.Method == methodLKE || det.Method == methodDOKS) && clusterID == "":
		return []SettingError{{Path: "provisioning.clusterId", Message: "is required to compose " + det.Method + " node pools (or set spec.provisioning.clusterId on the Pool)"}}
	}
	return nil
}

// settingsReason is the condition reason of a pool that waits for settings.
const (
	reasonSettingsInvalid = "SettingsInvalid"
	reasonSettingsMissing = "SettingsMissing"
)

// awaitSettings makes the pool Pending (the Outcome's Problem), keeping
// every composed object as it is, while the EnvironmentConfig it was
// composed with is not found (settingsAvailability), its settings are
// invalid or a setting its cloud needs is missing. A pool being deleted
// does not wait.
func awaitSettings(in Input, f Facts) Outcome {
	var o Outcome
	if in.Deleting {
		return o
	}
	if o = settingsAvailability(in); o.Problem != nil {
		if in.PreviousConditions[CondProvisioned] != o.Problem.Reason {
			o.event(true, o.Problem.Reason, o.Problem.Message)
		}
		o.preserve(slices.Sorted(maps.Keys(in.Observed))...)
		return o
	}
	reason, msg := reasonSettingsInvalid, in.SettingsProblem
	if msg == "" && f.Detection.Problem == "" {
		errs := RequiredSettings(f.Detection, manageNodePool(in) && !f.Static, clusterID(in), in.Config)
		errs = NodeIAMSettings(composesNodeIAM(in, f), in.Config, errs) // node IAM (iam.go)
		if len(errs) > 0 {
			reason, msg = reasonSettingsMissing, in.Settings.Problem(errs)
		}
	}
	if msg == "" {
		return o
	}
	o.Problem = pending(reason, msg)
	if in.PreviousConditions[CondProvisioned] != reason {
		o.event(true, reason, msg)
	}
	o.preserve(slices.Sorted(maps.Keys(in.Observed))...)
	return o
}

// clusterID is the pool's cluster ID: spec.provisioning's, else the
// settings'.
func clusterID(in Input) string {
	if p := in.Spec.Provisioning; p != nil && p.ClusterID != "" {
		return p.ClusterID
	}
	if p := in.Config.Provisioning; p != nil {
		return p.ClusterID
	}
	return ""
}
