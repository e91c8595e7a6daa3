// SPDX-License-Identifier: MIT
/*
 * ours.c - the paths of ours in pto-bench-peers: the PTO2 runtime over a
 * device backend, one orchestration for every shape
 *
 * The orchestration turns a peers_graph into PTO2 tasks: the graph's
 * slots are one external tensor of [nr_slots][8] uint64 in the device's
 * memory, every access is a view of its slot range, as an INPUT, OUTPUT
 * or INOUT parameter, so the TensorMap derives the dependencies. Scopes
 * begin where the graph says (PT_SCOPE). The kernel is peers_kernel()
 * under kernel ids OURS_KID(PK_*, core): a kernel id has one core type.
 * Its stamp slot is the first parameter.
 *
 * The program links the runtime core (for sim) and libpto (for user),
 * which both define the orchestration API (pto2_rt_submit_task() and the
 * rest); the program's own references bind to the core's. So the
 * orchestration calls the API through its backend's struct ours_api:
 * the core's functions for sim, libpto's (dlsym() in libpto) for user.
 *
 * A backend gives the runtime a device and GM (struct ours_backend):
 *
 *   sim   the runtime core over the in-process sim device in its default
 *         configuration (bench/common/bench_sim.c, as pto-bench-e2e-sim);
 *   user  the whole stack across processes: a ptod of our own on a
 *         private socket, on its user-mode device (ptod -d user: GM and
 *         registers in memfds, futexes), pto-aicore running the kernel
 *         (peers_kernel.so) from GM, and this process a libpto client
 *         whose orchestration streams its tasks to ptod.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pto/libpto.h>
#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

#include "bench_sim.h"
#include "peers.h"

/**
 * struct ours_api - the orchestration API functions a backend's runtime
 * answers to (see above).
 */
struct ours_api {
	void (*submit_task)(PTO2Runtime *rt, int32_t kernel_id,
			    PTO2WorkerType worker_type, PTOParam *params,
			    int32_t num_params);
	void (*scope_begin)(PTO2Runtime *rt);
	void (*scope_end)(PTO2Runtime *rt);
};

/**
 * struct ours_backend - a device under the PTO2 runtime.
 * @api: the orchestration API of the runtime of @dev.
 * @open: a device with @data_bytes of GM for @alloc and the runtime over
 *	it, @kernel registered under ids 0 .. @nr_kernels - 1; describe its
 *	host threads in @desc.
 * @alloc: @len bytes of GM: device address and host view.
 * @run: one run of @entry(@args, @argc) to completion (message in @msg).
 * @close: stop the device.
 */
struct ours_backend {
	const struct ours_api *(*api)(void *dev);
	int (*open)(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		    int nr_kernels, void **dev, char *desc, size_t desclen);
	int (*alloc)(void *dev, size_t len, uint64_t *dev_addr, void **host);
	int (*run)(void *dev, pto2_orchestration_entry_fn entry, uint64_t *args,
		   int argc, char *msg, size_t msglen);
	void (*close)(void *dev);
};

/* Kernel id of kernel @k on core type @core (enum peers_core). */
#define OURS_KID(k, core)	((k) + ((core) == PC_AIC ? PK_NR : 0))
#define OURS_NR_KIDS		(2 * PK_NR)

/* ---- Backend: the sim device --------------------------------------------- */

/* The runtime core's API: what this program's references bind to. */
static const struct ours_api sim_api = {
	.submit_task = pto2_rt_submit_task,
	.scope_begin = pto2_rt_scope_begin,
	.scope_end = pto2_rt_scope_end,
};

static int sim_open(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		    int nr_kernels, void **dev, char *desc, size_t desclen)
{
	struct bench_sim_info in;
	struct bench_sim *bs;
	int ret = bench_sim_open(data_bytes, kernel, nr_kernels, &bs);

	if (ret)
		return ret;
	bench_sim_info(bs, &in);
	snprintf(desc, desclen,
		 "%u cores (%u AIC + %u AIV) on %u host threads (more only "
		 "while kernels wait) + %u sched + the orchestrating main thread",
		 in.nr_aic + in.nr_aiv, in.nr_aic, in.nr_aiv, in.core_threads,
		 in.sched_threads);
	*dev = bs;
	return 0;
}

static int sim_alloc(void *dev, size_t len, uint64_t *dev_addr, void **host)
{
	return bench_sim_alloc(dev, len, dev_addr, host);
}

static int sim_run(void *dev, pto2_orchestration_entry_fn entry, uint64_t *args,
		   int argc, char *msg, size_t msglen)
{
	return bench_sim_run(dev, entry, args, argc, msg, msglen);
}

static void sim_close(void *dev)
{
	bench_sim_close(dev);
}

static const struct ours_api *sim_get_api(void *dev)
{
	(void)dev;
	return &sim_api;
}

static const struct ours_backend sim_backend = {
	.api = sim_get_api,
	.open = sim_open,
	.alloc = sim_alloc,
	.run = sim_run,
	.close = sim_close,
};

/* ---- Backend: ptod + pto-aicore + libpto on the user-mode device ----------- */

#define USER_MAX_BUFS	4
#define USER_START_MS	20000	/* ptod up and serving */

struct user_dev {
	pid_t ptod;
	char dir[32];		/* private: ptod's socket and log */
	char sock[64];
	pto_client *c;
	pto_buf *buf[USER_MAX_BUFS];
	unsigned int nbufs;
	struct ours_api api;	/* libpto's */
};

/* @name next to this program's build directory ("../../daemon/ptod"). */
static void user_path(char *buf, size_t len, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	buf[n > 0 ? n : 0] = 0;
	slash = strrchr(buf, '/');
	if (slash && (size_t)(slash - buf) + strlen(name) + 2 < len)
		strcpy(slash + 1, name);
	else
		snprintf(buf, len, "%s", name);
}

/* ptod -d user on @u's private socket, its log in @u's directory. */
static int user_spawn(struct user_dev *u)
{
	char ptod[PATH_MAX], log[64];

	user_path(ptod, sizeof(ptod), "../../daemon/ptod");
	snprintf(log, sizeof(log), "%s/ptod.log", u->dir);
	u->ptod = fork();
	if (u->ptod < 0)
		return -errno;
	if (u->ptod == 0) {
		/* ptod (and its pto-aicore) go with this program */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || !freopen(log, "w", stderr))
			_exit(127);
		execl(ptod, "ptod", "-d", "user", "-s", u->sock, (char *)NULL);
		fprintf(stderr, "exec %s: %m\n", ptod);
		_exit(127);
	}
	return 0;
}

/* libpto's own orchestration API into @api, looked up in libpto. */
static int user_api_resolve(struct ours_api *api)
{
	Dl_info di;
	void *h;

	if (!dladdr((void *)pto_connect, &di) || !di.dli_fname)
		return -ENOENT;
	h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return -ENOENT;
	*(void **)&api->submit_task = dlsym(h, "pto2_rt_submit_task");
	*(void **)&api->scope_begin = dlsym(h, "pto2_rt_scope_begin");
	*(void **)&api->scope_end = dlsym(h, "pto2_rt_scope_end");
	dlclose(h);	/* libpto stays: the program is linked with it */
	if (!api->submit_task || !api->scope_begin ||
	    !api->scope_end)
		return -ENOENT;
	return 0;
}

/* Connect (PTO_DEVICE=user) once ptod listens; load the kernel. */
static int user_connect(struct user_dev *u)
{
	char so[PATH_MAX];
	int ret = -ETIMEDOUT, i, k;

	setenv("PTO_DEVICE", "user", 1);
	for (i = 0; i < USER_START_MS / 10 && ret; i++) {
		ret = pto_connect(u->sock, &u->c);
		if (ret)
			usleep(10000);
	}
	if (ret) {
		fprintf(stderr, "user: %s (log: %s/ptod.log)\n",
			pto_last_error(NULL), u->dir);
		return ret;
	}
	user_path(so, sizeof(so), "peers_kernel.so");
	for (k = 0; k < PK_NR && !ret; k++) {
		ret = pto_kernel_load(u->c, OURS_KID(k, PC_AIV),
				      PTO2_WORKER_VECTOR, so);
		if (!ret)
			ret = pto_kernel_load(u->c, OURS_KID(k, PC_AIC),
					      PTO2_WORKER_CUBE, so);
	}
	if (ret)
		fprintf(stderr, "user: %s\n", pto_last_error(u->c));
	return ret;
}

static void user_close(void *dev)
{
	struct user_dev *u = dev;
	char log[64];

	while (u->nbufs)
		pto_buf_free(u->buf[--u->nbufs]);
	pto_disconnect(u->c);
	if (u->ptod > 0) {
		kill(u->ptod, SIGTERM);
		waitpid(u->ptod, NULL, 0);
	}
	snprintf(log, sizeof(log), "%s/ptod.log", u->dir);
	unlink(log);
	rmdir(u->dir);
	free(u);
}

static int user_open(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		     int nr_kernels, void **dev, char *desc, size_t desclen)
{
	struct user_dev *u = calloc(1, sizeof(*u));
	int ret;

	(void)data_bytes;	/* GM is ptod's default, 256 MiB */
	(void)kernel;		/* peers_kernel.so runs in pto-aicore */
	(void)nr_kernels;
	if (!u)
		return -ENOMEM;
	ret = user_api_resolve(&u->api);
	if (ret) {
		fprintf(stderr, "user: libpto's orchestration API not found\n");
		free(u);
		return ret;
	}
	snprintf(u->dir, sizeof(u->dir), "/tmp/pto-peers.XXXXXX");
	if (!mkdtemp(u->dir)) {
		free(u);
		return -errno;
	}
	snprintf(u->sock, sizeof(u->sock), "%s/ptod.sock", u->dir);
	ret = user_spawn(u);
	if (!ret)
		ret = user_connect(u);
	if (ret) {
		user_close(u);
		return ret;
	}
	snprintf(desc, desclen,
		 "ptod -d user (%u AIC + %u AIV, GM and registers in memfds) + pto-aicore (threads = host CPUs) + this process as a libpto client",
		 pto_nr_aic(u->c), pto_nr_aiv(u->c));
	*dev = u;
	return 0;
}

static int user_alloc(void *dev, size_t len, uint64_t *dev_addr, void **host)
{
	struct user_dev *u = dev;
	pto_buf *b;
	int ret;

	if (u->nbufs == USER_MAX_BUFS)
		return -ENOSPC;
	ret = pto_buf_alloc(u->c, len, &b);
	if (ret)
		return ret;
	u->buf[u->nbufs++] = b;
	*dev_addr = pto_buf_dev_addr(b);
	*host = pto_buf_ptr(b);
	return 0;
}

static int user_run(void *dev, pto2_orchestration_entry_fn entry,
		    uint64_t *args, int argc, char *msg, size_t msglen)
{
	struct user_dev *u = dev;

	return pto_run(u->c, entry, args, argc, msg, msglen);
}

static const struct ours_api *user_get_api(void *dev)
{
	return &((struct user_dev *)dev)->api;
}

static const struct ours_backend user_backend = {
	.api = user_get_api,
	.open = user_open,
	.alloc = user_alloc,
	.run = user_run,
	.close = user_close,
};

/* ---- The runtime side, the same for every backend ------------------------ */

struct ours {
	const struct ours_backend *be;
	void *dev;
	uint64_t slots_dev;	/* the slots: device address */
	uint64_t *slots;	/* and host view */
	uint32_t max_slots;
};

static int ours_kernel(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		       uint32_t nargs)
{
	peers_kernel(ctx->kernel_id % PK_NR,
		     nargs ? (uint64_t *)(uintptr_t)args[0] : NULL);
	return 0;
}

/*
 * args: the graph (this process's pointer), the slots' device address,
 * the backend's struct ours_api (this process's pointer)
 */
static int ours_orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const struct peers_graph *g = (const void *)(uintptr_t)args[0];
	const struct ours_api *api = (const void *)(uintptr_t)args[2];
	uint64_t shape[2] = { g->nr_slots, PEERS_SLOT_U64 };
	Tensor slots = make_tensor_external((void *)(uintptr_t)args[1], shape,
					    2, PTO_DT_UINT64);
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	Tensor v[PTO2_MAX_TASK_PARAMS];
	bool in_scope = false;
	uint32_t t, i;

	if (argc != 3)
		return -EINVAL;
	for (t = 0; t < g->nr_tasks; t++) {
		const struct peers_task *tk = &g->task[t];

		if (tk->nacc > PTO2_MAX_TASK_PARAMS)
			return -E2BIG;
		if (tk->flags & PT_SCOPE) {
			if (in_scope)
				api->scope_end(rt);
			api->scope_begin(rt);
			in_scope = true;
		}
		for (i = 0; i < tk->nacc; i++) {
			const struct peers_access *a = &g->acc[tk->acc + i];
			uint64_t vs[2] = { a->count, PEERS_SLOT_U64 };
			uint64_t vo[2] = { a->slot, 0 };

			v[i] = pto_tensor_view(&slots, vs, vo);
			p[i] = a->mode == PM_IN ? make_input_param(&v[i]) :
			       a->mode == PM_OUT ? make_output_param(&v[i]) :
			       make_inout_param(&v[i]);
		}
		api->submit_task(rt, OURS_KID(tk->kernel, tk->core),
				 tk->core, p, (int32_t)tk->nacc);
	}
	if (in_scope)
		api->scope_end(rt);
	return 0;
}

static int ours_open(const struct peers_sys *sys, unsigned int workers,
		     uint32_t max_slots, void **ctx, char *desc, size_t desclen)
{
	struct ours *o = calloc(1, sizeof(*o));
	size_t len = (size_t)max_slots * PEERS_SLOT_BYTES;
	void *host;
	int ret;

	(void)workers;		/* one host thread per core */
	if (!o)
		return -ENOMEM;
	o->be = sys->priv;
	o->max_slots = max_slots;
	ret = o->be->open(len + 4096, ours_kernel, OURS_NR_KIDS, &o->dev, desc,
			  desclen);
	if (!ret)
		ret = o->be->alloc(o->dev, len, &o->slots_dev, &host);
	if (ret) {
		if (o->dev)
			o->be->close(o->dev);
		free(o);
		return ret;
	}
	o->slots = host;
	*ctx = o;
	return 0;
}

static int ours_prepare(void *ctx, const struct peers_graph *g)
{
	struct ours *o = ctx;

	if (g->nr_slots > o->max_slots)
		return -E2BIG;
	memset(o->slots, 0, (size_t)g->nr_slots * PEERS_SLOT_BYTES);
	return 0;
}

static int ours_run(void *ctx, const struct peers_graph *g)
{
	struct ours *o = ctx;
	uint64_t args[3] = { (uintptr_t)g, o->slots_dev,
			     (uintptr_t)o->be->api(o->dev) };
	char msg[1024];
	int ret;

	ret = o->be->run(o->dev, ours_orch, args, 3, msg, sizeof(msg));
	if (ret)
		fprintf(stderr, "%s: %s\n", g->name, msg);
	return ret;
}

static int ours_access(void *ctx, const struct peers_graph *g,
		       void (*fn)(void *arg, uint64_t *slots), void *arg)
{
	struct ours *o = ctx;

	(void)g;		/* no run is going on: GM is ours to read */
	fn(arg, o->slots);
	return 0;
}

static void ours_finish(void *ctx, const struct peers_graph *g)
{
	(void)ctx;
	(void)g;
}

static void ours_close(void *ctx)
{
	struct ours *o = ctx;

	o->be->close(o->dev);
	free(o);
}

#define OURS_PATH(path, backend) {					\
	.name = (path), .ours = true, .priv = (backend),		\
	PEERS_SYS_OPS(ours),						\
}

/* The paths of ours, each measured against every peer. */
const struct peers_sys peers_ours[] = {
	OURS_PATH("sim", &sim_backend),
	OURS_PATH("user", &user_backend),
};

const unsigned int peers_nr_ours = sizeof(peers_ours) / sizeof(peers_ours[0]);
