// Package warmpolicy ships in the composition function and the capacity
// provider, as a pure core: how many executor slots a pool keeps warm
// under its warm policy. It imports no client and takes no context; the
// clock is an argument.
//
//   - Static (the default): the warm level is minExecutors, as in e6data's
//     Pool reference.
//   - Scheduled: windows (Compile, Schedule.At) raise the level while they
//     are open, from a lead before they open.
//   - Learned: the provider keeps each pool's demand by time of week
//     (History.Observe, kept in the PoolCapacity status by Encode and
//     Decode) and publishes a level (History.Recommend) that the function
//     applies.
//
// Decide combines the policy's level with minExecutors, maxExecutors and
// the tenancy cap; the function holds the level less the executors running
// as warm slots.
package warmpolicy
