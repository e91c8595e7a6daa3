// SPDX-License-Identifier: GPL-2.0
/*
 * pto_lifecycle: everything a file owns dies with it, including when its
 * process is SIGKILLed; several processes and threads use the device at
 * once without seeing each other's memory; claims race cleanly.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

#include <pthread.h>

FIXTURE(life) {
	int fd;			/* no role: GET_INFO, sysfs */
	struct pto_info info;
	int ready[2];		/* child -> parent */
};

FIXTURE_SETUP(life)
{
	PTO_OPEN_OR_SKIP(self->fd);
	ASSERT_EQ(0, pto_get_info(self->fd, &self->info));
	ASSERT_EQ(self->info.gm_size, self->info.gm_free)
		TH_LOG("GM not all free at start: a previous test leaked");
	ASSERT_EQ(0, pto_reset_cores(self->info.nr_cores));
	ASSERT_EQ(0, pipe2(self->ready, O_CLOEXEC));
}

FIXTURE_TEARDOWN(life)
{
}

static __u64 gm_free(int fd)
{
	struct pto_info i;

	return pto_get_info(fd, &i) ? ~0ULL : i.gm_free;
}

/* Child side: report 'r' (ready) or 'f' (failed), then sleep forever. */
static void child_ready(int fd, bool ok)
{
	char c = ok ? 'r' : 'f';

	if (write(fd, &c, 1) != 1)
		_exit(3);
	if (!ok)
		_exit(1);
}

static int kill_and_reap(pid_t pid)
{
	int st;

	if (kill(pid, SIGKILL))
		return -errno;
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : -ECHILD;
}

static void client_child(int ready)
{
	struct pto_gm_alloc a[4];
	int fd = pto_open_role(PTO_ROLE_CLIENT), err, i;
	void *p[2];

	if (fd < 0)
		child_ready(ready, false);
	for (i = 0; i < 4; i++)
		if (pto_gm_alloc(fd, (i + 1) * PTO_PAGE, 0, &a[i]))
			child_ready(ready, false);
	for (i = 0; i < 2; i++) {
		p[i] = pto_mmap(fd, (i + 1) * PTO_PAGE, a[i].mmap_offset,
				PROT_READ | PROT_WRITE, MAP_SHARED, &err);
		if (!p[i])
			child_ready(ready, false);
		pto_fill(p[i], (i + 1) * PTO_PAGE, i);
	}
	/* One freed but still mapped, for good measure. */
	if (pto_gm_free(fd, a[0].handle))
		child_ready(ready, false);
	child_ready(ready, true);
	for (;;)
		pause();
}

TEST_F(life, killed_client_releases_gm)
{
	__u64 v;
	pid_t pid;
	char c;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		client_child(self->ready[1]);
	ASSERT_EQ(0, pto_pipe_wait(self->ready[0], &c));
	ASSERT_EQ('r', c);
	EXPECT_EQ(self->info.gm_size - 10 * PTO_PAGE, gm_free(self->fd));
	if (!pto_sysfs_kv("counters", "gm_buffers", &v))
		EXPECT_EQ(4ULL, v);
	ASSERT_EQ(0, kill_and_reap(pid));
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
	if (pto_sysfs_kv("counters", "gm_buffers", &v))
		SKIP(return, "no gm_buffers in %s/counters", pto_sysfs_dir());
	EXPECT_EQ(0ULL, v);
}

/* The same without a signal: exit() with everything still open. */
TEST_F(life, exit_without_close_releases_gm)
{
	struct pto_gm_alloc a;
	int st, err;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = pto_open_role(PTO_ROLE_CLIENT);

		if (fd < 0 || pto_gm_alloc(fd, 8 * PTO_PAGE, 0, &a) ||
		    !pto_mmap(fd, 8 * PTO_PAGE, a.mmap_offset, PROT_READ,
			      MAP_SHARED, &err))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
}

static void executor_child(int ready, unsigned int ncores, bool park)
{
	int fd = pto_open_role(PTO_ROLE_EXECUTOR);
	void *regs;

	if (fd < 0 || pto_cores_range(fd, PTO_IOC_CORE_ATTACH, 0, ncores))
		child_ready(ready, false);
	regs = pto_map_regs(fd);
	if (!regs)
		child_ready(ready, false);
	child_ready(ready, true);
	if (park) {
		volatile struct pto_core_regs *c = pto_core(regs, 0);

		PTO_STORE(c->parked, 1);
		PTO_FENCE();
		pto_core_wait(fd, 0, PTO_LOAD(c->data_main_base), 0, NULL);
	}
	for (;;)
		pause();
}

static void killed_executor(struct __test_metadata *_metadata,
			    FIXTURE_DATA(life) *self, bool park)
{
	volatile struct pto_regs_info *ri;
	int aicpu = pto_open_role(PTO_ROLE_AICPU), e2;
	__u32 irq0, parks;
	void *regs;
	pid_t pid;
	char c;
	int i;

	ASSERT_LE(0, aicpu);
	regs = pto_map_regs(aicpu);
	ASSERT_NE(NULL, regs);
	ri = pto_regs_info(regs);
	parks = pto_core(regs, 0)->park_count;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		executor_child(self->ready[1], 3, park);
	ASSERT_EQ(0, pto_pipe_wait(self->ready[0], &c));
	ASSERT_EQ('r', c);
	for (i = 0; i < 3; i++)
		EXPECT_EQ((__u32)PTO_CORE_ONLINE, pto_core(regs, i)->state);
	if (park) {
		__s64 end = pto_deadline_ms(5000);

		while (PTO_LOAD(pto_core(regs, 0)->park_count) == parks &&
		       pto_now_ns() < end)
			usleep(1000);
		EXPECT_NE(parks, pto_core(regs, 0)->park_count);
	}
	irq0 = ri->irq_count;
	ASSERT_EQ(0, kill_and_reap(pid));
	for (i = 0; i < 3; i++)
		EXPECT_EQ((__u32)PTO_CORE_DEAD, pto_core(regs, i)->state);
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, pto_core(regs, 3)->state);
	EXPECT_LT(irq0, ri->irq_count);
	if (park)
		EXPECT_EQ(0U, pto_core(regs, 0)->parked);

	/* A new executor brings them back. */
	e2 = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, e2);
	ASSERT_EQ(0, pto_cores_range(e2, PTO_IOC_CORE_ATTACH, 0, 3));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ((__u32)PTO_CORE_ONLINE, pto_core(regs, i)->state);
		EXPECT_EQ(PTO_COND_IDLE, pto_core(regs, i)->cond);
	}
	close(e2);
	munmap(regs, PTO_REGS_SIZE);
	close(aicpu);
}

TEST_F(life, killed_executor_cores_dead)
{
	killed_executor(_metadata, self, false);
}

TEST_F(life, killed_parked_executor_cores_dead)
{
	killed_executor(_metadata, self, true);
}

/* The AICPU sleeping in IRQ_WAIT is killed: the role is free again. */
TEST_F(life, killed_aicpu_releases_role)
{
	int ex = pto_open_role(PTO_ROLE_EXECUTOR), fd;
	volatile struct pto_regs_info *ri;
	void *regs;
	pid_t pid;
	char c;

	ASSERT_LE(0, ex);
	regs = pto_map_regs(ex);
	ASSERT_NE(NULL, regs);
	ri = pto_regs_info(regs);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int a = pto_open_role(PTO_ROLE_AICPU);
		void *g;

		g = a < 0 ? NULL : pto_map_gm(a, self->info.gm_size);
		child_ready(self->ready[1], a >= 0 && g);
		pto_irq_wait(a, PTO_LOAD(pto_regs_info(regs)->irq_count), 0,
			     NULL);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, pto_pipe_wait(self->ready[0], &c));
	ASSERT_EQ('r', c);
	EXPECT_EQ(1U, ri->aicpu_attached);
	EXPECT_EQ(-EBUSY, pto_open_role(PTO_ROLE_AICPU));
	pto_sleep_ms(50);
	ASSERT_EQ(0, kill_and_reap(pid));
	EXPECT_EQ(0U, ri->aicpu_attached);
	fd = pto_open_role(PTO_ROLE_AICPU);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		close(fd);
}

/* ---------------------------------------------------------------------- */
/* Concurrency */

/*
 * One worker: keep up to 4 live buffers, each filled with its own pattern;
 * every round verify all live ones (someone else writing into them would
 * show), then replace one. Returns 0 or a small error code.
 */
static int gm_worker(int fd, __u32 seed, int rounds)
{
	struct { struct pto_gm_alloc a; __u8 *p; size_t len; __u32 s; }
		live[4] = { 0 };
	struct pto_gm_lookup l;
	int i, k, err, ret = 0;

	for (i = 0; i < rounds && !ret; i++) {
		k = i % 4;
		for (int j = 0; j < 4; j++)
			if (live[j].p && pto_check(live[j].p, live[j].len,
						   live[j].s))
				return 10;
		if (live[k].p) {
			munmap(live[k].p, live[k].len);
			if (pto_gm_free(fd, live[k].a.handle))
				return 11;
			live[k].p = NULL;
		}
		live[k].len = ((seed + i) % 8 + 1) * PTO_PAGE;
		live[k].s = seed * 7919 + i;
		err = pto_gm_alloc(fd, live[k].len, 0, &live[k].a);
		if (err == -ENOMEM)
			continue;	/* GM full: fine, try again later */
		if (err)
			return 12;
		if (pto_gm_lookup(fd, live[k].a.dev_addr, live[k].len, &l) ||
		    l.handle != live[k].a.handle)
			return 13;
		live[k].p = pto_mmap(fd, live[k].len, live[k].a.mmap_offset,
				     PROT_READ | PROT_WRITE, MAP_SHARED, &err);
		if (!live[k].p)
			return 14;
		pto_fill(live[k].p, live[k].len, live[k].s);
	}
	for (k = 0; k < 4; k++) {
		if (!live[k].p)
			continue;
		if (pto_check(live[k].p, live[k].len, live[k].s))
			ret = 15;
		munmap(live[k].p, live[k].len);
		if (pto_gm_free(fd, live[k].a.handle))
			ret = 16;
	}
	return ret;
}

TEST_F(life, concurrent_client_processes)
{
	enum { NPROC = 4 };
	pid_t pid[NPROC];
	int i, st;

	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int fd = pto_open_role(PTO_ROLE_CLIENT);

			_exit(fd < 0 ? 1 : gm_worker(fd, 1000 + i, 150));
		}
	}
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("worker %d", i);
	}
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
}

struct gm_thread {
	int fd;
	__u32 seed;
	int ret;
};

static void *gm_thread_main(void *arg)
{
	struct gm_thread *t = arg;

	t->ret = gm_worker(t->fd, t->seed, 150);
	return NULL;
}

/* Threads sharing one client file. */
TEST_F(life, concurrent_threads_one_file)
{
	enum { NTHR = 4 };
	struct gm_thread t[NTHR];
	pthread_t th[NTHR];
	int fd = pto_open_role(PTO_ROLE_CLIENT), i;

	ASSERT_LE(0, fd);
	for (i = 0; i < NTHR; i++) {
		t[i].fd = fd;
		t[i].seed = 77 + i;
		t[i].ret = -1;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, gm_thread_main,
					    &t[i]));
	}
	for (i = 0; i < NTHR; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, t[i].ret) TH_LOG("thread %d", i);
	}
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
	close(fd);
}

/* Clients see their data while the AICPU sees every client's data. */
TEST_F(life, concurrent_clients_aicpu_view)
{
	enum { NPROC = 3 };
	int aicpu = pto_open_role(PTO_ROLE_AICPU), i, st, err;
	int res[2];
	__u8 *g;
	pid_t pid[NPROC];

	ASSERT_LE(0, aicpu);
	g = pto_map_gm(aicpu, self->info.gm_size);
	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int fd = pto_open_role(PTO_ROLE_CLIENT);
			struct pto_gm_alloc a;
			__u8 *p;

			if (fd < 0 || pto_gm_alloc(fd, 16 * PTO_PAGE, 0, &a))
				child_ready(self->ready[1], false);
			p = pto_mmap(fd, 16 * PTO_PAGE, a.mmap_offset,
				     PROT_READ | PROT_WRITE, MAP_SHARED, &err);
			if (!p)
				child_ready(self->ready[1], false);
			pto_fill(p, 16 * PTO_PAGE, 500 + i);
			if (write(res[1], &a.dev_addr, 8) != 8)
				_exit(2);
			child_ready(self->ready[1], true);
			for (;;)
				pause();
		}
	}
	for (i = 0; i < NPROC; i++) {
		__u64 addr;
		char c;

		ASSERT_EQ(0, pto_pipe_wait(self->ready[0], &c));
		ASSERT_EQ('r', c);
		ASSERT_EQ(8, read(res[0], &addr, 8));
		/* Which child? Try each seed. */
		{
			int j, found = 0;

			for (j = 0; j < NPROC; j++)
				if (!pto_check(g + addr - self->info.gm_dev_base,
					       16 * PTO_PAGE, 500 + j))
					found++;
			EXPECT_EQ(1, found);
		}
	}
	for (i = 0; i < NPROC; i++)
		EXPECT_EQ(0, kill_and_reap(pid[i]));
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
	(void)st;
	close(res[0]);
	close(res[1]);
	munmap(g, self->info.gm_size);
	close(aicpu);
}

/*
 * N processes race for the same cores: exactly one wins each round. Every
 * contender keeps its file (and the cores, if it won) until all have
 * tried, so a loser cannot win after the winner let go.
 */
TEST_F(life, attach_race_one_winner)
{
	enum { NPROC = 4, ROUNDS = 10 };
	int round;

	for (round = 0; round < ROUNDS; round++) {
		int go[2], res[2], done[2], wins = 0, busy = 0, i, st;
		pid_t pid[NPROC];

		ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(done, O_CLOEXEC));
		for (i = 0; i < NPROC; i++) {
			pid[i] = fork();
			ASSERT_LE(0, pid[i]);
			if (pid[i] == 0) {
				int fd = pto_open_role(PTO_ROLE_EXECUTOR), r;
				char c;

				close(go[1]);
				close(done[1]);
				if (read(go[0], &c, 1) != 0) {
					c = 'g';
				} else if (fd < 0) {
					c = 'o';
				} else {
					r = pto_cores_range(fd,
							    PTO_IOC_CORE_ATTACH,
							    round % 3, 3);
					c = r == 0 ? 'w' :
					    r == -EBUSY ? 'b' : 'e';
				}
				/* Every child reports, whatever happened. */
				if (write(res[1], &c, 1) != 1)
					_exit(102);
				/* Hold on until every contender has tried. */
				if (read(done[0], &c, 1) != 0)
					_exit(103);
				_exit(0);
			}
		}
		close(go[0]);
		close(go[1]);	/* EOF = go */
		close(res[1]);
		close(done[0]);
		for (i = 0; i < NPROC; i++) {
			char c;

			ASSERT_EQ(1, read(res[0], &c, 1))
				TH_LOG("round %d: a contender died", round);
			if (c == 'w')
				wins++;
			else if (c == 'b')
				busy++;
			else
				TH_LOG("round %d: contender result '%c'",
				       round, c);
		}
		close(done[1]);	/* EOF = everyone tried, let go */
		close(res[0]);
		for (i = 0; i < NPROC; i++) {
			ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
			ASSERT_TRUE(WIFEXITED(st));
			EXPECT_EQ(0, WEXITSTATUS(st));
		}
		EXPECT_EQ(1, wins) TH_LOG("round %d", round);
		EXPECT_EQ(NPROC, wins + busy);
	}
}

/* Same for the AICPU role, with every claimant holding on to its file. */
TEST_F(life, aicpu_claim_race_one_winner)
{
	enum { NPROC = 6 };
	int go[2], res[2], wins = 0, i, st;
	pid_t pid[NPROC];

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int fd = pto_open(), r;
			char c;

			close(go[1]);
			if (fd < 0)
				_exit(100);
			if (read(go[0], &c, 1) != 0)
				_exit(101);
			r = pto_set_role(fd, PTO_ROLE_AICPU);
			c = r == 0 ? 'w' : r == -EBUSY ? 'b' : 'e';
			if (write(res[1], &c, 1) != 1)
				_exit(102);
			for (;;)
				pause();
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < NPROC; i++) {
		char c;

		ASSERT_EQ(1, read(res[0], &c, 1));
		EXPECT_NE('e', c);
		wins += c == 'w';
	}
	EXPECT_EQ(1, wins);
	for (i = 0; i < NPROC; i++) {
		EXPECT_EQ(0, kill(pid[i], SIGKILL));
		EXPECT_EQ(pid[i], waitpid(pid[i], &st, 0));
	}
	close(res[0]);
	close(res[1]);
}

TEST_F(life, open_close_many)
{
	static const __u32 roles[] = { PTO_ROLE_NONE, PTO_ROLE_CLIENT,
				       PTO_ROLE_AICPU, PTO_ROLE_EXECUTOR };
	struct pto_gm_alloc a;
	int i, fd;

	for (i = 0; i < 200; i++) {
		__u32 role = roles[i % 4];

		fd = role ? pto_open_role(role) : pto_open();
		ASSERT_LE(0, fd) TH_LOG("round %d role %u", i, role);
		if (role == PTO_ROLE_CLIENT || role == PTO_ROLE_AICPU)
			ASSERT_EQ(0, pto_gm_alloc(fd, PTO_PAGE, 0, &a));
		if (role == PTO_ROLE_EXECUTOR) {
			ASSERT_EQ(0, pto_attach(fd, i % 3));
			if (i & 4)
				ASSERT_EQ(0, pto_detach(fd, i % 3));
		}
		close(fd);
	}
	EXPECT_EQ(self->info.gm_size, gm_free(self->fd));
	/* Cores closed attached are DEAD, the others OFFLINE; none ONLINE. */
	fd = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, fd);
	{
		void *regs = pto_map_regs(fd);

		ASSERT_NE(NULL, regs);
		for (i = 0; i < 3; i++)
			EXPECT_NE((__u32)PTO_CORE_ONLINE,
				  pto_core(regs, i)->state);
	}
	close(fd);
}

TEST_HARNESS_MAIN
