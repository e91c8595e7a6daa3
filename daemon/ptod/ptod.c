// SPDX-License-Identifier: MIT
/*
 * ptod - the AICPU of an emulated PTO2 device
 *
 * Holds the device's AICPU role (exclusive), maps GM and the register
 * file, spawns and supervises pto-aicore (the AICores), and serves
 * clients (libpto) on a unix socket with a libevent loop. Per client: a
 * context with its own pto2 runtime whose memory (shared-memory region
 * and heap ring) the daemon allocates in GM, and a runner thread that
 * replays the client's submission stream into it (ptod_runner.c).
 *
 * usage: ptod [-d DEVICE|user] [-s SOCKET] [-a PTO_AICORE] [-b PTO_SANDBOX]
 *             [-K all|nonroot|none] [-w TASK_WINDOW] [-H HEAP_BYTES]
 *             [-S AICORE_SPINS] [-x UID=CTX]... [-R FILE]
 *             [-m MODE] [-g GROUP] [-u UID]... [-c CONNS] [-C CONNS]
 *             [-D RUNS] [-L CLUSTERS] [-Q BYTES] [-T MS] [-q MIB]
 *             [-q UID=MIB]... [-G MS] [-M MIB] [-P TASKS] [-v]
 *
 * DEVICE is pto.ko's /dev/ptoN (default /dev/pto0), or "user": a
 * user-mode device that ptod creates and runs itself (ptod_udev.c).
 *
 * Kernels of clients that -K names (default: every uid but root; none on
 * the user-mode device, which has no client file to give a sandbox) run
 * in a pto-sandbox of their own (ptod_sandbox.c).
 *
 * On pto.ko ptod follows the device's netlink events (ptod_nl.c): its
 * executor's death at once, cores another executor attached.
 *
 * The socket path is -s, else $PTO_SOCKET, else /run/pto/ptod.sock.
 * See Documentation/runtime.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/fdpass.h>
#include <pto-private/params.h>
#include <pto-private/parse.h>
#include <pto-private/profile.h>

#include "ptod.h"

PTO_USDT_DEFINE(ptod, exec_ready);
PTO_USDT_DEFINE(ptod, exec_death);

static struct ptod g_d;
static int g_log_level = PTOD_LOG_INFO;

/* ---- Logging ----------------------------------------------------------------- */

/*
 * Every line of ptod's log goes through here. A message may hold text a
 * client chose (a hello's variable in the error it gets, ...):
 * ptod_log_clean() shows each unprintable character, and each byte that
 * is not well-formed UTF-8, as one '?', so that whatever it holds stays
 * on the one line that starts with "ptod: LEVEL: ", shown
 * in the order it was written, no client can write a line that looks
 * like one of ptod's own, and none can send a terminal an escape.
 */
static void ptod_vlog(int level, const char *fmt, va_list ap)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	ptod_log_clean(buf);
	fprintf(stderr, "ptod: %s: %s\n", names[level], buf);
}

void ptod_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > g_log_level)
		return;
	va_start(ap, fmt);
	ptod_vlog(level, fmt, ap);
	va_end(ap);
}

/*
 * One more line of @r, at most @rate a second: true if it may be logged,
 * else it is counted. *@dropped: those a second before this one did not
 * log, to be said now.
 */
static bool rate_take(struct ptod_rate *r, uint32_t rate, uint64_t *dropped)
{
	int64_t sec = pto_mono_ns() / 1000000000LL;

	*dropped = 0;
	if (sec != r->sec) {
		*dropped = r->dropped;
		r->dropped = 0;
		r->sec = sec;
		r->n = 0;
	}
	if (r->n < rate) {
		r->n++;
		return true;
	}
	r->dropped++;
	return false;
}

/*
 * @n lines about client @c's graphs that were not logged, if any (a line
 * that all clients' budget refuses: counted there).
 */
static void clog_dropped(struct client *c, uint64_t n)
{
	if (n && ptod_clients_log_take(c->d, c->uid, n))
		ptod_log(PTOD_LOG_WARN,
			 "client %u: %" PRIu64 " lines about its graphs not logged (more than %d a second)",
			 c->id, n, PTOD_LOG_RATE);
}

/*
 * A line about client @c's graphs (any thread): a client may run
 * thousands of graphs a second, empty or failing ones too, and each
 * would buy a line or more. At most PTOD_LOG_RATE lines a second are
 * logged per client; the rest are counted, and their number said once
 * the second is over, at the client's next line, or when it goes
 * (ptod_clog_flush()). Every such line, the line with that number too,
 * also takes one of the PTOD_CLIENTS_LOG_RATE of all clients
 * (ptod_clients_log_take()).
 */
void ptod_clog(struct client *c, int level, const char *fmt, ...)
{
	uint64_t dropped;
	va_list ap;
	bool log;

	if (level > g_log_level)
		return;
	pthread_mutex_lock(&c->log_lock);
	log = rate_take(&c->log_rate, PTOD_LOG_RATE, &dropped);
	pthread_mutex_unlock(&c->log_lock);
	clog_dropped(c, dropped);
	if (!log || !ptod_clients_log_take(c->d, c->uid, 1))
		return;
	va_start(ap, fmt);
	ptod_vlog(level, fmt, ap);
	va_end(ap);
}

/* The lines about @c's graphs not logged so far, if any: said now. */
void ptod_clog_flush(struct client *c)
{
	uint64_t dropped;

	pthread_mutex_lock(&c->log_lock);
	dropped = c->log_rate.dropped;
	c->log_rate.dropped = 0;
	pthread_mutex_unlock(&c->log_lock);
	clog_dropped(c, dropped);
}

/* @n lines of clients that all clients' budget refused, if any. */
static void clients_log_dropped(uint64_t n)
{
	if (n)
		ptod_log(PTOD_LOG_WARN,
			 "%" PRIu64 " lines about clients' graphs and sandboxes not logged (more than %d a second of one user's clients or %d of all clients)",
			 n, PTOD_USER_LOG_RATE, PTOD_CLIENTS_LOG_RATE);
}

/*
 * The count of user @uid's lines in this second (clients_log_lock held):
 * its slot, or one no user logged in during this second, or NULL if
 * PTOD_USER_LOG_SLOTS users all did (then only all clients' budget
 * holds).
 */
static struct ptod_rate *user_log_rate(struct ptod *d, uid_t uid)
{
	int64_t sec = pto_mono_ns() / 1000000000LL;
	uint32_t i, free = PTOD_USER_LOG_SLOTS;

	for (i = 0; i < PTOD_USER_LOG_SLOTS; i++) {
		if (d->user_log[i].rate.sec != sec)
			free = free < i ? free : i;
		else if (d->user_log[i].uid == uid)
			return &d->user_log[i].rate;
	}
	if (free == PTOD_USER_LOG_SLOTS)
		return NULL;
	/* rate_take() starts the second */
	d->user_log[free].uid = uid;
	d->user_log[free].rate = (struct ptod_rate){ .sec = sec - 1 };
	return &d->user_log[free].rate;
}

bool ptod_clients_log_take(struct ptod *d, uid_t uid, uint64_t n)
{
	struct ptod_rate *u;
	uint64_t said, none;
	bool log;

	pthread_mutex_lock(&d->clients_log_lock);
	/* one user's clients take no more than their share of all */
	u = user_log_rate(d, uid);
	if (u && !rate_take(u, PTOD_USER_LOG_RATE, &none)) {
		u->dropped = 0;		/* counted in all clients' count */
		rate_take(&d->clients_log_rate, 0, &said);
		d->clients_log_rate.dropped += n - 1;
		log = false;
	} else {
		log = rate_take(&d->clients_log_rate, PTOD_CLIENTS_LOG_RATE,
				&said);
		if (!log)	/* rate_take() counted one */
			d->clients_log_rate.dropped += n - 1;
	}
	pthread_mutex_unlock(&d->clients_log_lock);
	clients_log_dropped(said);
	return log;
}

/* @n lines about connections that were not logged, if any. */
static void conn_log_dropped(uint64_t n)
{
	if (n)
		ptod_log(PTOD_LOG_WARN,
			 "%" PRIu64 " lines about connections not logged (more than %d a second)",
			 n, PTOD_CONN_LOG_RATE);
}

/*
 * A line about a connection or one of its messages (main thread): a
 * client can connect, say something wrong and hang up tens of thousands
 * of times a second, and each time would buy a few lines (a refusal, an
 * error, "disconnected", "gone"). At most PTOD_CONN_LOG_RATE such lines
 * a second are logged, all connections together; the rest are counted,
 * and their number said at the first such line of a later second, or
 * when ptod exits.
 */
void ptod_conn_log(struct ptod *d, int level, const char *fmt, ...)
{
	uint64_t dropped;
	va_list ap;
	bool log;

	if (level > g_log_level)
		return;
	log = rate_take(&d->conn_rate, PTOD_CONN_LOG_RATE, &dropped);
	conn_log_dropped(dropped);
	if (!log)
		return;
	va_start(ap, fmt);
	ptod_vlog(level, fmt, ap);
	va_end(ap);
}

/*
 * pto2's messages may span lines (its flow-control diagnoses): each of
 * them is a line of its own, after "client N: pto2: ".
 */
static void pto2_log_cb(void *ctx, int level, const char *msg)
{
	struct client *c = ctx;
	const char *nl;

	level = level <= PTO2_LOG_ERROR ? PTOD_LOG_ERR :
		level == PTO2_LOG_WARN ? PTOD_LOG_WARN :
		level == PTO2_LOG_INFO ? PTOD_LOG_INFO : PTOD_LOG_DEBUG;
	for (;;) {
		nl = strchr(msg, '\n');
		ptod_clog(c, level, "client %u: pto2: %.*s", c->id,
			  nl ? (int)(nl - msg) : (int)strlen(msg), msg);
		if (!nl || !nl[1])
			break;
		msg = nl + 1;
	}
}

/* ---- Messages ------------------------------------------------------------------ */


void ptod_reply(struct client *c, int status, const char *fmt, ...)
{
	struct pto_msg m;
	va_list ap;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_REPLY;
	m.status = status;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(m.text, sizeof(m.text), fmt, ap);
		va_end(ap);
	}
	/* a client that keeps asking for errors does not flood the log */
	if (status && c->nr_warned < PTOD_WARN_MAX)
		ptod_conn_log(c->d, PTOD_LOG_WARN, "client %u: %s%s", c->id,
			      m.text, ++c->nr_warned == PTOD_WARN_MAX ?
			      " (its further errors are not logged)" : "");
	ptod_send(c, &m);
}

/*
 * event_new() + event_add() for a persistent or one-shot watch of @fd (or
 * a signal, with EV_SIGNAL); NULL, logged, if libevent refuses either.
 */
static struct event *watch(struct ptod *d, evutil_socket_t fd, short what,
			   event_callback_fn cb, void *arg, const char *name)
{
	struct event *ev = event_new(d->base, fd, what, cb, arg);

	if (ev && !event_add(ev, NULL))
		return ev;
	ptod_log(PTOD_LOG_ERR, "libevent: cannot watch %s", name);
	if (ev)
		event_free(ev);
	return NULL;
}

/* Arm the executor supervision timer. */
static void timer_arm(struct ptod *d, const struct timeval *tv)
{
	if (evtimer_add(d->ev_timer, tv))
		ptod_log(PTOD_LOG_ERR, "libevent: cannot arm the executor timer");
}

/* ---- The device ------------------------------------------------------------ */

static int open_device(struct ptod *d)
{
	int ret;

	memset(&d->pdev, 0, sizeof(d->pdev));
	ret = d->ops->open(d);
	if (ret)
		return ret;
	d->pdev.regs = d->regs;
	d->pdev.nr_aic = d->info.nr_aic;
	d->pdev.nr_aiv = d->info.nr_aiv;
	ptod_log(PTOD_LOG_INFO,
		 "%s (%s): AICPU of %u AIC + %u AIV cores, %" PRIu64 " MiB GM",
		 d->dev_path, d->ops->name, d->info.nr_aic, d->info.nr_aiv,
		 (uint64_t)d->info.gm_size >> 20);
	return 0;
}

/* The device's scheduler, shared by every client's runtime. */
static int engine_start(struct ptod *d)
{
	struct pto2_engine_config ec;
	int ret;

	pto2_engine_config_default(&ec);
	ec.check = d->hws_check;
	ec.follow_regs = true;
	if (d->sched_sleep_ns)
		ec.wake_sleep_ns = d->sched_sleep_ns;
	ret = pto2_engine_create(&d->pdev, &ec, &d->engine);
	if (ret) {
		ptod_log(PTOD_LOG_ERR, "cannot start the scheduler: %s",
			 strerror(-ret));
		return ret;
	}
	d->pdev.engine = d->engine;
	if (ec.check)
		ptod_log(PTOD_LOG_INFO,
			 "HWS invariant checker on (PTO_HWS_CHECK=1): a violation aborts ptod");
	/* the registers pto.ko was loaded with (or someone set since) */
	ret = pto2_engine_load_regs(d->engine);
	return ret < 0 ? ret : 0;
}

/* The client whose runtime is @rt (dev_lock held), or NULL. */
static struct client *client_of_rt(struct ptod *d, PTO2Runtime *rt)
{
	struct client *c;

	for (c = d->clients; c; c = c->next)
		if (c->rt == rt)
			return c;
	return NULL;
}

/* ---- Executor (pto-aicore) supervision ------------------------------------------ */

static void set_exec_ready(struct ptod *d, bool ready)
{
	pthread_mutex_lock(&d->dev_lock);
	d->exec_ready = ready;
	pthread_cond_broadcast(&d->dev_cond);
	pthread_mutex_unlock(&d->dev_lock);
}

static void on_exec_ready(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	char b;
	ssize_t n = read(fd, &b, 1);

	(void)what;
	event_free(d->ev_ready);
	d->ev_ready = NULL;
	close(fd);
	d->exec_ready_fd = -1;
	if (n == 1 && b == 'R') {
		ptod_log(PTOD_LOG_INFO, "pto-aicore (pid %d) is ready",
			 (int)d->exec_pid);
		PTO_PROBE1(ptod, exec_ready, d->exec_pid);
		d->exec_dead_since = 0;
		/* it attached every core: none is anyone else's now */
		pto2_engine_withhold(d->engine, NULL, false);
		set_exec_ready(d, true);
	}
	/* else: it died before attaching; SIGCHLD handles it */
}

static int spawn_executor(struct ptod *d)
{
	char fdarg[16], spins[16], ctlarg[16];
	int pfd[2], ctl, err;
	uint32_t i;
	pid_t pid;

	/*
	 * No executor is attached now: park every DATA_MAIN_BASE at IDLE so
	 * that the new executor starts from 0 and the first dispatch of any
	 * run is a change it sees.
	 */
	for (i = 0; i < d->info.nr_cores; i++)
		reg_store_release(&ptod_core(d, i)->data_main_base,
				  PTO_DMB_IDLE);
	ctl = ptod_sbx_ctl_open(d);
	if (ctl < 0)
		return ctl;
	if (pipe2(pfd, O_CLOEXEC)) {
		close(ctl);
		return -errno;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
	snprintf(spins, sizeof(spins), "%u", d->aicore_spins);
	snprintf(ctlarg, sizeof(ctlarg), "%d", ctl);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		close(ctl);
		return -errno;
	}
	if (pid == 0) {
		static const char cannot[] = "ptod: cannot exec ";
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* keep them across exec */
		fcntl(pfd[1], F_SETFD, 0);
		fcntl(ctl, F_SETFD, 0);
		for (i = 0; i < 2; i++)
			if (d->exec_fds[i] >= 0)
				fcntl(d->exec_fds[i], F_SETFD, 0);
		execl(d->aicore_path, "pto-aicore", d->exec_opt, d->exec_arg,
		      "-r", fdarg, "-s", spins, "-C", ctlarg,
		      d->verbose ? "-v" : (char *)NULL, (char *)NULL);
		err = errno;
		if (write(2, cannot, sizeof(cannot) - 1) ==
		    sizeof(cannot) - 1)
			ptod_child_warn(d->aicore_path, err);
		_exit(127);
	}
	close(pfd[1]);
	close(ctl);
	d->exec_pid = pid;
	d->exec_ready_fd = pfd[0];
	d->ev_ready = watch(d, pfd[0], EV_READ, on_exec_ready, d,
			    "the executor's ready pipe");
	if (!d->ev_ready) {
		/* SIGCHLD reaps it and the timer tries again */
		kill(pid, SIGKILL);
		close(pfd[0]);
		d->exec_ready_fd = -1;
		return -ENOMEM;
	}
	ptod_log(PTOD_LOG_INFO, "started %s (pid %d)", d->aicore_path, (int)pid);
	return 0;
}

/*
 * The executor died, or another executor attached cores: every core of
 * @mask (NULL: all) the engine has a dispatch on without COND = FIN(id)
 * gets it failed on its behalf, whatever state the core is in now (dead,
 * or attached by another executor, which resets its registers): payload
 * status -EOWNERDEAD, COND = FIN(id); the owner's scheduler then fails
 * the run with "kernel K failed" and drains; @why goes into the owner's
 * note. Repeated while the executor is down and the run lasts (a
 * scheduler may still dispatch to a core before it has seen the error).
 * The scheduler threads are woken, as the interrupt of a completion would.
 */
static void fail_cores(struct ptod *d, const uint64_t *mask, const char *why)
{
	uint32_t i, failed = 0;

	pthread_mutex_lock(&d->dev_lock);
	for (i = 0; i < d->info.nr_cores; i++) {
		struct pto_core_regs *r = ptod_core(d, i);
		PTO2DispatchPayload *p;
		struct client *owner;
		uint64_t payload;
		uint32_t id;

		/*
		 * The engine's record, not the registers: whoever attached
		 * the core since the death has reset DATA_MAIN_BASE and
		 * COND, and nobody of ours runs the dispatch any more.
		 */
		if ((mask && !(mask[i / 64] & (1ULL << (i % 64)))) ||
		    !pto2_engine_core_dispatch(d->engine, i, &id, &payload) ||
		    reg_load_acquire(&r->cond) == PTO_COND_DONE(id))
			continue;
		p = ptod_gm(d, payload, sizeof(*p));
		if (p)
			p->status = -EOWNERDEAD;
		owner = client_of_rt(d, pto2_engine_core_runtime(d->engine, i));
		if (owner && !owner->note[0])
			snprintf(owner->note, sizeof(owner->note),
				 "%s while core %u (%s) ran task %d (kernel %d)",
				 why, i, i < d->info.nr_aic ? "AIC" : "AIV",
				 p ? p->task_id : -1, p ? p->kernel_id : -1);
		ptod_log(PTOD_LOG_ERR, "%s while core %u ran task %d (kernel %d)",
			 why, i, p ? p->task_id : -1, p ? p->kernel_id : -1);
		reg_store_release(&r->cond, PTO_COND_DONE(id));
		failed++;
	}
	pthread_mutex_unlock(&d->dev_lock);
	/*
	 * No executor raises the interrupt for these completions: wake the
	 * scheduler threads, which may sleep until their bound otherwise.
	 */
	if (failed)
		pto2_engine_wake(d->engine);
}

static void fail_dead_cores(struct ptod *d)
{
	fail_cores(d, NULL, d->exec_death);
}

static bool runs_active(struct ptod *d)
{
	struct client *c;

	for (c = d->clients; c; c = c->next)
		if (atomic_load(&c->in_run))
			return true;
	return false;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	struct timeval tv = { 0, 20000 };
	bool busy;

	(void)fd;
	(void)what;
	if (d->exec_pid > 0)
		return;
	fail_dead_cores(d);
	busy = runs_active(d);
	/* restart once the failed run has drained (or after 5 s anyway) */
	if ((busy && pto_mono_ns() - d->exec_dead_since < 5000000000LL) ||
	    d->base == NULL) {
		timer_arm(d, &tv);
		return;
	}
	pthread_mutex_lock(&d->dev_lock);
	busy = d->shutting_down;
	pthread_mutex_unlock(&d->dev_lock);
	if (busy)
		return;
	d->exec_restarts++;
	if (spawn_executor(d)) {
		ptod_log(PTOD_LOG_ERR, "cannot restart pto-aicore: %m");
		tv.tv_sec = 1;
		tv.tv_usec = 0;
		timer_arm(d, &tv);
	}
}

/*
 * The executor @pid is gone (d->exec_death says how): fail what ran on
 * its cores, restart it from the timer (after a second with @backoff).
 * Once per executor: d->exec_pid no longer names it afterwards.
 */
static void exec_down(struct ptod *d, pid_t pid, bool backoff)
{
	struct timeval tv = { backoff ? 1 : 0, 0 };

	ptod_log(PTOD_LOG_ERR, "%s", d->exec_death);
	d->ops->exec_gone(d, pid);
	d->exec_pid = 0;
	d->exec_kill_why[0] = 0;
	ptod_sbx_ctl_close(d);
	d->exec_dead_since = pto_mono_ns();
	set_exec_ready(d, false);
	if (d->ev_ready) {
		event_free(d->ev_ready);
		d->ev_ready = NULL;
		close(d->exec_ready_fd);
		d->exec_ready_fd = -1;
	}
	fail_dead_cores(d);
	timer_arm(d, &tv);
}

/*
 * The executor @pid was reaped with @status; @event: not NULL if the
 * device reported it gone first (its event), and ptod killed it.
 */
static void exec_reaped(struct ptod *d, pid_t pid, int status,
			const char *event)
{
	PTO_PROBE2(ptod, exec_death, pid, status);
	if (d->exec_kill_why[0])
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) was killed by ptod: %s",
			 (int)pid, d->exec_kill_why);
	else if (event && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) closed the device while it ran (%s); ptod killed it",
			 (int)pid, event);
	else if (WIFSIGNALED(status))
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) was killed by signal %d (%s)",
			 (int)pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) exited with status %d",
			 (int)pid, WEXITSTATUS(status));
	/* back off if it keeps dying at start */
	exec_down(d, pid, d->exec_restarts > 3 && WIFEXITED(status));
}

static void on_sigchld(struct ptod *d)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == d->exec_pid) {
			exec_reaped(d, pid, status, NULL);
		} else if (pid == d->exec_old) {
			/* its death was handled when the device reported it */
			d->exec_old = 0;
		} else {
			ptod_sbx_reaped(d, pid, status);
			ptod_sbx_cg_reaped(d, pid);
		}
	}
}

/*
 * Has our child @pid exited, or begun to (PF_EXITING of its thread group
 * leader, which every thread has by the time the last one drops the
 * process's files)?
 */
static bool exec_exiting(pid_t pid)
{
	siginfo_t si = { 0 };
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	size_t n;
	FILE *f;

	if (!waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
	    si.si_pid == pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* pid (comm) state ppid pgrp session tty_nr tpgid flags */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return true;
	return flags & 0x4;	/* PF_EXITING */
}

/*
 * The device says the executor @pid closed it (CORE_FAULT, EXEC_GONE):
 * its death, handled now rather than at SIGCHLD, which never comes if
 * it closed the device and lives on. One that lives on is killed; one
 * that is exiting keeps its own status. It is reaped here, or, if that
 * takes over a second, handled all the same and reaped at SIGCHLD.
 */
void ptod_exec_gone_event(struct ptod *d, pid_t pid, const char *event)
{
	bool alive;
	int status, i;
	pid_t r;

	if (pid <= 0 || pid != d->exec_pid)
		return;		/* not ours, or handled already */
	alive = !exec_exiting(pid);
	ptod_log(PTOD_LOG_WARN, "%s: pto-aicore (pid %d) closed the device%s",
		 event, (int)pid, alive ? " and still runs: killing it" : "");
	if (alive && kill(pid, SIGKILL) && errno != ESRCH)
		ptod_log(PTOD_LOG_WARN, "kill %d: %m", (int)pid);
	for (i = 0; i < 1000; i++) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid) {
			exec_reaped(d, pid, status, alive ? event : NULL);
			return;
		}
		if (r < 0)
			break;
		usleep(1000);
	}
	if (d->exec_kill_why[0])
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) was killed by ptod: %s",
			 (int)pid, d->exec_kill_why);
	else
		snprintf(d->exec_death, sizeof(d->exec_death),
			 "pto-aicore (pid %d) closed the device (%s)",
			 (int)pid, event);
	d->exec_old = pid;
	exec_down(d, pid, false);
}

/* "0-3,7": the cores of @mask, for messages. */
static void mask_str(const struct ptod *d, const uint64_t *mask, char *buf,
		     size_t len)
{
	uint32_t i, j;
	size_t n = 0;

	buf[0] = 0;
	for (i = 0; i < d->info.nr_cores && n < len; i = j) {
		if (!(mask[i / 64] & (1ULL << (i % 64)))) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < d->info.nr_cores &&
		     (mask[j / 64] & (1ULL << (j % 64))); j++)
			;
		n += (size_t)snprintf(buf + n, len - n, j - i > 1 ?
				      "%s%u-%u" : "%s%u", n ? "," : "", i,
				      j - 1);
	}
}

void ptod_own_attach(struct ptod *d, const uint64_t *mask)
{
	char cores[256];

	mask_str(d, mask, cores, sizeof(cores));
	ptod_log(PTOD_LOG_DEBUG, "pto-aicore (pid %d) attached cores %s",
		 (int)d->exec_pid, cores);
	pto2_engine_withhold(d->engine, mask, false);
}

/*
 * Another executor attached cores (only dead or offline ones can be):
 * nothing of ours runs there until ptod's own executor attaches them
 * again; what ran there fails.
 */
void ptod_foreign_attach(struct ptod *d, pid_t pid, const uint64_t *mask)
{
	char cores[256], why[320];

	mask_str(d, mask, cores, sizeof(cores));
	ptod_log(PTOD_LOG_WARN,
		 "pid %d, not ptod's executor, attached cores %s: ptod dispatches nothing to them until its own executor has them again",
		 (int)pid, cores);
	pto2_engine_withhold(d->engine, mask, true);
	snprintf(why, sizeof(why),
		 "another executor (pid %d) attached cores %s", (int)pid,
		 cores);
	fail_cores(d, mask, why);
}

/*
 * The HWS registers changed: in force now, not at the schedulers' next
 * look (which an idle engine takes only when it wakes).
 */
void ptod_hws_changed(struct ptod *d)
{
	if (d->engine)
		pto2_engine_load_regs(d->engine);
}

/*
 * Events were lost (a change of the HWS registers among them, maybe): a
 * core of a ready executor that is not ONLINE says
 * the executor closed the device. (Who attached cores cannot be read
 * back; an executor of ptod's attaches them all or none.)
 */
void ptod_events_resync(struct ptod *d)
{
	uint32_t i;
	bool ready;

	ptod_hws_changed(d);
	pthread_mutex_lock(&d->dev_lock);
	ready = d->exec_ready;
	pthread_mutex_unlock(&d->dev_lock);
	if (!ready || d->exec_pid <= 0)
		return;
	for (i = 0; i < d->info.nr_cores; i++)
		if (reg_load_acquire(&ptod_core(d, i)->state) !=
		    PTO_CORE_ONLINE) {
			ptod_exec_gone_event(d, d->exec_pid,
					     "resync after lost events");
			return;
		}
}

static void stop_executor(struct ptod *d)
{
	int64_t deadline = pto_mono_ns() + 3000000000LL;
	uint32_t i;

	if (d->exec_pid <= 0)
		return;
	for (i = 0; i < d->info.nr_cores; i++)
		reg_store_release(&ptod_core(d, i)->data_main_base,
				  PTO_DMB_EXIT);
	atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < d->info.nr_cores; i++)
		if (d->pdev.kick(d, i))
			ptod_log(PTOD_LOG_WARN, "KICK %u: %m", i);
	while (pto_mono_ns() < deadline) {
		if (waitpid(d->exec_pid, NULL, WNOHANG) == d->exec_pid) {
			d->exec_pid = 0;
			return;
		}
		usleep(10000);
	}
	ptod_log(PTOD_LOG_WARN, "pto-aicore did not exit, killing it");
	kill(d->exec_pid, SIGKILL);
	waitpid(d->exec_pid, NULL, 0);
	d->exec_pid = 0;
}

/* ---- Clients ----------------------------------------------------------------------- */

static void client_stop(struct client *c, int err)
{
	struct ptod *d = c->d;
	uint64_t one = 1;
	int exp = 0;

	atomic_compare_exchange_strong(&c->stop_err, &exp, err);
	ptod_drain_watch(c);
	if (c->efd >= 0 && write(c->efd, &one, sizeof(one)) < 0)
		ptod_log(PTOD_LOG_ERR, "eventfd: %m");
	/* a run in progress: abort it (its cores drain, then it ends) */
	pthread_mutex_lock(&d->dev_lock);
	if (atomic_load(&c->in_run) && c->rt)
		pto2_runtime_abort(c->rt, err);
	pthread_cond_broadcast(&d->dev_cond);
	pthread_mutex_unlock(&d->dev_lock);
}

static void client_destroy(struct client *c)
{
	struct ptod *d = c->d;
	struct client **pp;

	ptod_trace_client_gone(c);
	for (pp = &d->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->runner_live)
		pthread_join(c->runner, NULL);
	if (c->rt)
		pto2_runtime_destroy(c->rt);
	/* nothing logs about its graphs any more */
	ptod_clog_flush(c);
	/* no run of it is left: nothing touches its buffers any more */
	ptod_pins_free(d, &c->run_pins);
	ptod_pins_free(d, &c->old_kpins);
	ptod_pins_free(d, &c->life_pins);
	if (c->rt_handle)
		d->ops->gm_free(d, c->rt_handle);
	ptod_sbx_client_stop(c);
	if (c->reads_paused)
		d->reads_paused--;
	if (c->ev_read)
		event_free(c->ev_read);
	if (c->ev_silent)
		event_free(c->ev_silent);
	/* the client's buffers die with its file */
	d->ops->client_release(c);
	ptod_client_fini(c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->efd >= 0)
		close(c->efd);
	if (c->bell[0] >= 0)
		close(c->bell[0]);
	if (c->bell[1] >= 0)
		close(c->bell[1]);
	ptod_sock_close(d, c->uid, c->sock);
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->log_lock);
	free(c->ph);
	free(c->cl);
	ptod_conn_log(d, PTOD_LOG_INFO, "client %u (pid %d) gone", c->id,
		      (int)c->pid);
	free(c);
}

static void on_fin(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	struct client *list, *c;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0)
		(void)0;
	pthread_mutex_lock(&d->fin_lock);
	list = d->fin;
	d->fin = NULL;
	pthread_mutex_unlock(&d->fin_lock);
	while ((c = list)) {
		list = c->fin_next;
		client_destroy(c);
	}
	if (d->clients == NULL && d->listen_fd < 0)
		event_base_loopexit(d->base, NULL);	/* shutdown complete */
}

/* The runtime variables the client forwarded at hello (env.h order). */
static const char *hello_getenv(void *ctx, const char *name)
{
	const struct pto_msg_hello *h = ctx;
	int i;

	for (i = 0; i < PTO_HELLO_ENV_N; i++)
		if (!strcmp(name, pto_env_names[i]) && (h->env_set & (1u << i)))
			return h->env[i];
	return NULL;
}

/* Close @passed (-1: none), a descriptor @c passed that ptod does not keep. */
static void drop_passed(struct client *c, int passed)
{
	ptod_close_later(c->d, c->uid, passed);
}

/*
 * Hello, phase 1: the protocol version, the device file the client passed
 * (ours: the same character device) and its stream buffer (one of the
 * client's own GM buffers, with a valid header). 0 or -errno after
 * replying.
 */
static int hello_check(struct client *c, const struct pto_msg_hello *h,
		       int fd)
{
	struct ptod *d = c->d;

	if (fd < 0) {
		ptod_reply(c, -EBADF, "hello without the client's device file");
		return -EBADF;
	}
	if (h->wire_version != PTO_WIRE_VERSION) {
		drop_passed(c, fd);
		ptod_reply(c, -EPROTO, "protocol version %u, ptod speaks %u",
		      h->wire_version, PTO_WIRE_VERSION);
		return -EPROTO;
	}
	/* any other file may take long to close (ptod_closer.c) */
	if (d->ops->client_file(c, fd)) {
		drop_passed(c, fd);
		ptod_reply(c, -ENODEV, "the file passed is not a file of %s",
			   d->dev_path);
		return -ENODEV;
	}
	c->cfd = fd;
	/* pinned: ptod writes it for as long as the client lives */
	if (!h->stream_len ||
	    ptod_pin_range(c, &c->life_pins, h->stream_addr, h->stream_len)) {
		ptod_reply(c, -EACCES,
		      "the stream buffer is not a GM buffer of the client's file");
		return -EACCES;
	}
	/*
	 * ptod's atomics on the header's words must not straddle a cache
	 * line (a split lock) or fault (an unaligned acquire on arm64).
	 */
	if (h->stream_addr % alignof(struct pto_stream_hdr)) {
		ptod_reply(c, -EINVAL,
			   "the stream buffer at 0x%" PRIx64 " is not aligned to %zu bytes",
			   (uint64_t)h->stream_addr,
			   alignof(struct pto_stream_hdr));
		return -EINVAL;
	}
	c->stream_dev = h->stream_addr;
	c->sh = ptod_gm(d, h->stream_addr, h->stream_len);
	if (!c->sh || h->stream_len < PTO_STREAM_HDR_SIZE + 4096 ||
	    c->sh->magic != PTO_STREAM_MAGIC) {
		ptod_reply(c, -EINVAL, "bad stream buffer");
		return -EINVAL;
	}
	c->ssize = c->sh->data_size;
	if (c->ssize < 4096 || (c->ssize & (c->ssize - 1)) ||
	    c->ssize > h->stream_len - PTO_STREAM_HDR_SIZE) {
		ptod_reply(c, -EINVAL, "bad stream size %u", c->ssize);
		return -EINVAL;
	}
	c->sdata = (uint8_t *)c->sh + PTO_STREAM_HDR_SIZE;
	c->tail = atomic_load(&c->sh->tail);
	return 0;
}

/*
 * The clusters a user but root may hold, all its clients together (-L;
 * by default half the device's): one user's open graphs cannot keep
 * every other user's CLUSTER_ALLOC waiting.
 */
static void cluster_limit(struct client *c)
{
	struct ptod *d = c->d;
	uint32_t n = d->max_clusters_uid;

	if (!c->uid)
		return;
	if (n == PTOD_CLUSTERS_HALF) {
		n = pto2_engine_clusters(d->engine) / 2;
		n = n ? n : 1;
	}
	c->cfg.cluster_user = n ? (uint32_t)c->uid + 1 : 0;
	c->cfg.cluster_limit = n;
}

/* Phase 2: ptod's defaults, then the client's environment, validated. */
static int hello_config(struct client *c, struct pto_msg_hello *h)
{
	struct ptod *d = c->d;
	char err[512];
	int i;

	pto2_config_default(&c->cfg);
	c->cfg.task_window = d->def_task_window;
	c->cfg.heap_size = d->def_heap;
	for (i = 0; i < PTO_HELLO_ENV_N; i++)
		h->env[i][PTO_HELLO_ENV_LEN - 1] = 0;
	if (pto2_config_from_getenv(&c->cfg, hello_getenv, h, err,
				    sizeof(err))) {
		ptod_reply(c, -EINVAL, "%s", err);
		return -EINVAL;
	}
	/*
	 * The window sizes what the main thread builds now and the host
	 * memory of the client's rings and queues, which no quota counts:
	 * a user but root gets at most ptod's own (-w).
	 */
	if (c->uid && c->cfg.task_window > d->def_task_window) {
		ptod_reply(c, -EINVAL,
			   "PTO2_RING_TASK_WINDOW=%u: more than %u, the most ptod lets a user but root ask for (its -w)",
			   c->cfg.task_window, d->def_task_window);
		return -EINVAL;
	}
	/*
	 * The heap and the dependency pool are GM that the main thread
	 * allocates and pto.ko zeroes now, for every hello: a user but
	 * root gets at most ptod's own heap (-H) and PTOD_DEP_POOL_USER.
	 */
	if (c->uid && c->cfg.heap_size > d->def_heap) {
		ptod_reply(c, -EINVAL,
			   "PTO2_RING_HEAP=%" PRIu64 ": more than %" PRIu64 ", the most ptod lets a user but root ask for (its -H)",
			   c->cfg.heap_size, d->def_heap);
		return -EINVAL;
	}
	if (c->uid && c->cfg.dep_pool_size > PTOD_DEP_POOL_USER) {
		ptod_reply(c, -EINVAL,
			   "PTO2_RING_DEP_POOL=%u: more than %u, the most ptod lets a user but root ask for",
			   c->cfg.dep_pool_size, PTOD_DEP_POOL_USER);
		return -EINVAL;
	}
	c->cfg.kernel_addrs = c->kaddrs;
	c->cfg.nr_kernel_addrs = PTO2_MAX_KERNELS;
	cluster_limit(c);
	c->cfg.log = pto2_log_cb;
	c->cfg.log_ctx = c;
	if (pto2_config_validate(&c->cfg, err, sizeof(err))) {
		ptod_reply(c, -EINVAL, "%s", err);
		return -EINVAL;
	}
	return 0;
}

/* The HWS context of a client of user @uid. */
static uint32_t ctx_of_uid(const struct ptod *d, uid_t uid)
{
	uint32_t i;

	for (i = 0; i < d->ctx_rules.nr; i++)
		if (d->ctx_rules.rule[i].uid == uid)
			return (uint32_t)d->ctx_rules.rule[i].v;
	return 0;
}

/* Phase 3: the client's runtime, its memory in GM owned by ptod. */
static int hello_runtime(struct client *c)
{
	struct ptod *d = c->d;
	char why[256];
	int ret;

	c->rt_size = pto2_runtime_mem_size(&c->cfg, d->info.nr_cores);
	ret = d->ops->gm_alloc(d, c->rt_size, c->uid, &c->rt_handle,
			       &c->rt_dev);
	if (ret == -EDQUOT) {
		ptod_gm_quota_why(d, c->uid, c->rt_size, why, sizeof(why));
		ptod_reply(c, ret, "%s", why);
		return ret;
	}
	if (ret) {
		ptod_reply(c, ret,
		      "cannot allocate %zu bytes of GM for the runtime (task window %u, heap %" PRIu64 "): %s",
		      c->rt_size, c->cfg.task_window, c->cfg.heap_size,
		      strerror(-ret));
		return ret;
	}
	ret = pto2_runtime_create(&d->pdev, &c->cfg,
				  ptod_gm(d, c->rt_dev, c->rt_size), c->rt_dev,
				  c->rt_size, &c->rt);
	if (ret) {
		ptod_reply(c, ret, "cannot create the runtime: %s", strerror(-ret));
		return ret;
	}
	c->ctx = ctx_of_uid(d, c->uid);
	ret = pto2_runtime_set_context(c->rt, c->ctx);
	if (!ret && d->rec_file) {
		char name[48];

		snprintf(name, sizeof(name), "uid%u.client%u", (unsigned)c->uid,
			 c->id);
		ret = pto2_runtime_record(c->rt, d->rec_file, name,
					  d->start_ns);
	}
	return ret;
}

/* Phase 4: the runner's eventfd, the client's doorbell, the runner. */
static int hello_start(struct client *c)
{
	int ret;

	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		ret = -errno;
		ptod_reply(c, ret, "eventfd: %s", strerror(-ret));
		return ret;
	}
	if (pipe2(c->bell, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		ptod_reply(c, ret, "pipe: %s", strerror(-ret));
		return ret;
	}
	ret = -pthread_create(&c->runner, NULL, ptod_runner_main, c);
	if (ret) {
		ptod_reply(c, ret, "cannot start the runner thread: %s",
		      strerror(-ret));
		return ret;
	}
	c->runner_live = true;
	return 0;
}

/* 0, or -errno after replying: the connection is then closed */
static int handle_hello(struct client *c, struct pto_msg *m, int fd)
{
	struct ptod *d = c->d;
	struct pto_msg r;
	int ret;

	if (c->hello_done) {
		drop_passed(c, fd);
		ptod_reply(c, -EALREADY, "hello already done");
		return 0;
	}
	ret = hello_check(c, &m->u.hello, fd);
	if (!ret)
		ret = hello_config(c, &m->u.hello);
	if (!ret) {
		ret = ptod_sbx_client_start(c, r.text, sizeof(r.text));
		if (ret)
			ptod_reply(c, ret, "%s", r.text);
	}
	if (!ret)
		ret = hello_runtime(c);
	if (!ret)
		ret = hello_start(c);
	if (ret)
		return ret;
	c->hello_done = true;
	ptod_conn_log(d, PTOD_LOG_INFO,
		      "client %u (pid %d uid %d): runtime of %zu KiB GM (task window %u, heap %" PRIu64 " KiB)",
		      c->id, (int)c->pid, (int)c->uid, c->rt_size >> 10,
		      c->cfg.task_window, c->cfg.heap_size >> 10);
	memset(&r, 0, sizeof(r));
	r.type = PTO_MSG_REPLY;
	r.u.hello_reply.ctx_id = c->id;
	r.u.hello_reply.nr_aic = d->info.nr_aic;
	r.u.hello_reply.nr_aiv = d->info.nr_aiv;
	r.u.hello_reply.task_window = c->cfg.task_window;
	r.u.hello_reply.heap_size = c->cfg.heap_size;
	/* the doorbell: the client wakes the runner without us */
	ptod_send_fds(c, &r, &c->bell[1], 1);
	return 0;
}

/* Does the client name [@start, @end) for its life (stream, a kernel)? */
static bool life_named(struct client *c, uint64_t start, uint64_t end)
{
	int i;

	if (c->stream_dev >= start && c->stream_dev < end)
		return true;
	for (i = 0; i < PTO2_MAX_KERNELS; i++)
		if (atomic_load(&c->ktype[i]) >= 0 &&
		    c->kaddrs[i] >= start && c->kaddrs[i] < end)
			return true;
	return false;
}

/*
 * The client may have stopped naming the buffer that holds @addr (a
 * kernel id's blob moved to another buffer, or a registration failed):
 * unless its stream buffer or a registered kernel's blob lies in it, its
 * life pin goes. Not at once while a run is in flight: its tasks read a
 * kernel's address from c->kaddrs[] at dispatch, and a core reads the
 * blob when it first runs it, so a task of that run may still run the
 * old blob. The pin then goes to c->old_kpins, which the runner drops
 * once the run has drained (run_leave). A run that starts later
 * (run_enter takes d->dev_lock after us) sees the new addresses only.
 * @fresh: the pin was taken just now, for a registration that failed: no
 * task can have that address, so it goes at once (and a client cannot
 * grow c->old_kpins past PTOD_MAX_OLD_KPINS by failing registrations).
 */
static void life_unpin_unnamed(struct client *c, uint64_t addr, bool fresh)
{
	struct ptod *d = c->d;
	const struct ptod_pin *p = ptod_pin_find(&c->life_pins, addr);
	int ret = 0;

	if (!p || life_named(c, p->start, p->end))
		return;
	pthread_mutex_lock(&d->dev_lock);
	if (!fresh && atomic_load(&c->in_run))
		ret = ptod_pin_move(d, &c->life_pins, &c->old_kpins, addr);
	else
		ptod_pin_drop(d, &c->life_pins, addr);
	pthread_mutex_unlock(&d->dev_lock);
	if (ret)
		ptod_log(PTOD_LOG_WARN,
			 "client %u: the buffer at 0x%" PRIx64 " stays pinned until the client goes: %s",
			 c->id, addr, strerror(-ret));
}

/*
 * Pin kernel blob @k->blob_addr for the client's life (cores run it
 * until the client goes or the kernel id moves): the header, then the
 * whole blob must lie in one of the client's buffers. 0, or -errno and
 * the client has its reply.
 */
static int kreg_pin_blob(struct client *c, const struct pto_msg_kreg *k,
			 uint64_t *size)
{
	const void *h = ptod_gm(c->d, k->blob_addr, PTO_KBLOB_HDR_SIZE);
	struct pto_kblob_hdr hdr;

	if (!h || ptod_pin_range(c, &c->life_pins, k->blob_addr,
				 PTO_KBLOB_HDR_SIZE)) {
		ptod_reply(c, -EACCES, "kernel %d: blob address 0x%" PRIx64 " is not in a GM buffer of this client",
		      k->func_id, k->blob_addr);
		return -EACCES;
	}
	/* once, and at any alignment: the client chose the address */
	memcpy(&hdr, h, sizeof(hdr));
	*size = hdr.size;
	/* pto-aicore would refuse it at its first task */
	if (hdr.magic == PTO_KBLOB_MAGIC && hdr.version != PTO_KBLOB_VERSION) {
		ptod_reply(c, -ENOEXEC,
			   "kernel %d: the blob at 0x%" PRIx64 " is of version %u; this ptod runs version %u",
			   k->func_id, k->blob_addr, hdr.version,
			   PTO_KBLOB_VERSION);
		return -ENOEXEC;
	}
	if (hdr.magic != PTO_KBLOB_MAGIC || !*size ||
	    *size > PTO_KBLOB_MAX_SIZE ||
	    ptod_pin_range(c, &c->life_pins, k->blob_addr,
			   PTO_KBLOB_HDR_SIZE + *size)) {
		ptod_reply(c, -ENOEXEC, "kernel %d: no valid kernel blob at 0x%" PRIx64,
		      k->func_id, k->blob_addr);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * A blob replaced while a run is in flight stays pinned until the run
 * drains (life_unpin_unnamed): at most PTOD_MAX_OLD_KPINS of them, so
 * that neither the set nor its release at the run's end grows without
 * bound. true if @k is refused for that (the client has its reply).
 */
static bool kreg_replaced_too_often(struct client *c,
				    const struct pto_msg_kreg *k)
{
	struct ptod *d = c->d;
	uint32_t n;

	if (atomic_load(&c->ktype[k->func_id]) < 0 ||
	    c->kaddrs[k->func_id] == k->blob_addr)
		return false;
	pthread_mutex_lock(&d->dev_lock);
	n = atomic_load(&c->in_run) ? c->old_kpins.n : 0;
	pthread_mutex_unlock(&d->dev_lock);
	if (n < PTOD_MAX_OLD_KPINS)
		return false;
	ptod_reply(c, -EBUSY,
		   "kernel %d: %u kernel blobs were replaced while a graph of this client runs (at most %d): wait for the graph before replacing more",
		   k->func_id, n, PTOD_MAX_OLD_KPINS);
	return true;
}

static void handle_kreg(struct client *c, struct pto_msg *m)
{
	struct pto_msg_kreg *k = &m->u.kreg;
	uint64_t old, size;

	if (!pto_kernel_id_ok(k->func_id)) {
		ptod_reply(c, -EINVAL, "kernel id %d out of range 0..%d", k->func_id,
		      PTO2_MAX_KERNELS - 1);
		return;
	}
	if (k->core_type != PTO2_WORKER_CUBE &&
	    k->core_type != PTO2_WORKER_VECTOR &&
	    k->core_type != PTO2_WORKER_MIXED) {
		ptod_reply(c, -EINVAL, "kernel %d: bad core type %d", k->func_id,
		      k->core_type);
		return;
	}
	if (k->required_caps & ~c->d->info.caps) {
		char need[256];

		pto_caps_format(k->required_caps & ~c->d->info.caps, need,
				sizeof(need));
		ptod_reply(c, -EOPNOTSUPP,
		      "kernel %d needs %s, which the %s profile of this device lacks",
		      k->func_id, need, pto_profile_name(c->d->info.profile));
		return;
	}
	if (kreg_replaced_too_often(c, k))
		return;
	if (kreg_pin_blob(c, k, &size)) {
		/* a buffer pinned for nothing */
		life_unpin_unnamed(c, k->blob_addr, true);
		return;
	}
	old = atomic_load(&c->ktype[k->func_id]) >= 0 ?
	      c->kaddrs[k->func_id] : 0;
	__atomic_store_n(&c->kaddrs[k->func_id], k->blob_addr, __ATOMIC_RELEASE);
	atomic_store(&c->ktype[k->func_id], k->core_type);
	/* the kernel id's previous blob, if no longer needed */
	if (old && old != k->blob_addr)
		life_unpin_unnamed(c, old, false);
	if (k->est_ns)
		pto2_rt_set_kernel_cost(c->rt, k->func_id, k->est_ns);
	ptod_log(PTOD_LOG_DEBUG, "client %u: kernel %d (%s, %" PRIu64 " bytes)",
		 c->id, k->func_id,
		 k->core_type == PTO2_WORKER_CUBE ? "AIC" :
		 k->core_type == PTO2_WORKER_VECTOR ? "AIV" : "AIC+AIV", size);
	ptod_reply(c, 0, NULL);
}

/*
 * Receive one message from @fd into @m, and every descriptor that came
 * with it into @fds (room for PTO_FDPASS_ANY_MAX; their number into
 * *@nfds): none is closed here (ptod_closer.c says why). Returns the
 * length the message had (more than sizeof(*@m) for one cut to fit: the
 * caller refuses it), 0 on EOF, -EAGAIN when there is nothing to read,
 * or -errno.
 */
static ssize_t recv_msg(int fd, struct pto_msg *m, int *fds,
			unsigned int *nfds)
{
	ssize_t n;

	memset(m, 0, sizeof(*m));
	n = pto_recv_with_fds(fd, m, sizeof(*m), MSG_DONTWAIT | MSG_TRUNC,
			      fds, nfds);
	if (n == -EINTR)
		return -EAGAIN;
	m->text[sizeof(m->text) - 1] = 0;
	return n;
}

/* The client hung up: stop its runner; it reports back, then we free. */
static void client_gone(struct client *c)
{
	event_del(c->ev_read);
	event_del(c->ev_write);
	if (c->ev_silent)
		event_del(c->ev_silent);
	ptod_conn_log(c->d, PTOD_LOG_INFO, "client %u (pid %d) disconnected",
		      c->id, (int)c->pid);
	/* nobody reads its blocks any more, nor counts against its user */
	ptod_trace_client_gone(c);
	client_stop(c, -ECONNRESET);
	if (!c->runner_live)
		client_destroy(c);
}

/*
 * A connection of a user the device does not serve: one clear reply to
 * its first message, then it is closed (replying at once would race with
 * the client's first send).
 */
static void refuse_peer(struct client *c)
{
	c->refused = true;
	ptod_reply(c, -EACCES,
		   "ptod's %s device serves only its own user (uid %u) and root; uid %u is refused (see Documentation/user-device.rst)",
		   c->d->ops->name, (unsigned int)geteuid(),
		   (unsigned int)c->uid);
	event_del(c->ev_read);
	event_del(c->ev_write);
	client_destroy(c);
}

/*
 * PTOD_SILENT_REFUSE_MS after a refused user connected: refuse it now if
 * it has sent nothing (what it sends from now on races with the reply,
 * as at accept); else its message is waiting, or waiting for the closer,
 * and is refused when read.
 */
static const struct timeval silent_tv = {
	PTOD_SILENT_REFUSE_MS / 1000, PTOD_SILENT_REFUSE_MS % 1000 * 1000
};

static void on_silent(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	bool carries;

	(void)fd;
	(void)what;
	if (c->reads_paused || ptod_peek(c->sock, &carries) != -EAGAIN) {
		if (evtimer_add(c->ev_silent, &silent_tv))
			ptod_log(PTOD_LOG_ERR, "libevent: cannot arm a timer");
		return;
	}
	ptod_conn_log(c->d, PTOD_LOG_INFO,
		      "client %u (pid %d uid %d) sent nothing in %d ms",
		      c->id, (int)c->pid, (int)c->uid, PTOD_SILENT_REFUSE_MS);
	refuse_peer(c);
}

/*
 * Watch the connection @c of a user the device refuses, so that it is
 * refused even if it never says a word; 0 or -ENOMEM.
 */
static int silent_watch(struct client *c)
{
	c->ev_silent = evtimer_new(c->d->base, on_silent, c);
	if (c->ev_silent && !evtimer_add(c->ev_silent, &silent_tv))
		return 0;
	ptod_log(PTOD_LOG_ERR, "libevent: cannot arm a timer");
	if (c->ev_silent)
		event_free(c->ev_silent);
	c->ev_silent = NULL;
	return -ENOMEM;
}

/* A message after hello. */
static void handle_msg(struct client *c, struct pto_msg *m)
{
	uint64_t one = 1;

	switch (m->type) {
	case PTO_MSG_KERNEL_REG:
		handle_kreg(c, m);
		break;
	case PTO_MSG_DOORBELL:
		if (write(c->efd, &one, sizeof(one)) < 0)
			ptod_log(PTOD_LOG_ERR, "eventfd: %m");
		break;
	case PTO_MSG_PING:
		ptod_reply(c, 0, NULL);
		break;
	default:
		ptod_reply(c, -EOPNOTSUPP, "unknown message %u", m->type);
		break;
	}
}

static void on_pause_end(evutil_socket_t fd, short what, void *arg);

/*
 * Look again in PTOD_ACCEPT_PAUSE_MS: at the listening socket, if @unwatch
 * (it is not watched until then), and at the clients whose reads wait for
 * the closer.
 */
static void pause_arm(struct ptod *d, bool unwatch)
{
	struct timeval tv = { 0, PTOD_ACCEPT_PAUSE_MS * 1000 };

	if (unwatch)
		event_del(d->ev_listen);
	if (evtimer_add(d->ev_pause, &tv)) {
		ptod_log(PTOD_LOG_ERR, "libevent: cannot arm the pause timer");
		on_pause_end(-1, 0, d);	/* @what 0: it arms no timer again */
	}
}

/*
 * The pause is over (@what: EV_TIMEOUT): watch the listening socket again,
 * and the clients whose reads waited, if the closer has room (else look
 * again later).
 */
static void on_pause_end(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	struct client *c;

	(void)fd;
	if (d->ev_listen && event_add(d->ev_listen, NULL))
		ptod_log(PTOD_LOG_ERR, "libevent: cannot watch the listening socket");
	if (!d->reads_paused)
		return;
	if (ptod_closer_full(d)) {
		if (what)
			pause_arm(d, false);
		return;
	}
	for (c = d->clients; c; c = c->next) {
		if (!c->reads_paused)
			continue;
		c->reads_paused = false;
		d->reads_paused--;
		if (event_add(c->ev_read, NULL))
			ptod_log(PTOD_LOG_ERR, "libevent: cannot watch client %u",
				 c->id);
	}
}

/*
 * The message waiting on @c's socket carries descriptors and the closer
 * is full (ptod_closer_full()): @c is not read until it has room, so that
 * what ptod holds stays bounded.
 */
static void reads_pause(struct client *c)
{
	struct ptod *d = c->d;

	event_del(c->ev_read);
	c->reads_paused = true;
	if (!d->reads_paused++)
		ptod_conn_log(d, PTOD_LOG_WARN,
			      "client %u (pid %d uid %d) waits: the closer holds %d or more descriptors clients passed, still closing",
			      c->id, (int)c->pid, (int)c->uid,
			      PTOD_CLOSER_MAX);
	pause_arm(d, false);
}

/*
 * The descriptors @fds (@nfds) a message of @c's carried: the first is
 * returned, to be kept or closed; the others, which no message of ours
 * carries, go to the closer. False if @c's user has too many still
 * closing: the client is then to be dropped.
 */
static bool take_passed(struct client *c, int *fds, unsigned int nfds,
			int *passed)
{
	unsigned int closing;

	*passed = -1;
	if (!nfds)
		return true;
	*passed = fds[0];
	ptod_close_fds_later(c->d, c->uid, fds + 1, nfds - 1);
	closing = ptod_closing(c->d, c->uid);
	if (closing < PTOD_CLOSING_MAX)
		return true;
	ptod_conn_log(c->d, PTOD_LOG_WARN,
		      "client %u (pid %d uid %d) dropped: %u descriptors its user passed are still closing",
		      c->id, (int)c->pid, (int)c->uid, closing);
	return false;
}

static void on_client_read(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	int fds[PTO_FDPASS_ANY_MAX];
	unsigned int nfds;
	struct pto_msg m;
	bool carries;
	int passed;
	ssize_t n;

	(void)what;
	if (atomic_load(&c->out_dead)) {
		/* dropped by ptod_send(): what it still sent is not read */
		client_gone(c);
		return;
	}
	if (ptod_closer_full(c->d) && ptod_peek(fd, &carries) >= 0 &&
	    carries) {
		reads_pause(c);
		return;
	}
	/* one message per wakeup: every client gets its turn */
	n = recv_msg(fd, &m, fds, &nfds);
	if (n == -EAGAIN)
		return;
	if (!take_passed(c, fds, nfds, &passed)) {
		drop_passed(c, passed);
		client_gone(c);
		return;
	}
	if (n <= 0) {
		drop_passed(c, passed);
		client_gone(c);
		return;
	}
	if (!c->refused && !c->d->ops->peer_ok(c->d, c->uid)) {
		drop_passed(c, passed);
		refuse_peer(c);
		return;
	}
	if ((size_t)n < offsetof(struct pto_msg, text)) {
		drop_passed(c, passed);
		ptod_reply(c, -EPROTO, "short message");
		return;
	}
	if ((size_t)n > sizeof(m)) {
		drop_passed(c, passed);
		ptod_reply(c, -EPROTO, "message of %zd bytes, longer than any (%zu)",
			   n, sizeof(m));
		return;
	}
	if (ptod_info_message(c, &m)) {
		drop_passed(c, passed);
		return;
	}
	if (m.type >= PTO_MSG_DEV_OPEN && m.type <= PTO_MSG_HWS_CONFIG) {
		drop_passed(c, passed);
		c->d->ops->message(c, &m);
		return;
	}
	if (m.type == PTO_MSG_HELLO) {
		if (handle_hello(c, &m, passed)) {
			/* refused: nothing was started, close the connection */
			event_del(c->ev_read);
			event_del(c->ev_write);
			client_destroy(c);
		}
		return;
	}
	drop_passed(c, passed);
	if (!c->hello_done) {
		ptod_reply(c, -EPROTO, "hello first");
		return;
	}
	handle_msg(c, &m);
}

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * accept4() failed with @err. A connection that went before we took it,
 * or a signal, is nothing. Anything else (no descriptor left: EMFILE,
 * ENFILE; no memory: ENOBUFS, ENOMEM) leaves the connection waiting, and
 * the socket readable: watched as it is, the loop would call us again
 * at once, for as long as it lasts, at 100% of a CPU. So the socket is
 * not watched for PTOD_ACCEPT_PAUSE_MS, then again; said once until a
 * connection is accepted again.
 */
static void accept_failed(struct ptod *d, int err)
{
	struct rlimit rl = { 0, 0 };

	if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR ||
	    err == ECONNABORTED)
		return;
	pause_arm(d, true);
	if (d->accept_failing)
		return;
	d->accept_failing = true;
	getrlimit(RLIMIT_NOFILE, &rl);
	ptod_log(PTOD_LOG_WARN,
		 "cannot accept connections: %s (descriptors: RLIMIT_NOFILE %llu); they wait, tried again every %d ms",
		 strerror(err), (unsigned long long)rl.rlim_cur,
		 PTOD_ACCEPT_PAUSE_MS);
}

/*
 * The closer is full (ptod_closer_full()): a connection accepted now and
 * refused would be one more descriptor for it, if its queue carries any.
 * Connections wait, as in accept_failed().
 */
static void accept_closer_full(struct ptod *d)
{
	pause_arm(d, true);
	if (d->accept_failing)
		return;
	d->accept_failing = true;
	ptod_log(PTOD_LOG_WARN,
		 "not accepting connections: the closer holds %d or more descriptors clients passed, still closing; they wait, tried again every %d ms",
		 PTOD_CLOSER_MAX, PTOD_ACCEPT_PAUSE_MS);
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct client *c;
	int s, i;

	(void)what;
	if (ptod_closer_full(d)) {
		accept_closer_full(d);
		return;
	}
	s = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (s < 0) {
		accept_failed(d, errno);
		return;
	}
	if (d->accept_failing) {
		d->accept_failing = false;
		ptod_log(PTOD_LOG_INFO, "accepting connections again");
	}
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		ptod_log(PTOD_LOG_WARN, "SO_PEERCRED: %m; connection refused");
		ptod_sock_close(d, (uid_t)-1, s);
		return;
	}
	if (ptod_accept_check(d, s, &cred)) {
		ptod_sock_close(d, cred.uid, s);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ptod_sock_close(d, cred.uid, s);
		return;
	}
	c->d = d;
	c->id = ptod_client_id_next(d);
	c->sock = s;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->cfd = -1;
	c->sbx_mfd = c->sbx_pidfd = -1;
	c->efd = -1;
	c->bell[0] = c->bell[1] = -1;
	for (i = 0; i < PTO2_MAX_KERNELS; i++)
		atomic_init(&c->ktype[i], -1);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->log_lock, NULL);
	c->since_ns = real_ns();
	c->ev_read = ptod_client_init(c) ? NULL :
		     watch(d, s, EV_READ | EV_PERSIST, on_client_read, c,
			   "a client socket");
	if (c->ev_read && !d->ops->peer_ok(d, c->uid) && silent_watch(c)) {
		event_free(c->ev_read);
		c->ev_read = NULL;
	}
	if (!c->ev_read) {
		ptod_client_fini(c);
		pthread_mutex_destroy(&c->send_lock);
		pthread_mutex_destroy(&c->log_lock);
		free(c);
		ptod_sock_close(d, cred.uid, s);
		return;
	}
	c->next = d->clients;
	d->clients = c;
	ptod_conn_log(d, PTOD_LOG_DEBUG, "client %u connected (pid %d uid %d)",
		      c->id, (int)c->pid, (int)c->uid);
}

static int listen_socket(struct ptod *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *dn;
	mode_t old_mask;
	int s, ret;

	if (strlen(d->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->sock_path);
	strcpy(dir, d->sock_path);
	dn = dirname(dir);
	if (mkdir(dn, 0755) && errno != EEXIST)
		ptod_log(PTOD_LOG_WARN, "mkdir %s: %m", dn);
	ret = ptod_socket_dir_check(dn);
	if (ret)
		return ret;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	unlink(d->sock_path);
	/* root's alone until it has its group and mode, before listen() */
	old_mask = umask(0177);
	ret = bind(s, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_mask);
	if (!ret)
		ret = ptod_socket_perms(d);
	if (!ret && listen(s, 64))
		ret = -errno;
	if (ret) {
		ptod_log(PTOD_LOG_ERR, "%s: %s", d->sock_path, strerror(-ret));
		close(s);
		return ret;
	}
	d->ev_pause = evtimer_new(d->base, on_pause_end, d);
	d->ev_listen = d->ev_pause ?
		       watch(d, s, EV_READ | EV_PERSIST, on_accept, d,
			     "the listening socket") : NULL;
	if (!d->ev_listen) {
		close(s);
		unlink(d->sock_path);
		return -ENOMEM;
	}
	d->listen_fd = s;
	return 0;
}

/* ---- Signals, shutdown ------------------------------------------------------------------ */

static void shutdown_begin(struct ptod *d, int sig)
{
	struct client *c, *next;

	if (d->listen_fd < 0)
		return;
	ptod_log(PTOD_LOG_INFO, "signal %d: shutting down", sig);
	event_free(d->ev_listen);
	d->ev_listen = NULL;
	close(d->listen_fd);
	d->listen_fd = -1;
	unlink(d->sock_path);
	pthread_mutex_lock(&d->dev_lock);
	d->shutting_down = true;
	pthread_cond_broadcast(&d->dev_cond);
	pthread_mutex_unlock(&d->dev_lock);
	ptod_drain_shutdown(d);
	for (c = d->clients; c; c = next) {
		next = c->next;
		if (!c->runner_live) {
			client_destroy(c);
			continue;
		}
		client_stop(c, -ESHUTDOWN);
	}
	if (!d->clients)
		event_base_loopexit(d->base, NULL);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct ptod *d = arg;

	(void)what;
	if (sig == SIGCHLD)
		on_sigchld(d);
	else
		shutdown_begin(d, (int)sig);
}

static void sd_notify_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int s;

	if (!p || (p[0] != '/' && p[0] != '@') || strlen(p) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, p);
	if (p[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(p));
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	if (sendto(s, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		ptod_log(PTOD_LOG_WARN, "sd_notify: %m");
	close(s);
}

static void usage(void)
{
	struct pto2_engine_config ec;

	pto2_engine_config_default(&ec);
	fprintf(stderr,
		"usage: ptod [-d DEVICE|user] [-s SOCKET] [-a PTO_AICORE] [-b PTO_SANDBOX]\n"
		"            [-K all|nonroot|none] [-w TASK_WINDOW] [-H HEAP_BYTES]\n"
		"            [-S AICORE_SPINS] [-x UID=CTX]... [-R FILE]\n"
		"            [-m MODE] [-g GROUP] [-u UID]... [-c CONNS] [-C CONNS] [-D RUNS]\n"
		"            [-L CLUSTERS] [-Q BYTES] [-T MS] [-q MIB] [-q UID=MIB]...\n"
		"            [-G MS] [-M MIB] [-P TASKS] [-v]\n"
		"  -K WHO      whose kernels run in a sandbox, a process of the\n"
		"              client's uid and gid that maps only its buffers\n"
		"              (default nonroot; root's run in pto-aicore);\n"
		"              -d user allows only none\n"
		"  -w WINDOW   task window of a client that asks for none, and the\n"
		"              largest a user but root may ask for (default %u)\n"
		"  -m MODE     the socket's mode, octal (default 0660; 0600 without a group)\n"
		"  -g GROUP    the socket's group, whose members may connect\n"
		"              (default: " PTOD_DEFAULT_GROUP " if it exists)\n"
		"  -u UID      user UID may connect too\n"
		"  -c CONNS    connections per user but root (default %d, 0: no limit)\n"
		"  -C CONNS    connections in all (default %d, 0: no limit)\n"
		"  -D RUNS     graphs one user but root may have running at once, of\n"
		"              the engine's %d; more wait for one of them to end\n"
		"              (default %d, 0: no limit)\n"
		"  -L CLUSTERS clusters one user but root may hold at once, all its\n"
		"              clients together; one more fails with -EDQUOT if its\n"
		"              graph holds them all, else waits (default: half the\n"
		"              device's, 0: no limit)\n"
		"  -Q BYTES    replies queued for a client that does not read them\n"
		"              before it is dropped (default %u)\n"
		"  -T MS       a client that takes none of its queued replies for MS\n"
		"              is dropped (default %d)\n"
		"  -q MIB      GM each user but root may hold, its buffers and\n"
		"              its clients' runtimes (default: no limit)\n"
		"  -q UID=MIB  user UID's own GM quota instead (0: no limit)\n"
		"  -G MS       a stopped client's run (it hung up, or ptod stops)\n"
		"              may drain for MS; then its kernels' sandbox, or\n"
		"              pto-aicore, is killed (default %d)\n"
		"  -M MIB      private memory each sandbox may have besides its\n"
		"              worker threads' stacks (%lu MiB a core): heap, other\n"
		"              threads (RLIMIT_DATA; default %d, 0: no limit)\n"
		"  -P TASKS    a sandbox starts no thread while its user has TASKS\n"
		"              tasks (threads) on the host, its own included\n"
		"              (RLIMIT_NPROC; default %d, 0: no limit)\n"
		"  -d user     a user-mode device ptod creates (no pto.ko): PTO_USER_NR_AIC\n"
		"              (the profile's: 24, a5 72), PTO_USER_GM_MB (256),\n"
		"              PTO_USER_PROFILE (a2a3) size it\n"
		"  -R FILE     append every client's completed runs to FILE as DAGs\n"
		"              that pto-hws-sim replays (measured costs, producers)\n"
		"  -x UID=CTX  the tasks of user UID's clients use HWS context CTX\n"
		"              (0-%d; its usage masks); everyone else's use 0\n"
		"  PTO_HWS_CHECK=1 (environment): the HWS invariant checker after\n"
		"              every decision; a violation aborts ptod (the tests\n"
		"              set it; it costs 0.2-0.4 us a decision)\n"
		"  PTO_SCHED_SLEEP_MS=MS (environment): the longest sleep of an idle\n"
		"              scheduler thread (%llu); work and completions end it\n",
		PTOD_TASK_WINDOW, PTOD_MAX_CONN_UID, PTOD_MAX_CONN, HWS_MAX_DAGS,
		PTOD_MAX_RUNS_UID, PTOD_OUT_MAX, PTOD_OUT_MS,
		PTOD_DRAIN_GRACE_MS, PTO_SBX_STACK >> 20, PTOD_SBX_DATA_MIB,
		PTOD_SBX_TASKS,
		PTO_HWS_NR_CTX - 1,
		(unsigned long long)ec.wake_sleep_ns / 1000000);
}

int ptod_fd_id(int fd, struct ptod_fd_id *id)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO, &sx))
		return -errno;
	id->mode = sx.stx_mode & S_IFMT;
	id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id->rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	id->ino = sx.stx_ino;
	return 0;
}

/* Program @name next to our own executable, or from $PATH. */
void ptod_sibling_path(char *buf, size_t len, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 32);
	char *slash;

	if (n > 0) {
		buf[n] = 0;
		slash = strrchr(buf, '/');
		if (slash) {
			snprintf(slash + 1, len - (size_t)(slash + 1 - buf),
				 "%s", name);
			return;
		}
	}
	snprintf(buf, len, "%s", name);
}

/*
 * -w TASK_WINDOW, -H HEAP (the clients' defaults, by the rules of the
 * variables PTO2_RING_TASK_WINDOW and PTO2_RING_HEAP that override them),
 * -S AICORE_SPINS. 0, or -EINVAL after saying why.
 */
static int default_option(struct ptod *d, int opt, const char *arg)
{
	struct pto2_config cfg;
	char why[128];
	uint64_t v;

	if (opt == 'S') {
		if (pto_parse_u64_all(arg, 10, UINT32_MAX, &v)) {
			fprintf(stderr, "ptod: bad -S '%s': must be an integer from 0 to %u\n",
				arg, UINT32_MAX);
			return -EINVAL;
		}
		d->aicore_spins = (uint32_t)v;
		return 0;
	}
	pto2_config_default(&cfg);
	if (pto2_config_set_var(&cfg, opt == 'w' ? PTO_ENV_TASK_WINDOW :
				PTO_ENV_HEAP, arg, why, sizeof(why))) {
		fprintf(stderr, "ptod: bad -%c '%s': %s\n", opt, arg, why);
		return -EINVAL;
	}
	if (opt == 'w')
		d->def_task_window = cfg.task_window;
	else
		d->def_heap = cfg.heap_size;
	return 0;
}

/*
 * PTO_SCHED_SLEEP_MS: the longest sleep of an idle scheduler thread (the
 * engine's wake_sleep_ns; unset: its default). New work and completions
 * end the sleep, so it only caps what a lost wake-up costs; the tests make
 * it long so that one shows as a stall. 0, or -EINVAL after saying why.
 */
static int parse_quiet_sleep(struct ptod *d)
{
	if (!pto_env_bound_ms("PTO_SCHED_SLEEP_MS", &d->sched_sleep_ns))
		return 0;
	fprintf(stderr, "ptod: bad PTO_SCHED_SLEEP_MS '%s' (1 .. %d)\n",
		getenv("PTO_SCHED_SLEEP_MS"), PTO_BOUND_MS_MAX);
	return -EINVAL;
}

/* PTO_HWS_CHECK: the HWS invariant checker, off unless 1. 0 or -EINVAL. */
static int parse_hws_check(struct ptod *d)
{
	if (!pto_env_bool("PTO_HWS_CHECK", false, &d->hws_check))
		return 0;
	fprintf(stderr, "ptod: bad PTO_HWS_CHECK '%s' (0 or 1)\n",
		getenv("PTO_HWS_CHECK"));
	return -EINVAL;
}

/*
 * Is @path (option @opt) a program ptod can start? pto-aicore is started
 * again after every death: a path that cannot run would be tried once a
 * second for ever, while clients' graphs wait for cores that never come.
 */
static bool executable(const char *path, const char *opt)
{
	const char *why = NULL;
	struct stat st;

	if (stat(path, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (access(path, X_OK))
		why = strerror(errno);
	if (why)
		fprintf(stderr, "ptod: %s %s: %s\n", opt, path, why);
	return !why;
}

/* 0, or the exit status for a bad command line. */
static int parse_args(struct ptod *d, int argc, char **argv)
{
	int opt, ret;

	d->dev_path = "/dev/pto0";
	d->ops = &ptod_kdev_ops;
	d->sock_path = pto_socket_path(NULL);	/* -s below overrides it */
	ptod_sibling_path(d->aicore_buf, sizeof(d->aicore_buf), "pto-aicore");
	d->aicore_path = d->aicore_buf;
	ptod_sibling_path(d->sandbox_buf, sizeof(d->sandbox_buf),
			  "pto-sandbox");
	d->sandbox_path = d->sandbox_buf;
	d->aicore_spins = 2000;
	d->def_task_window = PTOD_TASK_WINDOW;
	d->def_heap = 32ULL << 20;
	ptod_guard_defaults(d);
	while ((opt = getopt(argc, argv, "d:s:a:b:w:H:S:K:x:R:m:g:u:c:C:D:L:Q:T:q:G:M:P:vh")) != -1) {
		/* the first sandbox option, named should there be no sandbox */
		if (strchr("bMP", opt) && !d->sbx_opt)
			d->sbx_opt = (char)opt;
		ret = ptod_guard_option(d, opt, optarg);
		if (ret == -EINVAL) {
			fprintf(stderr, "ptod: bad -%c '%s'\n", opt, optarg);
			usage();
			return 2;
		}
		if (ret && ret != -ENOENT)
			return 2;	/* said by the option's own message */
		if (!ret)
			continue;
		switch (opt) {
		case 'd':
			d->dev_path = optarg;
			d->ops = strcmp(optarg, PTO_DEVICE_USER) ?
				 &ptod_kdev_ops : &ptod_udev_ops;
			break;
		case 's': d->sock_path = optarg; break;
		case 'a': d->aicore_path = optarg; break;
		case 'b':
			d->sandbox_path = optarg;
			break;
		case 'K':
			if (ptod_sbx_parse_mode(d, optarg)) {
				fprintf(stderr, "ptod: bad -K '%s'\n", optarg);
				usage();
				return 2;
			}
			break;
		case 'w':
		case 'H':
		case 'S':
			if (default_option(d, opt, optarg)) {
				usage();
				return 2;
			}
			break;
		case 'x':
			ret = ptod_rule_add(&d->ctx_rules, 'x', optarg,
					    PTO_HWS_NR_CTX - 1, "a context");
			if (ret == -EINVAL) {
				fprintf(stderr, "ptod: bad -x '%s'\n", optarg);
				usage();
			}
			if (ret)
				return 2;
			break;
		case 'R': d->rec_path = optarg; break;
		case 'v': d->verbose = true; g_log_level = PTOD_LOG_DEBUG; break;
		default: usage(); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptod: unexpected argument '%s'\n", argv[optind]);
		usage();
		return 2;
	}
	if (ptod_sbx_settle_mode(d))
		return 2;
	if (parse_quiet_sleep(d) || parse_hws_check(d))
		return 2;
	if (!executable(d->aicore_path, "-a"))
		return 2;
	return ptod_guard_setup(d) ? 2 : 0;
}

/*
 * The descriptors one connection may hold in ptod (runtime.rst,
 * "Limits"): its socket, the client's device file, the runner's eventfd
 * and the doorbell pipe's two ends; on pto.ko a sandbox's mailbox and the
 * pipe of its standard error, on the user-mode device the file the
 * connection opened (DEV_OPEN). A reply queued with descriptors holds
 * copies of them until the client takes it.
 */
static unsigned int conn_fds(const struct ptod *d)
{
	if (d->ops == &ptod_udev_ops)
		return 6;
	return d->sbx_mode == PTOD_SBX_NONE ? 5 : 7;
}

/*
 * Every connection costs descriptors (conn_fds()): the soft limit on them
 * goes up to the hard one (systemd's default soft limit is 1024, a few
 * hundred connections), and if -C connections may need more than that,
 * a warning says so. pto-aicore and the sandboxes inherit the limit.
 */
static void nofile_setup(struct ptod *d)
{
	unsigned long long need, fit;
	struct rlimit rl;
	rlim_t old;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		ptod_log(PTOD_LOG_WARN, "RLIMIT_NOFILE: %m");
		return;
	}
	old = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			ptod_log(PTOD_LOG_WARN,
				 "cannot raise RLIMIT_NOFILE from %llu to %llu: %m",
				 (unsigned long long)old,
				 (unsigned long long)rl.rlim_max);
			rl.rlim_cur = old;
		}
	}
	fit = rl.rlim_cur > PTOD_FDS_OWN ?
	      (rl.rlim_cur - PTOD_FDS_OWN) / conn_fds(d) : 0;
	if (rl.rlim_cur != old)
		ptod_log(PTOD_LOG_INFO,
			 "descriptors: RLIMIT_NOFILE %llu (raised from %llu), for about %llu connections of up to %u each",
			 (unsigned long long)rl.rlim_cur,
			 (unsigned long long)old, fit, conn_fds(d));
	else
		ptod_log(PTOD_LOG_INFO,
			 "descriptors: RLIMIT_NOFILE %llu, for about %llu connections of up to %u each",
			 (unsigned long long)rl.rlim_cur, fit, conn_fds(d));
	need = PTOD_FDS_OWN + (unsigned long long)d->max_conn * conn_fds(d);
	if (d->max_conn && need > rl.rlim_cur)
		ptod_log(PTOD_LOG_WARN,
			 "-C %u connections may need %llu descriptors, more than RLIMIT_NOFILE's %llu: beyond about %llu, new connections wait for descriptors (raise the limit, LimitNOFILE= in ptod.service, or lower -C)",
			 d->max_conn, need, (unsigned long long)rl.rlim_cur,
			 fit);
}

static const int ptod_sigs[PTOD_NR_SIGS] = { SIGTERM, SIGINT, SIGCHLD };

/*
 * The event loop's own events: signals (handled by the loop only; every
 * thread blocks them), the executor timer and the runners' finish
 * eventfd. 0 or -errno.
 */
static int loop_setup(struct ptod *d)
{
	sigset_t set;
	int i;

	sigemptyset(&set);
	for (i = 0; i < PTOD_NR_SIGS; i++)
		sigaddset(&set, ptod_sigs[i]);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* runner threads queue replies (ptod_send() arms a write watch) */
	if (evthread_use_pthreads())
		return -ENOMEM;
	d->base = event_base_new();
	if (!d->base)
		return -ENOMEM;
	for (i = 0; i < PTOD_NR_SIGS; i++) {
		d->ev_sig[i] = watch(d, ptod_sigs[i], EV_SIGNAL | EV_PERSIST,
				     on_signal, d, "a signal");
		if (!d->ev_sig[i])
			return -ENOMEM;
	}
	/* libevent's signal handling needs the signals deliverable */
	sigdelset(&set, SIGPIPE);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	d->ev_timer = evtimer_new(d->base, on_timer, d);
	if (!d->ev_timer || ptod_drain_setup(d))
		return -ENOMEM;
	d->fin_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->fin_efd < 0) {
		ptod_log(PTOD_LOG_ERR, "eventfd: %m");
		return -errno;
	}
	d->ev_fin = watch(d, d->fin_efd, EV_READ | EV_PERSIST, on_fin, d,
			  "the runners' eventfd");
	if (!d->ev_fin)
		return -ENOMEM;
	return ptod_trace_setup(d);
}

static void loop_teardown(struct ptod *d)
{
	int i;

	for (i = 0; i < PTOD_NR_SIGS; i++)
		if (d->ev_sig[i])
			event_free(d->ev_sig[i]);
	if (d->ev_timer)
		event_free(d->ev_timer);
	if (d->ev_pause)
		event_free(d->ev_pause);
	ptod_drain_teardown(d);
	if (d->ev_fin)
		event_free(d->ev_fin);
	if (d->ev_ready)
		event_free(d->ev_ready);
	ptod_trace_fini(d);
	if (d->base)
		event_base_free(d->base);
	if (d->fin_efd >= 0)
		close(d->fin_efd);
}

int main(int argc, char **argv)
{
	struct ptod *d = &g_d;
	int ret = 1;

	d->listen_fd = -1;
	d->exec_ready_fd = -1;
	d->sbx_ctl = -1;
	d->fin_efd = -1;
	d->trace_efd = -1;
	d->dev_fd = -1;
	d->exec_fds[0] = d->exec_fds[1] = -1;
	if (parse_args(d, argc, argv))
		return 2;
	setvbuf(stderr, NULL, _IOLBF, 0);
	nofile_setup(d);
	d->start_ns = pto_mono_ns();
	if (d->rec_path) {
		d->rec_file = fopen(d->rec_path, "ae");
		if (!d->rec_file) {
			ptod_log(PTOD_LOG_ERR, "-R %s: %m", d->rec_path);
			return 1;
		}
	}
	pthread_mutex_init(&d->dev_lock, NULL);
	pthread_cond_init(&d->dev_cond, NULL);
	pthread_mutex_init(&d->fin_lock, NULL);
	pthread_mutex_init(&d->graphs_lock, NULL);
	pthread_mutex_init(&d->trace_lock, NULL);
	pthread_mutex_init(&d->clients_log_lock, NULL);

	d->sbx_cg = -1;
	if (open_device(d) || ptod_gm_quota_setup(d))
		goto out;
	ptod_sbx_cg_setup(d);
	ptod_closer_start(d);
	if (engine_start(d) || loop_setup(d) ||
	    (d->ops->events_start && d->ops->events_start(d)) ||
	    spawn_executor(d) || listen_socket(d))
		goto out;
	ptod_log(PTOD_LOG_INFO, "listening on %s", d->sock_path);
	sd_notify_ready();

	event_base_dispatch(d->base);
	ret = 0;
out:
	stop_executor(d);
	pto2_engine_destroy(d->engine);
	if (d->ops->events_stop)
		d->ops->events_stop(d);
	loop_teardown(d);
	ptod_closer_stop(d);
	ptod_sbx_cg_close(d);
	d->ops->close(d);
	free(d->uid_runs);
	free(d->sbx_starts);
	if (d->rec_file && fclose(d->rec_file))
		ptod_log(PTOD_LOG_ERR, "-R %s: %m", d->rec_path);
	conn_log_dropped(d->conn_rate.dropped);
	clients_log_dropped(d->clients_log_rate.dropped);
	ptod_log(PTOD_LOG_INFO, "exit");
	return ret;
}
