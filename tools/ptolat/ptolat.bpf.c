// SPDX-License-Identifier: MIT
/*
 * ptolat.bpf.c - ptolat's BPF side: the runtime's task probes (USDT,
 * provider pto2), the executor's (pto_aicore) and pto.ko's kick and wake
 * tracepoints, folded into one log2 histogram (microseconds) per phase.
 * Timestamps are bpf_ktime_get_ns() (CLOCK_MONOTONIC) at each probe.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "ptolat.h"

/* filters, set before load; -1: any */
const volatile long long targ_client = -1;
const volatile long long targ_graph = -1;
const volatile long long targ_kernel = -1;

struct ptolat_hist hists[PTOLAT_NR_PHASES];

struct task_key {
	__u32 client;
	__s32 task;
};

struct task_val {
	__u64 submit;
	__u64 ready;
};

struct core_val {
	__u64 dispatch;
	__u64 start;
	__u64 end;
	__u64 kick;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PTOLAT_TASKS);
	__type(key, struct task_key);
	__type(value, struct task_val);
} tasks SEC(".maps");

/* a core runs one task at a time: the executor's probes name the core */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PTOLAT_CORES);
	__type(key, __u32);
	__type(value, struct core_val);
} cores SEC(".maps");

static __always_inline bool wanted(__u32 client, __u64 graph, __s32 kernel)
{
	return (targ_client < 0 || targ_client == client) &&
	       (targ_graph < 0 || targ_graph == (long long)graph) &&
	       (targ_kernel < 0 || targ_kernel == kernel);
}

static __always_inline void account(int phase, __u64 from, __u64 to)
{
	__u64 us;
	__u32 slot = 0;

	if (!from || to < from || phase >= PTOLAT_NR_PHASES)
		return;
	us = (to - from) / 1000;
	while (us && slot < PTOLAT_SLOTS - 1) {
		us >>= 1;
		slot++;
	}
	__sync_fetch_and_add(&hists[phase].slots[slot], 1);
}

static __always_inline struct core_val *core_of(__s32 core)
{
	__u32 c = core;

	return core < 0 ? NULL : bpf_map_lookup_elem(&cores, &c);
}

SEC("usdt")
int BPF_USDT(task_submit, __u32 client, __u64 graph, __s32 task, __s32 kernel)
{
	struct task_key k = { .client = client, .task = task };
	struct task_val v = { .submit = bpf_ktime_get_ns() };

	if (wanted(client, graph, kernel))
		bpf_map_update_elem(&tasks, &k, &v, BPF_ANY);
	return 0;
}

SEC("usdt")
int BPF_USDT(task_ready, __u32 client, __u64 graph, __s32 task)
{
	struct task_key k = { .client = client, .task = task };
	struct task_val *v = bpf_map_lookup_elem(&tasks, &k);

	if (v) {
		v->ready = bpf_ktime_get_ns();
		account(PTOLAT_SUBMIT_READY, v->submit, v->ready);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(task_dispatch, __u32 client, __u64 graph, __s32 task,
	     __s32 kernel, __s32 core)
{
	struct task_key k = { .client = client, .task = task };
	struct task_val *v = bpf_map_lookup_elem(&tasks, &k);
	struct core_val *c = core_of(core);
	__u64 now = bpf_ktime_get_ns();

	if (!c)
		return 0;
	c->dispatch = 0;
	if (!v)
		return 0;
	/* the task's first core execution ends its queueing */
	if (v->ready) {
		account(PTOLAT_READY_DISPATCH, v->ready, now);
		v->ready = 0;
	}
	c->dispatch = now;
	c->start = 0;
	c->end = 0;
	return 0;
}

SEC("usdt")
int BPF_USDT(exec_start, __s32 core)
{
	struct core_val *c = core_of(core);

	if (c && c->dispatch) {
		c->start = bpf_ktime_get_ns();
		account(PTOLAT_DISPATCH_START, c->dispatch, c->start);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(exec_end, __s32 core)
{
	struct core_val *c = core_of(core);

	if (c && c->start) {
		c->end = bpf_ktime_get_ns();
		account(PTOLAT_RUN, c->start, c->end);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(task_complete, __u32 client, __u64 graph, __s32 task,
	     __s32 kernel, __s32 core)
{
	struct core_val *c = core_of(core);

	if (c && c->end) {
		account(PTOLAT_END_OBSERVED, c->end, bpf_ktime_get_ns());
		c->dispatch = 0;
		c->end = 0;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(task_done, __u32 client, __u64 graph, __s32 task)
{
	struct task_key k = { .client = client, .task = task };

	bpf_map_delete_elem(&tasks, &k);
	return 0;
}

/*
 * pto.ko's pto_core_class events (kmod/pto_trace.h), as their format file
 * in tracefs lays them out.
 */
struct pto_core_event {
	struct trace_entry ent;
	__u32 data_loc_dev;
	int pid;
	__u32 core;
	__u32 dmb;
	__u32 val;
	int ret;
};

SEC("tracepoint/pto/pto_kick")
int pto_kick(struct pto_core_event *e)
{
	struct core_val *c = core_of((__s32)e->core);

	if (c)
		c->kick = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/pto/pto_wake")
int pto_wake(struct pto_core_event *e)
{
	struct core_val *c = core_of((__s32)e->core);

	if (c && c->kick) {
		account(PTOLAT_KICK_WAKE, c->kick, bpf_ktime_get_ns());
		c->kick = 0;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
