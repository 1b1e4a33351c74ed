// Package controller ships in the capacity provider: it registers every
// controller of the provider.
package controller

import (
	"github.com/pkg/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/burstpool/burstpool/internal/controller/config"
	"github.com/burstpool/burstpool/internal/controller/poolcapacity"
)

// Setup adds the ProviderConfig and PoolCapacity controllers to mgr.
func Setup(mgr ctrl.Manager, o poolcapacity.Options) error {
	if err := config.Setup(mgr, o.Options); err != nil {
		return errors.Wrap(err, "cannot set up the ProviderConfig controller")
	}
	return errors.Wrap(poolcapacity.Setup(mgr, o), "cannot set up the PoolCapacity controller")
}
