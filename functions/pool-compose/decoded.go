package main

import (
	"encoding/json"
	"slices"
	"sync"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"google.golang.org/protobuf/types/known/structpb"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// The function input is the Composition's, the settings merged from it
// and the cluster's EnvironmentConfigs change as seldom, and a pool's spec
// seldom more: each is decoded once per distinct content (by digest), not
// on every call, and each call gets a copy of its own.

// maxDecoded bounds each of decodeMemo's maps; when one is full it starts
// over.
const maxDecoded = 256

// decodeMemo keeps decoded inputs, merged settings and pool specs by the
// digest of what they were decoded from. It is safe for concurrent use;
// what it keeps is never modified, callers get copies.
type decodeMemo struct {
	mu     sync.Mutex
	inputs map[digest]decodedInput
	merged map[digest]mergedSettings
	specs  map[digest]decodedSpec
}

type decodedInput struct {
	cfg *v1beta1.Input
	err error
}

type mergedSettings struct {
	settings decision.Settings
	errs     []decision.SettingError
}

type decodedSpec struct {
	spec poolv1alpha1.PoolSpec
	err  error
}

// decoded is the function's memo of what it decodes.
var decoded = &decodeMemo{}

// input decodes req's function input (request.GetInput).
func (m *decodeMemo) input(req *fnv1.RunFunctionRequest) (*v1beta1.Input, error) {
	key := digestOf(req.GetInput())
	m.mu.Lock()
	d, ok := m.inputs[key]
	m.mu.Unlock()
	if !ok {
		d.cfg = &v1beta1.Input{}
		d.err = request.GetInput(req, d.cfg)
		m.mu.Lock()
		if m.inputs == nil || len(m.inputs) >= maxDecoded {
			m.inputs = map[digest]decodedInput{}
		}
		m.inputs[key] = d
		m.mu.Unlock()
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.cfg.DeepCopy(), nil
}

// merge merges the EnvironmentConfigs Crossplane supplied in req over its
// function input, decoded as cfg (decision.MergeSettings).
func (m *decodeMemo) merge(req *fnv1.RunFunctionRequest, cfg *v1beta1.Input) (decision.Settings, []decision.SettingError) {
	key := digestOf(req.GetInput(), req.GetRequiredResources()[reqEnvironment])
	m.mu.Lock()
	s, ok := m.merged[key]
	m.mu.Unlock()
	if !ok {
		envs, _ := environmentData(req)
		s.settings, s.errs = decision.MergeSettings(req.GetInput(), cfg.DeepCopy(), envs, defaultHelperImage)
		m.mu.Lock()
		if m.merged == nil || len(m.merged) >= maxDecoded {
			m.merged = map[digest]mergedSettings{}
		}
		m.merged[key] = s
		m.mu.Unlock()
	}
	out := s.settings
	out.Config = out.Config.DeepCopy()
	return out, slices.Clone(s.errs)
}

// spec decodes an XPool's spec into a Pool spec, ignoring the fields
// Crossplane adds.
func (m *decodeMemo) spec(s *structpb.Struct) (poolv1alpha1.PoolSpec, error) {
	key := digestOf(s)
	m.mu.Lock()
	d, ok := m.specs[key]
	m.mu.Unlock()
	if !ok {
		d.err = decodePoolSpec(s, &d.spec)
		m.mu.Lock()
		if m.specs == nil || len(m.specs) >= maxDecoded {
			m.specs = map[digest]decodedSpec{}
		}
		m.specs[key] = d
		m.mu.Unlock()
	}
	return *d.spec.DeepCopy(), d.err
}

// decodePoolSpec decodes s into spec through JSON, as the API server would.
func decodePoolSpec(s *structpb.Struct, spec *poolv1alpha1.PoolSpec) error {
	b, err := json.Marshal(s.AsMap())
	if err != nil {
		return err
	}
	return json.Unmarshal(b, spec)
}
