package decision

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Defaults of the function input. Crossplane does not apply the input
// CRD's defaults, so the function applies the same ones.
const (
	DefaultNamespace = "burstpool-system"
	// defaultAMIAlias is a pinned EKS-optimised AL2023 release
	// (awslabs/amazon-eks-ami tag v20260724): @latest would drift every
	// pool node at each release.
	defaultAMIAlias         = "al2023@v20260724"
	defaultRootVolumeImage  = "20Gi"
	defaultEphemeralStorage = "80Gi"
	defaultGCPImageChannel  = "stable"
	defaultAzureImageFamily = "AzureLinux"
	defaultConsolidateAfter = "5m"
	// defaultOpenAfter bounds how long a new pool node waits for its warm
	// images: a multi-GiB image at a few tens of MiB/s, with room.
	defaultOpenAfter        = "5m"
	defaultExpireAfter      = "720h"
	defaultTerminationGrace = "24h"
	defaultWeight           = 50
	defaultPriority         = -10
	defaultPlaceholderImage = "registry.k8s.io/pause:3.10"
	defaultProviderConfig   = "default"
	// defaultAutoscalerTimeout bounds the wait for an autoscaler to act on
	// a pool's CapacityBuffer: Karpenter's buffer controller resolves a
	// buffer as soon as it is reconciled, and requeues every 30s
	// (karpenter v1.14.1 pkg/controllers/capacitybuffer/controller.go).
	defaultAutoscalerTimeout = "2m"
	// defaultUnauthorized is Deny: the allow rules mean something only
	// when pods outside them cannot run; Report and Evict act after the
	// pod took a node.
	defaultUnauthorized = objects.PolicyDeny
	// defaultLeadTime is how long before a window opens, or a learned
	// burst is due, its warm slots rise: above the 71 s a burst onto new
	// nodes waits in make bench-burst (a 45 s node launch and a 24.6 s
	// pull of a 3 GiB image; docs/capacity.md, "The warm slots'
	// trade-off"), with room for Crossplane's poll.
	defaultLeadTime = "2m"
	// defaultTargetWarmPercent is the share of executors a learned warm
	// level starts warm when neither the pool nor the settings say.
	defaultTargetWarmPercent = 90
)

// Default fills every unset field of the function input with its default;
// helperImage is the warmup helper image of the function's build.
func Default(c *v1beta1.Input, helperImage string) {
	orDefault(&c.Namespace, DefaultNamespace)
	orDefault(&present(&c.AWS).AMIAlias, defaultAMIAlias)
	orDefault(&c.AWS.RootVolumePerImage, defaultRootVolumeImage)
	orDefault(&present(&c.EKSAutoMode).EphemeralStorageSize, defaultEphemeralStorage)
	gcp := present(&c.GCP)
	orDefault(&gcp.ImageFamily, objects.DefaultGCPImageFamily)
	orDefault(&gcp.ImageChannel, defaultGCPImageChannel)
	orDefault(&present(&c.Azure).ImageFamily, defaultAzureImageFamily)
	k := present(&c.Karpenter)
	orDefault(&k.ConsolidateAfter, defaultConsolidateAfter)
	orDefault(&k.ExpireAfter, defaultExpireAfter)
	orDefault(&k.TerminationGracePeriod, defaultTerminationGrace)
	orDefault(&k.Weight, defaultWeight)
	orDefault(&present(&c.Warmup).HelperImage, helperImage)
	orDefault(&c.Warmup.OpenAfter, defaultOpenAfter)
	p := present(&c.Placeholder)
	if p.Priority == nil {
		p.Priority = ptr.To[int32](defaultPriority)
	}
	orDefault(&p.Image, defaultPlaceholderImage)
	w := present(&c.WarmCapacity)
	orDefault(&w.Method, warmAuto)
	orDefault(&w.AutoscalerTimeout, defaultAutoscalerTimeout)
	wp := present(&c.WarmPolicy)
	orDefault(&wp.LeadTime, defaultLeadTime)
	orDefault(&present(&wp.Learned).TargetWarmPercent, defaultTargetWarmPercent)
	capacity := present(&c.Capacity)
	orDefault(&capacity.ProviderConfigName, defaultProviderConfig)
	orDefault(&capacity.UnauthorizedExecutors, defaultUnauthorized)
}

// present returns the struct *p points to, allocating an empty one first
// when it is nil.
func present[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
}

// orDefault sets *p to v when it is unset (the zero value).
func orDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// karpenterDuration is the duration format of Karpenter's consolidateAfter
// and expireAfter.
var karpenterDuration = regexp.MustCompile(`^(([0-9]+(s|m|h))+|Never)$`)

// ValidateInput checks the settings that would otherwise render objects
// the API server rejects, naming each field to fix.
func ValidateInput(c *v1beta1.Input) []SettingError {
	var errs []SettingError
	bad := func(path, format string, args ...any) {
		errs = append(errs, SettingError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if p := c.Provisioning; p != nil {
		if p.Cloud != "" && !slices.Contains([]string{cloudAWS, cloudGCP, cloudAzure, cloudLinode, cloudDigitalOcean, cloudCoreWeave, cloudKWOK, cloudOnPrem}, p.Cloud) {
			bad("provisioning.cloud", "%q is not one of aws, gcp, azure, linode, digitalocean, coreweave, kwok, onprem", p.Cloud)
		}
		if p.Method != "" && !slices.Contains(methods, p.Method) {
			bad("provisioning.method", "%q is not one of %s", p.Method, strings.Join(methods, ", "))
		}
	}
	if k := c.Karpenter; k != nil {
		if !karpenterDuration.MatchString(k.ConsolidateAfter) {
			bad("karpenter.consolidateAfter", "%q is not a duration such as 5m or Never", k.ConsolidateAfter)
		}
		if !karpenterDuration.MatchString(k.ExpireAfter) {
			bad("karpenter.expireAfter", "%q is not a duration such as 720h or Never", k.ExpireAfter)
		}
		if !karpenterDuration.MatchString(k.TerminationGracePeriod) {
			bad("karpenter.terminationGracePeriod", "%q is not a duration such as 24h or Never", k.TerminationGracePeriod)
		}
		if k.Weight < 1 || k.Weight > 100 {
			bad("karpenter.weight", "%d is not between 1 and 100", k.Weight)
		}
		errs = append(errs, ValidateDriftWindows(k.DriftWindows)...) // drift.go
	}
	if _, err := openAfter(c.Warmup); err != nil {
		bad("warmup.openAfter", "%q is not a duration such as 5m, or 0s for no startup taint", c.Warmup.OpenAfter)
	}
	if a := c.AWS; a.Role != "" && a.InstanceProfile != "" {
		bad("aws.instanceProfile", "is set beside aws.role: set only one of them")
	}
	if u := c.Capacity.UnauthorizedExecutors; !slices.Contains(unauthorizedPolicies, u) {
		bad("capacity.unauthorizedExecutors", "%q is not Report, Evict or Deny", u)
	}
	if m := c.WarmCapacity.Method; !slices.Contains(warmMethods, m) {
		bad("warmCapacity.method", "%q is not Auto, Placeholders or CapacityBuffer", m)
	}
	if d, err := time.ParseDuration(c.WarmCapacity.AutoscalerTimeout); err != nil || d <= 0 {
		bad("warmCapacity.autoscalerTimeout", "%q is not a positive duration such as 2m", c.WarmCapacity.AutoscalerTimeout)
	}
	if q, err := resource.ParseQuantity(c.AWS.RootVolumePerImage); err != nil || q.Sign() < 0 {
		bad("aws.rootVolumePerImage", "%q is not a quantity such as 20Gi", c.AWS.RootVolumePerImage)
	}
	if _, err := resource.ParseQuantity(c.EKSAutoMode.EphemeralStorageSize); err != nil {
		bad("eksAutoMode.ephemeralStorageSize", "%q is not a quantity such as 80Gi", c.EKSAutoMode.EphemeralStorageSize)
	}
	for i, o := range c.CatalogOverrides {
		_, e1 := resource.ParseQuantity(o.CPU)
		_, e2 := resource.ParseQuantity(o.Memory)
		if o.Name == "" || e1 != nil || e2 != nil {
			bad(fmt.Sprintf("catalogOverrides[%d]", i), "needs a name, a cpu count and a memory quantity")
		}
	}
	if sz := c.Sizing; sz != nil {
		if _, ok := vmMemoryOverhead(sz); sz.VMMemoryOverheadPercent != "" && !ok {
			bad("sizing.vmMemoryOverheadPercent", "%q is not a decimal from 0 to below 1 such as 0.065 (6.5%%)", sz.VMMemoryOverheadPercent)
		}
		for i, d := range sz.NodeDaemonSets {
			if _, err := nodeDaemonSetRequests(d); d.Name == "" || err != nil {
				bad(fmt.Sprintf("sizing.nodeDaemonSets[%d]", i), "needs a name and cpu and memory quantities such as 100m and 128Mi")
			}
		}
	}
	errs = append(errs, ValidateNodeIAM(c.AWS.NodeIAM)...)   // node IAM (iam.go)
	errs = append(errs, ValidateWarmPolicy(c.WarmPolicy)...) // warm policies (warmlevel.go)
	return errs
}

// openAfter is warmup.openAfter: how long a new pool node waits for its
// warm images; zero when nodes are launched without the startup taint.
func openAfter(w *v1beta1.Warmup) (time.Duration, error) {
	if w == nil || w.OpenAfter == "" {
		return time.ParseDuration(defaultOpenAfter)
	}
	d, err := time.ParseDuration(w.OpenAfter)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %s", w.OpenAfter)
	}
	return d, err
}

// nodeDaemonSetRequests parses a cluster DaemonSet's requests; an empty
// quantity is none.
func nodeDaemonSetRequests(d v1beta1.NodeDaemonSet) (sizing.Resources, error) {
	var r sizing.Resources
	for _, f := range []struct {
		in  string
		out *resource.Quantity
	}{{d.CPU, &r.CPU}, {d.Memory, &r.Memory}} {
		if f.in == "" {
			continue
		}
		q, err := resource.ParseQuantity(f.in)
		if err != nil {
			return sizing.Resources{}, err
		}
		*f.out = q
	}
	return r, nil
}
