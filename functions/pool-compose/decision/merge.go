package decision

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
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
