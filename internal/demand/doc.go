// Package demand ships in the capacity provider, as a pure core: what the
// provider records of each pool's demand in its history by time of week
// (warmpolicy.History), when it writes that history into
// status.atProvider.demand, and the learned warm level it publishes in
// status.atProvider.warmRecommendation for the pool-compose function to
// apply.
//
// Record is one reconcile's step: it takes the pool's spec, the status
// read and the status computed so far, and the Memory the provider keeps
// of the pool between reconciles, and returns the two status fields. The
// history is recorded for every pool, whatever its warm policy; the
// recommendation only when spec.forProvider.warmPolicy.learned asks.
//
// Nothing here talks to an API server or takes a context; the clock is an
// argument. What must survive a restart lives in status: a restarted
// provider decodes the history from it (docs/capacity.md, "Demand
// history").
package demand
