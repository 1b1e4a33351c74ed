// Package pbstruct writes protobuf Structs, the form in which Crossplane
// sends objects to a composition function, from YAML for unit tests.
package pbstruct

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"
)

// FromYAML converts YAML (or JSON) to a protobuf Struct, failing t when it
// is not an object.
func FromYAML(t testing.TB, y string) *structpb.Struct {
	t.Helper()
	j := []byte(y)
	if !json.Valid(j) {
		var err error
		j, err = yaml.YAMLToJSON([]byte(y))
		if err != nil {
			t.Fatalf("YAMLToJSON: %v\n%s", err, y)
		}
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(j, s); err != nil {
		t.Fatalf("protojson.Unmarshal: %v\n%s", err, j)
	}
	return s
}
