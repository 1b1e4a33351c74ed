package decision

import (
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Input is everything Compute needs, gathered from one RunFunctionRequest.
type Input struct {
	Now time.Time

	// Config is the function input with the cluster's EnvironmentConfig
	// merged over it, defaulted.
	Config *v1beta1.Input
	// Settings says where each setting came from.
	Settings Settings
	// SettingsProblem says which settings are invalid, naming the
	// EnvironmentConfig field (or function input field) to fix.
	SettingsProblem string

	// Pool names the pool's objects: the claim's name, else the XPool's.
	Pool string
	// Namespace holds namespaced objects: the claim's namespace, else the
	// input's namespace.
	Namespace string
	Deleting  bool

	Spec     poolv1alpha1.PoolSpec
	Previous poolv1alpha1.PoolStatus
	// PreviousConditions are the reasons of the XPool's conditions by
	// type, so events are emitted only when a condition changes.
	PreviousConditions map[string]string
	// WatchCircuit is whether Crossplane drops the watch events of the
	// pool's composed resources (follow.go).
	WatchCircuit WatchCircuit

	// QueryServices are those Crossplane supplied for the pool's
	// Requirements: the ones it names, selects or that carry its label.
	QueryServices []QueryService
	// CRDs are the detection CRDs that exist.
	CRDs map[string]bool

	// Observed composed resources by name, as Crossplane sent them.
	Observed map[resource.Name]*structpb.Struct
	// Existing are the cluster-scoped objects named after the pool that
	// exist, whoever owns them, by the composed-resource name the pool
	// would give them (see OwnedNames).
	Existing map[resource.Name]*structpb.Struct

	// Size decides the pool's instance type.
	Size func(SizeRequest) (sizing.Result, error)
	// KWOKCatalog is the catalog a kwok cluster's instance types come from
	// (the function's --kwok-catalog); empty means the kwok catalog.
	KWOKCatalog sizing.Cloud

	// RequestSize is the size of the request's QueryServices.
	RequestSize RequestSize
}
