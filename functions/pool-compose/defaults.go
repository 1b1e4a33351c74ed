package main

import (
	"k8s.io/utils/ptr"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Defaults of the function input. Crossplane does not apply the input
// CRD's defaults, so the function applies the same ones.
const (
	defaultNamespace        = "burstpool-system"
	defaultAMIAlias         = "al2023@latest"
	defaultEphemeralStorage = "80Gi"
	defaultGCPImageFamily   = "ContainerOptimizedOS"
	defaultGCPImageChannel  = "stable"
	defaultAzureImageFamily = "AzureLinux"
	defaultConsolidateAfter = "5m"
	defaultExpireAfter      = "720h"
	defaultWeight           = 50
	defaultHelperImage      = "ghcr.io/burstpool/warm:v0.1.0"
	defaultPriority         = -10
	defaultPlaceholderImage = "registry.k8s.io/pause:3.10"
	defaultProviderConfig   = "default"
	defaultUnauthorized     = "Report"
)

// Default fills every unset field of the function input with its default.
func Default(c *v1beta1.Input) {
	if c.Namespace == "" {
		c.Namespace = defaultNamespace
	}
	if c.AWS == nil {
		c.AWS = &v1beta1.AWS{}
	}
	if c.AWS.AMIAlias == "" {
		c.AWS.AMIAlias = defaultAMIAlias
	}
	if c.EKSAutoMode == nil {
		c.EKSAutoMode = &v1beta1.EKSAutoMode{}
	}
	if c.EKSAutoMode.EphemeralStorageSize == "" {
		c.EKSAutoMode.EphemeralStorageSize = defaultEphemeralStorage
	}
	if c.GCP == nil {
		c.GCP = &v1beta1.GCP{}
	}
	if c.GCP.ImageFamily == "" {
		c.GCP.ImageFamily = defaultGCPImageFamily
	}
	if c.GCP.ImageChannel == "" {
		c.GCP.ImageChannel = defaultGCPImageChannel
	}
	if c.Azure == nil {
		c.Azure = &v1beta1.Azure{}
	}
	if c.Azure.ImageFamily == "" {
		c.Azure.ImageFamily = defaultAzureImageFamily
	}
	if c.Karpenter == nil {
		c.Karpenter = &v1beta1.Karpenter{}
	}
	if c.Karpenter.ConsolidateAfter == "" {
		c.Karpenter.ConsolidateAfter = defaultConsolidateAfter
	}
	if c.Karpenter.ExpireAfter == "" {
		c.Karpenter.ExpireAfter = defaultExpireAfter
	}
	if c.Karpenter.Weight == 0 {
		c.Karpenter.Weight = defaultWeight
	}
	if c.Warmup == nil {
		c.Warmup = &v1beta1.Warmup{}
	}
	if c.Warmup.HelperImage == "" {
		c.Warmup.HelperImage = defaultHelperImage
	}
	if c.Placeholder == nil {
		c.Placeholder = &v1beta1.Placeholder{}
	}
	if c.Placeholder.Priority == nil {
		c.Placeholder.Priority = ptr.To[int32](defaultPriority)
	}
	if c.Placeholder.Image == "" {
		c.Placeholder.Image = defaultPlaceholderImage
	}
	if c.Capacity == nil {
		c.Capacity = &v1beta1.Capacity{}
	}
	if c.Capacity.ProviderConfigName == "" {
		c.Capacity.ProviderConfigName = defaultProviderConfig
	}
	if c.Capacity.UnauthorizedExecutors == "" {
		c.Capacity.UnauthorizedExecutors = defaultUnauthorized
	}
}
