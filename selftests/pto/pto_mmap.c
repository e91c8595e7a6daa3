// SPDX-License-Identifier: GPL-2.0
/*
 * pto_mmap: who may map what, and that every view of GM sees the same
 * bytes.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/io_uring.h>

#define RW	(PROT_READ | PROT_WRITE)

FIXTURE(map) {
	int a, b, aicpu, exec, none;
	struct pto_info info;
	struct pto_gm_alloc buf;	/* 2 pages of client A */
};

FIXTURE_SETUP(map)
{
	self->b = self->aicpu = self->exec = self->none = -1;
	PTO_OPEN_OR_SKIP(self->a);
	ASSERT_EQ(0, pto_set_role(self->a, PTO_ROLE_CLIENT));
	self->b = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, self->b);
	self->aicpu = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, self->aicpu);
	self->exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, self->exec);
	self->none = pto_open();
	ASSERT_LE(0, self->none);
	ASSERT_EQ(0, pto_get_info(self->a, &self->info));
	ASSERT_EQ(0, pto_gm_alloc(self->a, 2 * PTO_PAGE, 0, &self->buf));
}

FIXTURE_TEARDOWN(map)
{
	/* Process exit closes and unmaps everything. */
}

static __u64 gm_off(FIXTURE_DATA(map) *self, __u64 dev_addr)
{
	return PTO_MMAP_GM + (dev_addr - self->info.gm_dev_base);
}

static __u64 gm_free(int fd)
{
	struct pto_info i;

	return pto_get_info(fd, &i) ? ~0ULL : i.gm_free;
}

TEST_F(map, client_own_buffer)
{
	int err;
	__u8 *p = pto_mmap(self->a, 2 * PTO_PAGE, self->buf.mmap_offset, RW,
			   MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	p[0] = 0x5a;
	p[2 * PTO_PAGE - 1] = 0xa5;
	EXPECT_EQ(0x5a, p[0]);
	EXPECT_EQ(0xa5, p[2 * PTO_PAGE - 1]);
	EXPECT_EQ(0, munmap(p, 2 * PTO_PAGE));
}

TEST_F(map, client_own_buffer_read_only)
{
	int err;
	__u8 *p = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset,
			   PROT_READ, MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	EXPECT_EQ(0, p[100]);	/* fresh buffers read as zero */
	munmap(p, PTO_PAGE);
}

/* New buffers never show a previous owner's data. */
TEST_F(map, fresh_buffer_is_zeroed)
{
	struct pto_gm_alloc x;
	int err;
	__u8 *p;
	size_t i;

	ASSERT_EQ(0, pto_gm_alloc(self->b, 4 * PTO_PAGE, 0, &x));
	p = pto_mmap(self->b, 4 * PTO_PAGE, x.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, p);
	memset(p, 0xee, 4 * PTO_PAGE);
	munmap(p, 4 * PTO_PAGE);
	ASSERT_EQ(0, pto_gm_free(self->b, x.handle));
	ASSERT_EQ(0, pto_gm_alloc(self->b, 4 * PTO_PAGE, 0, &x));
	p = pto_mmap(self->b, 4 * PTO_PAGE, x.mmap_offset, PROT_READ,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, p);
	for (i = 0; i < 4 * PTO_PAGE; i++)
		if (p[i])
			break;
	EXPECT_EQ(4 * PTO_PAGE, i) TH_LOG("byte %zu is 0x%x", i, p[i]);
	munmap(p, 4 * PTO_PAGE);
}

TEST_F(map, client_second_page_only)
{
	int err;
	__u8 *p = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset + PTO_PAGE,
			   RW, MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	munmap(p, PTO_PAGE);
}

/* A length that is not a page multiple is rounded up by mmap(). */
TEST_F(map, client_len_not_page_multiple)
{
	int err;
	__u8 *p = pto_mmap(self->a, 100, self->buf.mmap_offset, RW,
			   MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	p[PTO_PAGE - 1] = 1;
	munmap(p, 100);
}

TEST_F(map, offset_not_page_aligned)
{
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->a, PTO_PAGE,
					self->buf.mmap_offset + 100, RW,
					MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE, 8, RW,
					MAP_SHARED));
}

/* Between the register file and GM nothing is mapped. */
TEST_F(map, offset_between_regs_and_gm)
{
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE,
					PTO_REGS_SIZE, RW, MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE,
					PTO_MMAP_GM / 2, RW, MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE,
					PTO_MMAP_GM - PTO_PAGE, RW,
					MAP_SHARED));
}

TEST_F(map, regs_too_long)
{
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_REGS_SIZE + PTO_PAGE,
					PTO_MMAP_REGS, RW, MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, 2 * PTO_PAGE,
					PTO_REGS_SIZE - PTO_PAGE, RW,
					MAP_SHARED));
}

TEST_F(map, regs_partial)
{
	int err;
	void *p = pto_mmap(self->aicpu, PTO_PAGE, PTO_REGS_CORE_OFFSET, RW,
			   MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	munmap(p, PTO_PAGE);
}

TEST_F(map, gm_past_end)
{
	__u64 end = PTO_MMAP_GM + self->info.gm_size;

	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE, end, RW,
					MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, 2 * PTO_PAGE,
					end - PTO_PAGE, RW, MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu,
					self->info.gm_size + PTO_PAGE,
					PTO_MMAP_GM, RW, MAP_SHARED));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->exec, PTO_PAGE, end, RW,
					MAP_SHARED));
}

TEST_F(map, gm_last_page)
{
	int err;
	void *p = pto_mmap(self->aicpu, PTO_PAGE,
			   PTO_MMAP_GM + self->info.gm_size - PTO_PAGE, RW,
			   MAP_SHARED, &err);

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	munmap(p, PTO_PAGE);
}

TEST_F(map, private_refused)
{
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->a, PTO_PAGE,
					self->buf.mmap_offset, RW,
					MAP_PRIVATE));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_REGS_SIZE,
					PTO_MMAP_REGS, PROT_READ,
					MAP_PRIVATE));
	EXPECT_EQ(-EINVAL, pto_mmap_err(self->aicpu, PTO_PAGE, PTO_MMAP_GM,
					PROT_READ, MAP_PRIVATE));
}

TEST_F(map, exec_refused)
{
	EXPECT_EQ(-EPERM, pto_mmap_err(self->a, PTO_PAGE,
				       self->buf.mmap_offset,
				       PROT_READ | PROT_EXEC, MAP_SHARED));
	EXPECT_EQ(-EPERM, pto_mmap_err(self->aicpu, PTO_PAGE, PTO_MMAP_GM,
				       PROT_READ | PROT_EXEC, MAP_SHARED));
	EXPECT_EQ(-EPERM, pto_mmap_err(self->exec, PTO_PAGE, PTO_MMAP_REGS,
				       PROT_READ | PROT_EXEC, MAP_SHARED));
}

/* Not executable later either: mprotect cannot add PROT_EXEC. */
TEST_F(map, mprotect_exec_refused)
{
	int err;
	void *p = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset, RW,
			   MAP_SHARED, &err);

	ASSERT_NE(NULL, p);
	EXPECT_EQ(-1, mprotect(p, PTO_PAGE, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	munmap(p, PTO_PAGE);
}

/* Mappings cannot be grown with mremap (VM_DONTEXPAND). */
TEST_F(map, mremap_grow_refused)
{
	int err;
	void *q, *p = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset, RW,
			       MAP_SHARED, &err);

	ASSERT_NE(NULL, p);
	q = mremap(p, PTO_PAGE, 2 * PTO_PAGE, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	if (q != MAP_FAILED)
		p = q;
	munmap(p, q != MAP_FAILED ? 2 * PTO_PAGE : PTO_PAGE);
}

TEST_F(map, client_regs_refused)
{
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, PTO_REGS_SIZE, PTO_MMAP_REGS,
					PROT_READ, MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, PTO_PAGE, PTO_MMAP_REGS,
					PROT_READ, MAP_SHARED));
}

TEST_F(map, no_role_refused)
{
	EXPECT_EQ(-EACCES, pto_mmap_err(self->none, PTO_REGS_SIZE,
					PTO_MMAP_REGS, PROT_READ, MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->none, PTO_PAGE,
					self->buf.mmap_offset, PROT_READ,
					MAP_SHARED));
}

TEST_F(map, client_whole_gm_refused)
{
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, self->info.gm_size,
					PTO_MMAP_GM, RW, MAP_SHARED));
}

TEST_F(map, client_other_clients_buffer_refused)
{
	/* B knows A's device address (e.g. it was told) and computes the
	 * mmap offset from it.
	 */
	__u64 off = gm_off(self, self->buf.dev_addr);

	EXPECT_EQ(self->buf.mmap_offset, off);
	EXPECT_EQ(-EACCES, pto_mmap_err(self->b, PTO_PAGE, off, PROT_READ,
					MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->b, PTO_PAGE, off + PTO_PAGE,
					RW, MAP_SHARED));
}

TEST_F(map, client_past_own_buffer_refused)
{
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, 3 * PTO_PAGE,
					self->buf.mmap_offset, RW,
					MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, 2 * PTO_PAGE,
					self->buf.mmap_offset + PTO_PAGE, RW,
					MAP_SHARED));
}

TEST_F(map, client_straddles_two_own_buffers_refused)
{
	struct pto_gm_alloc y;
	__u64 lo, hi;

	ASSERT_EQ(0, pto_gm_alloc(self->a, 2 * PTO_PAGE, 0, &y));
	lo = self->buf.dev_addr < y.dev_addr ? self->buf.dev_addr : y.dev_addr;
	hi = self->buf.dev_addr < y.dev_addr ? y.dev_addr : self->buf.dev_addr;
	if (hi != lo + 2 * PTO_PAGE)
		TH_LOG("buffers not adjacent");
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, 2 * PTO_PAGE,
					gm_off(self, lo + PTO_PAGE), RW,
					MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, hi + 2 * PTO_PAGE - lo,
					gm_off(self, lo), RW, MAP_SHARED));
}

/* After free, not even the former owner can map it again. */
TEST_F(map, client_freed_buffer_refused)
{
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->a, PTO_PAGE,
					self->buf.mmap_offset, RW,
					MAP_SHARED));
}

TEST_F(map, aicpu_and_executor_map_all)
{
	int err;
	void *g, *r;

	g = pto_mmap(self->aicpu, self->info.gm_size, PTO_MMAP_GM, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, g) TH_LOG("aicpu gm: %s", strerror(-err));
	r = pto_mmap(self->aicpu, PTO_REGS_SIZE, PTO_MMAP_REGS, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, r) TH_LOG("aicpu regs: %s", strerror(-err));
	munmap(g, self->info.gm_size);
	munmap(r, PTO_REGS_SIZE);
	g = pto_mmap(self->exec, self->info.gm_size, PTO_MMAP_GM, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, g) TH_LOG("exec gm: %s", strerror(-err));
	r = pto_map_regs_exec(self->exec, &err);
	ASSERT_NE(NULL, r) TH_LOG("exec regs: %s", strerror(-err));
	munmap(g, self->info.gm_size);
	munmap(r, PTO_REGS_SIZE);
}

/*
 * An executor cannot write the info page or the HWS configuration (the
 * AICPU validated it): a writable mapping below PTO_REGS_EXEC_WRITE_OFFSET
 * is refused, and a read-only one cannot be made writable.
 */
TEST_F(map, executor_config_not_writable)
{
	int err;
	void *r;

	EXPECT_EQ(-EACCES, pto_mmap_err(self->exec, PTO_REGS_SIZE,
					PTO_MMAP_REGS, RW, MAP_SHARED));
	EXPECT_EQ(-EACCES, pto_mmap_err(self->exec, PTO_PAGE,
					PTO_MMAP_REGS + PTO_REGS_HWS_OFFSET,
					RW, MAP_SHARED));
	r = pto_mmap(self->exec, PTO_REGS_SIZE, PTO_MMAP_REGS, PROT_READ,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, r) TH_LOG("read-only: %s", strerror(-err));
	EXPECT_EQ(-1, mprotect(r, PTO_REGS_SIZE, RW));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect((char *)r + PTO_REGS_HWS_OFFSET, PTO_PAGE, RW));
	munmap(r, PTO_REGS_SIZE);
}

/*
 * From PTO_REGS_EXEC_WRITE_OFFSET on an executor writes (the doorbells,
 * its cores), and the AICPU sees what it wrote.
 */
TEST_F(map, executor_writes_status_and_cores)
{
	volatile struct pto_regs_hws *eh, *ah;
	int err;
	void *e, *a;

	e = pto_map_regs_exec(self->exec, &err);
	ASSERT_NE(NULL, e) TH_LOG("exec regs: %s", strerror(-err));
	a = pto_map_regs(self->aicpu);
	ASSERT_NE(NULL, a);
	eh = pto_regs_hws(e);
	ah = pto_regs_hws(a);
	PTO_STORE(eh->sip_launch_pending[0], 0x5aULL);
	EXPECT_EQ(0x5aULL, PTO_LOAD(ah->sip_launch_pending[0]));
	PTO_STORE(eh->sip_launch_pending[0], 0ULL);
	PTO_STORE(pto_core(e, 0)->ts_start, 1234ULL);
	EXPECT_EQ(1234ULL, PTO_LOAD(pto_core(a, 0)->ts_start));
	munmap(e, PTO_REGS_SIZE);
	munmap(a, PTO_REGS_SIZE);
}

/* Client -> AICPU and executor views, and back. */
TEST_F(map, data_visible_in_every_view)
{
	size_t len = 2 * PTO_PAGE;
	__u64 off = self->buf.dev_addr - self->info.gm_dev_base;
	__u8 *c, *g, *e;
	int err;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	g = pto_map_gm(self->aicpu, self->info.gm_size);
	ASSERT_NE(NULL, g);
	e = pto_map_gm(self->exec, self->info.gm_size);
	ASSERT_NE(NULL, e);

	pto_fill(c, len, 0x1234);
	EXPECT_EQ(0U, pto_check(g + off, len, 0x1234));
	EXPECT_EQ(0U, pto_check(e + off, len, 0x1234));

	pto_fill(g + off, len, 0xabcd);
	EXPECT_EQ(0U, pto_check(c, len, 0xabcd));
	EXPECT_EQ(0U, pto_check(e + off, len, 0xabcd));

	pto_fill(e + off, len, 0x7777);
	EXPECT_EQ(0U, pto_check(c, len, 0x7777));
	EXPECT_EQ(0U, pto_check(g + off, len, 0x7777));

	munmap(c, len);
	munmap(g, self->info.gm_size);
	munmap(e, self->info.gm_size);
}

/* A partial mapping at an offset inside the buffer sees the right bytes. */
TEST_F(map, partial_mapping_offset)
{
	__u64 off = self->buf.dev_addr - self->info.gm_dev_base;
	__u8 *c, *g;
	int err;

	g = pto_map_gm(self->aicpu, self->info.gm_size);
	ASSERT_NE(NULL, g);
	pto_fill(g + off, 2 * PTO_PAGE, 42);
	c = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset + PTO_PAGE,
		     PROT_READ, MAP_SHARED, &err);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, memcmp(c, g + off + PTO_PAGE, PTO_PAGE));
	munmap(c, PTO_PAGE);
	munmap(g, self->info.gm_size);
}

/* Freeing a mapped buffer: the mapping stays, the memory stays used. */
TEST_F(map, free_while_mapped)
{
	size_t len = 2 * PTO_PAGE;
	__u64 before = gm_free(self->a);
	__u8 *c;
	int err;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	pto_fill(c, len, 99);
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, self->buf.dev_addr, 1,
					 NULL));
	EXPECT_EQ(before, gm_free(self->a));
	EXPECT_EQ(0U, pto_check(c, len, 99));
	pto_fill(c, len, 100);
	EXPECT_EQ(0U, pto_check(c, len, 100));
	EXPECT_EQ(0, munmap(c, len));
	EXPECT_EQ(before + len, gm_free(self->a));
}

/* Memory still mapped after free is never handed out again. */
TEST_F(map, free_while_mapped_not_reused)
{
	size_t len = 2 * PTO_PAGE;
	__u64 lo = self->buf.dev_addr, hi = lo + len;
	struct pto_gm_alloc x[8];
	__u8 *c;
	int err, i;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	pto_fill(c, len, 5);
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, pto_gm_alloc(self->b, PTO_PAGE, 0, &x[i]));
		EXPECT_TRUE(x[i].dev_addr + PTO_PAGE <= lo ||
			    x[i].dev_addr >= hi)
			TH_LOG("0x%llx handed out while still mapped",
			       (unsigned long long)x[i].dev_addr);
	}
	EXPECT_EQ(0U, pto_check(c, len, 5));
	munmap(c, len);
}

/* Two mappings of one freed buffer: memory returns after the last. */
TEST_F(map, free_with_two_mappings)
{
	__u64 before = gm_free(self->a);
	void *p, *q;
	int err;

	p = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, p);
	q = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset + PTO_PAGE, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	munmap(p, PTO_PAGE);
	EXPECT_EQ(before, gm_free(self->a));
	munmap(q, PTO_PAGE);
	EXPECT_EQ(before + 2 * PTO_PAGE, gm_free(self->a));
}

/* Closing the file keeps mappings valid; GM returns after munmap. */
TEST_F(map, close_while_mapped)
{
	size_t len = 2 * PTO_PAGE;
	__u64 before = gm_free(self->b);
	__u8 *c;
	int err;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	pto_fill(c, len, 7);
	close(self->a);
	self->a = -1;
	EXPECT_EQ(0U, pto_check(c, len, 7));
	EXPECT_EQ(before, gm_free(self->b));
	munmap(c, len);
	EXPECT_EQ(before + len, gm_free(self->b));
}

/* A child's inherited mapping keeps a freed buffer's memory alive. */
TEST_F(map, fork_mapping_keeps_memory)
{
	__u64 before = gm_free(self->b);
	int p2c[2], st, err;
	__u8 *c;
	pid_t pid;
	char x;

	c = pto_mmap(self->a, 2 * PTO_PAGE, self->buf.mmap_offset, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, c);
	pto_fill(c, 2 * PTO_PAGE, 11);
	ASSERT_EQ(0, pipe(p2c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p2c[1]);
		/* Wait for the parent to free and unmap, then check. */
		if (read(p2c[0], &x, 1) != 1)
			_exit(2);
		_exit(pto_check(c, 2 * PTO_PAGE, 11) ? 1 : 0);
	}
	close(p2c[0]);
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	munmap(c, 2 * PTO_PAGE);
	EXPECT_EQ(before, gm_free(self->b));
	ASSERT_EQ(1, write(p2c[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(before + 2 * PTO_PAGE, gm_free(self->b));
	close(p2c[1]);
}

/* munmap of part of a mapping splits the VMA: each piece holds the
 * buffer, the memory returns exactly once, after the last piece.
 */
TEST_F(map, partial_munmap_splits_mapping)
{
	__u64 before = gm_free(self->b);
	__u8 *c;
	int err;

	c = pto_mmap(self->a, 2 * PTO_PAGE, self->buf.mmap_offset, RW,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, munmap(c, PTO_PAGE));
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	EXPECT_EQ(before, gm_free(self->b));
	c[PTO_PAGE] = 1;
	ASSERT_EQ(0, munmap(c + PTO_PAGE, PTO_PAGE));
	EXPECT_EQ(before + 2 * PTO_PAGE, gm_free(self->b));
}

/* mprotect to read-only and back works within the mapping's rights. */
TEST_F(map, mprotect_read_only)
{
	__u8 *c;
	int err;

	c = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, mprotect(c, PTO_PAGE, PROT_READ));
	EXPECT_EQ(0, mprotect(c, PTO_PAGE, RW));
	c[0] = 3;
	munmap(c, PTO_PAGE);
}

/* A mapping inherited across fork() is the same memory. */
TEST_F(map, fork_shares_mapping)
{
	__u8 *c;
	int err, st;
	pid_t pid;

	c = pto_mmap(self->a, PTO_PAGE, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	c[0] = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		c[1] = c[0] + 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(2, c[1]);
	munmap(c, PTO_PAGE);
}

/*
 * Nothing but the mapping itself may reference a page of the device: a
 * page that a pipe (vmsplice) or io_uring (fixed buffers) held through
 * get_user_pages() would outlive munmap() and GM_FREE, and let its holder
 * read and write whoever gets the range next.
 */

/* vmsplice() of [@p, @p + @len) into the pipe @pfd: bytes taken or -errno. */
static ssize_t splice_to_pipe(const void *p, size_t len, const int pfd[2])
{
	struct iovec iov = { (void *)p, len };
	ssize_t n = vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK);

	return n < 0 ? -errno : n;
}

/* A client's own buffer cannot be spliced into a pipe. */
TEST_F(map, client_gm_not_vmspliced)
{
	size_t len = 2 * PTO_PAGE;
	struct pto_gm_alloc x;
	__u8 *c, *o, got[64];
	int pfd[2], err;
	ssize_t n;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c) TH_LOG("mmap: %s", strerror(-err));
	pto_fill(c, len, 0x51);
	ASSERT_EQ(0, pipe(pfd));
	n = splice_to_pipe(c, len, pfd);
	EXPECT_EQ(-EFAULT, n);
	if (n <= 0)
		goto out;

	/*
	 * The pipe holds the pages: free the buffer and unmap it, let client
	 * B take the range and write it, and see what the pipe gives back.
	 */
	ASSERT_EQ(0, munmap(c, len));
	c = NULL;
	ASSERT_EQ(0, pto_gm_free(self->a, self->buf.handle));
	ASSERT_EQ(0, pto_gm_alloc(self->b, len, 0, &x));
	if (x.dev_addr != self->buf.dev_addr)
		TH_LOG("client B got 0x%llx, not the freed 0x%llx",
		       (unsigned long long)x.dev_addr,
		       (unsigned long long)self->buf.dev_addr);
	o = pto_mmap(self->b, len, x.mmap_offset, RW, MAP_SHARED, &err);
	ASSERT_NE(NULL, o);
	pto_fill(o, len, 0xb0b);
	ASSERT_EQ((ssize_t)sizeof(got), read(pfd[0], got, sizeof(got)));
	EXPECT_NE(0, memcmp(got, o, sizeof(got)))
		TH_LOG("the pipe reads client B's buffer");
	munmap(o, len);
out:
	if (c)
		munmap(c, len);
	close(pfd[0]);
	close(pfd[1]);
}

/* No mapping of the device, of any role, can be spliced into a pipe. */
TEST_F(map, no_mapping_vmspliced)
{
	struct {
		const char *what;
		int fd;
		__u64 off;
		size_t len;
		int prot;
	} m[] = {
		{ "client GM", self->a, self->buf.mmap_offset, PTO_PAGE, RW },
		{ "client GM read-only", self->a, self->buf.mmap_offset,
		  PTO_PAGE, PROT_READ },
		{ "AICPU GM", self->aicpu, PTO_MMAP_GM, self->info.gm_size,
		  RW },
		{ "AICPU registers", self->aicpu, PTO_MMAP_REGS,
		  PTO_REGS_SIZE, RW },
		{ "executor GM", self->exec, PTO_MMAP_GM, self->info.gm_size,
		  RW },
		{ "executor registers, read-only part", self->exec,
		  PTO_MMAP_REGS, PTO_REGS_EXEC_WRITE_OFFSET, PROT_READ },
		{ "executor registers, writable part", self->exec,
		  PTO_MMAP_REGS + PTO_REGS_EXEC_WRITE_OFFSET,
		  PTO_REGS_SIZE - PTO_REGS_EXEC_WRITE_OFFSET, RW },
	};
	int pfd[2], err;
	size_t i;

	ASSERT_EQ(0, pipe(pfd));
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		volatile __u8 *p = pto_mmap(m[i].fd, m[i].len, m[i].off,
					    m[i].prot, MAP_SHARED, &err);

		ASSERT_NE(NULL, p) TH_LOG("%s: %s", m[i].what, strerror(-err));
		(void)p[0];	/* faulted in: a PTE is there */
		EXPECT_EQ(-EFAULT, splice_to_pipe((const void *)p, PTO_PAGE,
						  pfd))
			TH_LOG("%s", m[i].what);
		munmap((void *)p, m[i].len);
	}
	close(pfd[0]);
	close(pfd[1]);
}

/* Copying I/O (write() from GM, read() into GM) is unaffected. */
TEST_F(map, gm_copy_io_works)
{
	size_t len = 2 * PTO_PAGE;
	int pfd[2], err;
	__u8 *c;

	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	pto_fill(c, PTO_PAGE, 0xc0c0);
	ASSERT_EQ(0, pipe(pfd));
	EXPECT_EQ((ssize_t)PTO_PAGE, write(pfd[1], c, PTO_PAGE));
	EXPECT_EQ((ssize_t)PTO_PAGE, read(pfd[0], c + PTO_PAGE, PTO_PAGE));
	EXPECT_EQ(0U, pto_check(c + PTO_PAGE, PTO_PAGE, 0xc0c0));
	close(pfd[0]);
	close(pfd[1]);
	munmap(c, len);
}

/* A client's buffer cannot become an io_uring fixed buffer. */
TEST_F(map, client_gm_not_io_uring_buffer)
{
	struct io_uring_params params = { 0 };
	size_t len = 2 * PTO_PAGE;
	struct iovec iov;
	int ring, err;
	long ret;
	__u8 *c;

	ring = (int)syscall(__NR_io_uring_setup, 1, &params);
	err = ring < 0 ? errno : 0;
	if (err == ENOSYS || err == EPERM)
		SKIP(return, "io_uring_setup: %s (no io_uring, or "
		     "kernel.io_uring_disabled)", strerror(err));
	ASSERT_LE(0, ring) TH_LOG("io_uring_setup: %s", strerror(err));
	c = pto_mmap(self->a, len, self->buf.mmap_offset, RW, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, c);
	c[0] = 1;
	iov = (struct iovec){ c, len };
	ret = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		      &iov, 1);
	err = ret < 0 ? errno : 0;
	EXPECT_EQ(EFAULT, err) TH_LOG("io_uring_register: %s",
				       err ? strerror(err) : "accepted");
	close(ring);
	munmap(c, len);
}

TEST_HARNESS_MAIN
