package devplane

import "time"

// The bounds of the stack's start-up steps, named once. Each step takes
// seconds alone on two cores; the end-to-end suite brings up several
// stacks and control planes at once (see localcp.DefaultReadyTimeout),
// beside the envtest API servers of other test packages and a demo's
// control plane that may still be up, so each bound is that step's time
// many times over. A step that runs out fails Up, saying which step.
const (
	// crdEstablished bounds CRDs just applied (third-party CRDs, the
	// provider's) turning Established: the API server's CRD controllers
	// take a second alone.
	crdEstablished = 2 * time.Minute

	// packageActive bounds Crossplane's package manager pulling a package
	// from the loopback registry and making its revision active, and the
	// Pool API the Configuration's XRD offers being established: a few
	// reconciles of core's package and XRD controllers, each waiting on
	// the loaded API server.
	packageActive = 3 * time.Minute

	// runtimeListening bounds a local runtime (the function, the capacity
	// provider) listening on its port after it started: a Go binary binds
	// at once alone, after its first CPU slice when loaded.
	runtimeListening = time.Minute

	// coreCA bounds the CA Secret Crossplane core creates as it starts,
	// which the runtimes' serving certificates are signed by.
	coreCA = time.Minute
)
