package decision

import (
	"fmt"
	"strings"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Where a pool's architecture comes from.
const (
	archFromField   = "spec.instanceConfig.architecture"
	ArchFromDefault = "default (amd64): no instance type, family, architecture or QueryService declares one"
)

// archChoice is the architecture of the pool's nodes and why.
type archChoice struct {
	Arch string
	From string
	// Conflict names the attached QueryServices that declare another
	// architecture; "" when none does.
	Conflict string
}

// architecture decides the architecture of a pool sized from the catalog,
// first match wins: spec.instanceConfig.architecture; what the attached
// QueryServices declare (a kubernetes.io/arch executor node selector, else
// the arch of their executors' instance type), the first by namespace and
// name deciding; the previous type's, once executors have run on it; amd64.
// A pinned or inherited type or a family sets the arch itself; the caller
// reports it from the sizing result.
func architecture(in Input, attached []Attachment, cloud string, previous string, locked bool) archChoice {
	if ic := in.Spec.InstanceConfig; ic != nil && ic.Architecture != "" {
		return archChoice{Arch: ic.Architecture, From: archFromField}
	}
	var c archChoice
	var others []string
	for _, a := range attached {
		arch, why := declaredArch(in, cloud, a)
		switch {
		case arch == "":
		case c.Arch == "":
			c = archChoice{Arch: arch, From: why}
		case arch != c.Arch:
			others = append(others, fmt.Sprintf("QueryService %s (%s)", a.Key(), arch))
		}
	}
	if c.Arch != "" {
		if len(others) > 0 {
			c.Conflict = strings.Join(others, ", ")
		}
		return c
	}
	if locked {
		if arch := typeArch(in, cloud, previous); arch != "" {
			return archChoice{Arch: arch, From: "the previous type " + previous + ", which executors have run on"}
		}
	}
	return archChoice{Arch: sizing.ArchAMD64, From: ArchFromDefault}
}

// declaredArch is the architecture an attached QueryService declares.
func declaredArch(in Input, cloud string, a Attachment) (string, string) {
	e := a.QS.Spec.Executor
	if arch := e.NodeSelector[objects.LabelArch]; arch != "" {
		return arch, fmt.Sprintf("QueryService %s (executor nodeSelector %s=%s)", a.Key(), objects.LabelArch, arch)
	}
	if arch := typeArch(in, cloud, e.InstanceType); arch != "" {
		return arch, fmt.Sprintf("QueryService %s (its executors run on %s, %s)", a.Key(), e.InstanceType, arch)
	}
	return "", ""
}

// typeArch is the architecture of an instance type from the function
// input's overrides or the cloud's catalog; "" when unknown.
func typeArch(in Input, cloud, name string) string {
	if name == "" {
		return ""
	}
	for _, o := range in.Config.CatalogOverrides {
		if o.Name == name {
			return o.Arch
		}
	}
	from := sizing.Cloud(cloud)
	if from == sizing.CloudKWOK && in.KWOKCatalog != "" {
		from = in.KWOKCatalog
	}
	cat, err := sizing.SharedCatalog(from)
	if err != nil {
		return ""
	}
	if it, ok := cat.Lookup(name); ok {
		return it.Arch
	}
	return ""
}

// executorsHaveRun tells whether an executor has run on the pool: recorded
// in status, or seen now in the PoolCapacity's allocations.
func executorsHaveRun(prev *poolv1alpha1.SizingStatus, o *CapacityObservation) bool {
	if prev != nil && prev.ExecutorsHaveRun {
		return true
	}
	if o == nil {
		return false
	}
	if o.OccupiedExecutors > 0 {
		return true
	}
	for _, a := range o.Allocations {
		if a.PoolExecutors > 0 {
			return true
		}
	}
	return false
}
