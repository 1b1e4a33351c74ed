// Package cost ships in the capacity provider, as a pure core: what a
// pool's nodes cost per hour, split between the QueryServices whose
// executors requested them, warm slots and waste (Observe), and the
// integration of those rates over time into totals kept in the
// PoolCapacity's status (Advance).
//
// Nothing here talks to an API server or takes a context; the clock is an
// argument. All state lives in status.atProvider.cost, so a provider that
// restarts resumes from its watermark (docs/capacity.md).
package cost
