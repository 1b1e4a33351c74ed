package decision

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// errInvalid marks a Pool spec that cannot be rendered at all.
var errInvalid = errors.New("invalid pool")

// Validate checks what the Pool's schema should already enforce, so a spec
// that bypassed it is refused with a message instead of rendered wrong:
// one error per problem, at the field's path, whose detail says what to
// change.
func Validate(pool string, s poolv1alpha1.PoolSpec) field.ErrorList {
	var errs field.ErrorList
	name, spec := field.NewPath("metadata", "name"), field.NewPath("spec")
	if pool == "" {
		errs = append(errs, field.Required(name, "the pool has no name"))
	}
	if len(pool) > 63 {
		errs = append(errs, field.Invalid(name, pool, fmt.Sprintf("the pool name %q is %d characters long: pool nodes and pods carry it as a label value, which holds at most 63; pick a shorter name", pool, len(pool))))
	}
	if s.MaxExecutors < 1 {
		errs = append(errs, field.Invalid(spec.Child("maxExecutors"), s.MaxExecutors, fmt.Sprintf("spec.maxExecutors is %d: set it to at least 1", s.MaxExecutors)))
	}
	if s.MinExecutors < 0 || s.MinExecutors > max(s.MaxExecutors, 0) {
		errs = append(errs, field.Invalid(spec.Child("minExecutors"), s.MinExecutors, fmt.Sprintf("spec.minExecutors is %d: set it between 0 and spec.maxExecutors (%d)", s.MinExecutors, s.MaxExecutors)))
	}
	if s.ExecutorsPerNode < 0 {
		errs = append(errs, field.Invalid(spec.Child("executorsPerNode"), s.ExecutorsPerNode, fmt.Sprintf("spec.executorsPerNode is %d: set it to at least 1", s.ExecutorsPerNode)))
	}
	if sel := spec.Child("queryServiceSelector"); s.QueryServiceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.QueryServiceSelector); err != nil {
			errs = append(errs, field.Invalid(sel, s.QueryServiceSelector, fmt.Sprintf("spec.queryServiceSelector is invalid: %v", err)))
		} else if SelectorLabels(s.QueryServiceSelector) == nil {
			errs = append(errs, field.Invalid(sel, s.QueryServiceSelector, "spec.queryServiceSelector must pin at least one label to one value (a matchLabels entry, or a matchExpressions entry with operator In and one value): "+
				"QueryServices are fetched by label equality, and a selector without one would fetch every QueryService in the cluster on every reconcile"))
		}
	}
	if len(s.AllowedQueryServices) == 0 && s.QueryServiceSelector == nil {
		errs = append(errs, field.Required(spec.Child("allowedQueryServices"), "set spec.allowedQueryServices or spec.queryServiceSelector: a pool must say which QueryServices may use it"))
	}
	if s.ImageConfig != nil && s.ImageConfig.UnusedImageRetention != "" {
		if d, err := time.ParseDuration(s.ImageConfig.UnusedImageRetention); err != nil || d < 0 {
			errs = append(errs, field.Invalid(spec.Child("imageConfig", "unusedImageRetention"), s.ImageConfig.UnusedImageRetention, fmt.Sprintf("spec.imageConfig.unusedImageRetention %q is not a duration such as 1h or 30m", s.ImageConfig.UnusedImageRetention)))
		}
	}
	if s.StorageAgent != nil && s.StorageAgent.Enabled && s.StorageAgent.Image == "" {
		errs = append(errs, field.Required(spec.Child("storageAgent", "image"), "spec.storageAgent.image is required when spec.storageAgent.enabled is true"))
	}
	if ic := s.InstanceConfig; ic != nil && ic.InstanceType != "" && ic.InstanceFamily != "" && !typeInFamily(ic.InstanceType, ic.InstanceFamily) {
		errs = append(errs, field.Invalid(spec.Child("instanceConfig", "instanceType"), ic.InstanceType, "spec.instanceConfig.instanceType must belong to spec.instanceConfig.instanceFamily: make them agree or set only one"))
	}
	for i, t := range s.Tolerations {
		if t.Key == "" && t.Operator != string(corev1.TolerationOpExists) {
			errs = append(errs, field.Invalid(spec.Child("tolerations").Index(i).Child("operator"), t.Operator, fmt.Sprintf("spec.tolerations[%d] has no key: a toleration without a key must use operator Exists", i)))
		}
	}
	return errs
}

// InvalidSpec is the error that makes a pool with errs Fatal: errInvalid
// and each error's detail, which names the field and what to change.
func InvalidSpec(errs field.ErrorList) error {
	details := make([]string, 0, len(errs))
	for _, e := range errs {
		details = append(details, e.Detail)
	}
	return fmt.Errorf("%w: %s", errInvalid, strings.Join(details, "; "))
}

// typeInFamily is the Pool API's CEL rule for instanceType and
// instanceFamily, word for word: the type starts with the family, or it is
// an Azure size (Standard_...) whose series letter is the family's first
// letter and whose version suffix (_v5) is the family's last two
// characters, for families of more than two characters.
func typeInFamily(t, f string) bool {
	if strings.HasPrefix(t, f) {
		return true
	}
	return strings.HasPrefix(t, "Standard_") && len(f) > 2 &&
		strings.HasPrefix(t, "Standard_"+f[:1]) && strings.HasSuffix(t, "_"+f[len(f)-2:])
}
