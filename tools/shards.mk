# Sharded runs of the pairwise suite (tools/commuter/commuter.mk: conformance,
# tools/mtrace/mtrace.mk: mtrace). Shard I of N is the runner's -n N -p I: the
# tests whose id % N == I, so every shard holds every pair. Each shard runs in
# a guest of its own and writes into a directory named I-of-N.
#   JOBS=N     run shards 0..N-1 in N guests at once (make -j), then merge
#   SHARD=I/N  run shard I of N only (on this machine; merge elsewhere)
#   SHARDS=N   the shard count a *-merge target expects (default JOBS)
## conformance-merge: merge the shards of a sharded conformance run (SHARDS=N)
## mtrace-merge: merge the shards of a sharded mtrace run and analyse them as one (SHARDS=N)
JOBS ?= 1
SHARD ?=
SHARDS ?= $(JOBS)
# I-of-N -> the runner's "-n N -p I".
shard_args = -n $(word 2,$(subst -of-, ,$(1))) -p $(word 1,$(subst -of-, ,$(1)))
# Shards 0..N-1 of N, as I-of-N words.
shard_names = $(foreach i,$(shell seq 0 $$(($(1) - 1))),$(i)-of-$(1))
