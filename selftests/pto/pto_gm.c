// SPDX-License-Identifier: GPL-2.0
/*
 * pto_gm: GM buffer allocation, free and lookup.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

FIXTURE(gm) {
	int a, b;
	struct pto_info info;
};

FIXTURE_SETUP(gm)
{
	self->b = -1;
	PTO_OPEN_OR_SKIP(self->a);
	ASSERT_EQ(0, pto_set_role(self->a, PTO_ROLE_CLIENT));
	self->b = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, self->b);
	ASSERT_EQ(0, pto_get_info(self->a, &self->info));
	ASSERT_EQ(self->info.gm_size, self->info.gm_free)
		TH_LOG("GM not all free at start: a previous test leaked");
}

FIXTURE_TEARDOWN(gm)
{
	close(self->a);
	if (self->b >= 0)
		close(self->b);
}

static __u64 gm_free(int fd)
{
	struct pto_info i;

	if (pto_get_info(fd, &i))
		return ~0ULL;
	return i.gm_free;
}

TEST_F(gm, alloc_free)
{
	struct pto_info *i = &self->info;
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_NE(0U, a.handle);
	EXPECT_EQ(0U, a.uid);
	EXPECT_LE(i->gm_dev_base, a.dev_addr);
	EXPECT_GE(i->gm_dev_base + i->gm_size - PTO_PAGE, a.dev_addr);
	EXPECT_EQ(0ULL, a.dev_addr % PTO_PAGE);
	EXPECT_EQ(PTO_MMAP_GM + (a.dev_addr - i->gm_dev_base), a.mmap_offset);
	EXPECT_EQ(i->gm_size - PTO_PAGE, gm_free(self->a));
	EXPECT_EQ(0, pto_gm_free(self->a, a.handle));
	EXPECT_EQ(i->gm_size, gm_free(self->a));
}

/*
 * An argument the module can read but not write back: -EFAULT, and no
 * buffer was allocated (the caller could never have freed it).
 */
TEST_F(gm, alloc_readonly_arg_allocates_nothing)
{
	struct pto_gm_alloc *a;
	void *page;

	page = mmap(NULL, PTO_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	a = page;
	a->size = sizeof(*a);
	a->len = 3 * PTO_PAGE;
	ASSERT_EQ(0, mprotect(page, PTO_PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, pto_ioc(self->a, PTO_IOC_GM_ALLOC, a));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
	munmap(page, PTO_PAGE);
}

TEST_F(gm, aicpu_alloc_free)
{
	int fd = pto_open_role(PTO_ROLE_AICPU);
	struct pto_gm_alloc a;
	struct pto_gm_lookup l = { 0 };

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pto_gm_alloc(fd, 3 * PTO_PAGE, 0, &a));
	EXPECT_EQ(0, pto_gm_lookup(fd, a.dev_addr, 3 * PTO_PAGE, &l));
	EXPECT_EQ(a.handle, l.handle);
	EXPECT_EQ(0, pto_gm_free(fd, a.handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
	close(fd);
}

TEST_F(gm, len_rounded_up_to_page)
{
	struct pto_gm_alloc a;
	struct pto_gm_lookup l = { 0 };

	ASSERT_EQ(0, pto_gm_alloc(self->a, 1, 0, &a));
	EXPECT_EQ(self->info.gm_size - PTO_PAGE, gm_free(self->a));
	ASSERT_EQ(0, pto_gm_lookup(self->a, a.dev_addr + PTO_PAGE - 1, 1, &l));
	EXPECT_EQ(a.dev_addr, l.buf_dev_addr);
	EXPECT_EQ(PTO_PAGE, l.buf_len);
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE + 1, 0, &a));
	EXPECT_EQ(self->info.gm_size - 3 * PTO_PAGE, gm_free(self->a));
}

TEST_F(gm, len_zero)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, 0, 0, NULL));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

/* More than GM holds: outside "1 .. GM size" of the uapi. */
TEST_F(gm, len_over_gm_size)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, self->info.gm_size + 1,
					0, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, 1ULL << 62, 0, NULL));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

/* Rounding ~0 up to a page must not wrap to a tiny length. */
TEST_F(gm, len_wraps_when_rounded)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, ~0ULL, 0, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, ~0ULL - PTO_PAGE + 2, 0,
					NULL));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

/* Within GM's size but more than is free. */
TEST_F(gm, len_over_free)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-ENOMEM, pto_gm_alloc(self->b, self->info.gm_size, 0, NULL));
	EXPECT_EQ(self->info.gm_size - PTO_PAGE, gm_free(self->a));
}

TEST_F(gm, exhaust_and_recover)
{
	struct pto_gm_alloc all, one;

	ASSERT_EQ(0, pto_gm_alloc(self->a, self->info.gm_size, 0, &all));
	EXPECT_EQ(0ULL, gm_free(self->a));
	EXPECT_EQ(self->info.gm_dev_base, all.dev_addr);
	EXPECT_EQ(-ENOMEM, pto_gm_alloc(self->a, 1, 0, NULL));
	EXPECT_EQ(-ENOMEM, pto_gm_alloc(self->b, 1, 0, NULL));
	ASSERT_EQ(0, pto_gm_free(self->a, all.handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
	EXPECT_EQ(0, pto_gm_alloc(self->b, 1, 0, &one));
}

TEST_F(gm, align_not_power_of_two)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 3 * PTO_PAGE, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, PTO_PAGE + 1, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, ~0ULL, NULL));
}

TEST_F(gm, align_below_page)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 1, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 64, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 2048, NULL));
}

TEST_F(gm, align_above_1g)
{
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 2ULL << 30, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_alloc(self->a, PTO_PAGE, 1ULL << 63, NULL));
}

TEST_F(gm, align_honored)
{
	__u64 align[] = { PTO_PAGE, 2 * PTO_PAGE, 64 << 10, 1 << 20, 2 << 20 };
	struct pto_gm_alloc pad, a;
	unsigned int i;

	/* A page first, so that the next free address is badly aligned. */
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &pad));
	for (i = 0; i < sizeof(align) / sizeof(align[0]); i++) {
		if (align[i] * 2 > self->info.gm_size)
			break;
		ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, align[i], &a));
		EXPECT_EQ(0ULL, a.dev_addr % align[i])
			TH_LOG("align %llu: dev_addr 0x%llx",
			       (unsigned long long)align[i],
			       (unsigned long long)a.dev_addr);
		EXPECT_EQ(0, pto_gm_free(self->a, a.handle));
	}
	/* Alignment padding is not accounted as used. */
	EXPECT_EQ(0, pto_gm_free(self->a, pad.handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

TEST_F(gm, free_handle_zero)
{
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, 0));
}

/*
 * Handle 0 is never handed out, not even after an attempt to free it
 * while the file holds other buffers (the handle table must not take
 * index 0 for a free one). Found by pto_fuzz.
 */
TEST_F(gm, free_handle_zero_keeps_handles_nonzero)
{
	struct pto_gm_alloc a, b;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, 0));
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &b));
	EXPECT_NE(0U, b.handle);
	EXPECT_NE(a.handle, b.handle);
	EXPECT_EQ(0, pto_gm_free(self->a, b.handle));
	EXPECT_EQ(0, pto_gm_free(self->a, a.handle));
}

/*
 * A file gets the lowest handle it does not hold (the user-mode device
 * gives them the same way): handles 1, 2, 3; 2 freed; the next is 2
 * again, then 4. A fresh file starts at 1.
 */
TEST_F(gm, handle_lowest_free)
{
	struct pto_gm_alloc a[4];
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a[i]));
		EXPECT_EQ((__u32)i + 1, a[i].handle);
	}
	ASSERT_EQ(0, pto_gm_free(self->a, a[1].handle));
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a[1]));
	EXPECT_EQ(2U, a[1].handle);
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a[3]));
	EXPECT_EQ(4U, a[3].handle);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, pto_gm_free(self->a, a[i].handle));
}

TEST_F(gm, free_bad_handle)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, a.handle + 1000));
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, 0xffffffffU));
	EXPECT_EQ(0, pto_gm_free(self->a, a.handle));
}

TEST_F(gm, double_free)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pto_gm_free(self->a, a.handle));
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, a.handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

/* Handles are private to a file: B's handle means nothing on A. */
TEST_F(gm, free_other_files_handle)
{
	struct pto_gm_alloc b;

	ASSERT_EQ(0, pto_gm_alloc(self->b, PTO_PAGE, 0, &b));
	EXPECT_EQ(-ENOENT, pto_gm_free(self->a, b.handle));
	EXPECT_EQ(0, pto_gm_lookup(self->b, b.dev_addr, 1, NULL));
	EXPECT_EQ(0, pto_gm_free(self->b, b.handle));
}

TEST_F(gm, handles_unique_ranges_disjoint)
{
	struct pto_gm_alloc a[16];
	__u64 total = 0;
	int i, j;

	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, pto_gm_alloc(i & 1 ? self->b : self->a,
					  (i % 3 + 1) * PTO_PAGE, 0, &a[i]));
		total += (i % 3 + 1) * PTO_PAGE;
	}
	for (i = 0; i < 16; i++) {
		EXPECT_NE(0U, a[i].handle);
		for (j = i + 1; j < 16; j++) {
			__u64 ie = a[i].dev_addr + (i % 3 + 1) * PTO_PAGE;
			__u64 je = a[j].dev_addr + (j % 3 + 1) * PTO_PAGE;

			if ((i & 1) == (j & 1))
				EXPECT_NE(a[i].handle, a[j].handle);
			EXPECT_TRUE(ie <= a[j].dev_addr || je <= a[i].dev_addr)
				TH_LOG("buffers %d and %d overlap", i, j);
		}
	}
	EXPECT_EQ(self->info.gm_size - total, gm_free(self->a));
}

TEST_F(gm, lookup_inside)
{
	struct pto_gm_alloc a;
	struct pto_gm_lookup l = { 0 };
	__u64 len = 4 * PTO_PAGE;

	ASSERT_EQ(0, pto_gm_alloc(self->a, len, 0, &a));
	ASSERT_EQ(0, pto_gm_lookup(self->a, a.dev_addr, len, &l));
	EXPECT_EQ(a.handle, l.handle);
	EXPECT_EQ(0U, l.pad);
	EXPECT_EQ(a.dev_addr, l.buf_dev_addr);
	EXPECT_EQ(len, l.buf_len);
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(0, pto_gm_lookup(self->a, a.dev_addr, 1, &l));
	EXPECT_EQ(a.handle, l.handle);
	ASSERT_EQ(0, pto_gm_lookup(self->a, a.dev_addr + len - 1, 1, &l));
	EXPECT_EQ(a.handle, l.handle);
	ASSERT_EQ(0, pto_gm_lookup(self->a, a.dev_addr + 100, 2 * PTO_PAGE,
				   &l));
	EXPECT_EQ(a.handle, l.handle);
	EXPECT_EQ(a.dev_addr, l.buf_dev_addr);
	EXPECT_EQ(len, l.buf_len);
}

TEST_F(gm, lookup_outside)
{
	struct pto_gm_alloc a;
	__u64 len = 2 * PTO_PAGE;

	ASSERT_EQ(0, pto_gm_alloc(self->a, len, 0, &a));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr + len, 1, NULL));
	if (a.dev_addr > self->info.gm_dev_base)
		EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr - 1, 1,
						 NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, 0, 1, NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, self->info.gm_dev_base - 1,
					 1, NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, self->info.gm_dev_base +
					 self->info.gm_size, 1, NULL));
}

TEST_F(gm, lookup_straddles_end)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr + PTO_PAGE - 1,
					 2, NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr, PTO_PAGE + 1,
					 NULL));
}

TEST_F(gm, lookup_straddles_start)
{
	struct pto_gm_alloc pad, a;

	ASSERT_EQ(0, pto_gm_alloc(self->b, PTO_PAGE, 0, &pad));
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	ASSERT_LT(self->info.gm_dev_base, a.dev_addr);
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr - 1, 2, NULL));
}

/* Two buffers of the same file, adjacent or not: one range, no answer. */
TEST_F(gm, lookup_straddles_two_buffers)
{
	struct pto_gm_alloc x, y;
	__u64 lo, hi;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &x));
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &y));
	lo = x.dev_addr < y.dev_addr ? x.dev_addr : y.dev_addr;
	hi = x.dev_addr < y.dev_addr ? y.dev_addr : x.dev_addr;
	if (hi != lo + PTO_PAGE)
		TH_LOG("buffers not adjacent (0x%llx, 0x%llx)",
		       (unsigned long long)lo, (unsigned long long)hi);
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, lo, hi + PTO_PAGE - lo,
					 NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, lo + PTO_PAGE - 8, 16,
					 NULL));
}

TEST_F(gm, lookup_len_zero)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EINVAL, pto_gm_lookup(self->a, a.dev_addr, 0, NULL));
}

/* dev_addr + len wraps around 2^64. */
TEST_F(gm, lookup_range_wraps)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EINVAL, pto_gm_lookup(self->a, a.dev_addr, ~0ULL, NULL));
	EXPECT_EQ(-EINVAL, pto_gm_lookup(self->a, ~0ULL - 16, 64, NULL));
}

TEST_F(gm, lookup_sees_only_own_file)
{
	struct pto_gm_alloc b;
	struct pto_gm_lookup l = { 0 };
	int none = pto_open(), aicpu = pto_open_role(PTO_ROLE_AICPU);

	ASSERT_LE(0, none);
	ASSERT_LE(0, aicpu);
	ASSERT_EQ(0, pto_gm_alloc(self->b, PTO_PAGE, 0, &b));
	EXPECT_EQ(0, pto_gm_lookup(self->b, b.dev_addr, PTO_PAGE, &l));
	EXPECT_EQ(b.handle, l.handle);
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, b.dev_addr, PTO_PAGE, NULL));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(none, b.dev_addr, PTO_PAGE, NULL));
	/* Not even the AICPU's own file sees a client's buffer. */
	EXPECT_EQ(-ENOENT, pto_gm_lookup(aicpu, b.dev_addr, PTO_PAGE, NULL));
	close(none);
	close(aicpu);
}

TEST_F(gm, lookup_after_free)
{
	struct pto_gm_alloc a;

	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pto_gm_free(self->a, a.handle));
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr, 1, NULL));
}

/* A range freed and allocated again is found as its new buffer. */
TEST_F(gm, lookup_range_reused)
{
	struct pto_gm_alloc a, b, c;
	struct pto_gm_lookup l = { 0 };

	ASSERT_EQ(0, pto_gm_alloc(self->a, 2 * PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &b));
	ASSERT_EQ(0, pto_gm_free(self->a, a.handle));
	/* first fit: the freed range again, half of it */
	ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &c));
	ASSERT_EQ(a.dev_addr, c.dev_addr);
	ASSERT_EQ(0, pto_gm_lookup(self->a, c.dev_addr, PTO_PAGE, &l));
	EXPECT_EQ(c.handle, l.handle);
	EXPECT_EQ(PTO_PAGE, l.buf_len);
	/* the rest of the old range belongs to nobody now */
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr + PTO_PAGE, 1,
					 NULL));
	ASSERT_EQ(0, pto_gm_lookup(self->a, b.dev_addr + 1, 1, &l));
	EXPECT_EQ(b.handle, l.handle);
}

/*
 * Many buffers of one file: each address is found as its own buffer,
 * the first and last byte of each, and after every other one is freed,
 * those are gone and the others stay.
 */
TEST_F(gm, lookup_many)
{
	enum { N = 2048 };
	static struct pto_gm_alloc a[N];
	struct pto_gm_lookup l = { 0 };
	int i;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, pto_gm_alloc(self->a, (i % 3 + 1) * PTO_PAGE, 0,
					  &a[i]));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, pto_gm_lookup(self->a, a[i].dev_addr, 1, &l));
		ASSERT_EQ(a[i].handle, l.handle);
		ASSERT_EQ(0, pto_gm_lookup(self->a, a[i].dev_addr +
					   (i % 3 + 1) * PTO_PAGE - 1, 1, &l));
		ASSERT_EQ(a[i].handle, l.handle);
	}
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, pto_gm_free(self->a, a[i].handle));
	for (i = 0; i < N; i++) {
		int ret = pto_gm_lookup(self->a, a[i].dev_addr, 1, &l);

		if (i % 2) {
			ASSERT_EQ(0, ret);
			ASSERT_EQ(a[i].handle, l.handle);
		} else {
			ASSERT_EQ(-ENOENT, ret);
		}
	}
}

/*
 * The daemon's use: a client process hands its file over a unix socket,
 * the daemon looks the client's addresses up on it.
 */
TEST_F(gm, lookup_on_passed_file)
{
	int sv[2], st;
	struct pto_gm_alloc a;
	struct pto_gm_lookup l = { 0 };
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = pto_open_role(PTO_ROLE_CLIENT);
		char c;

		if (fd < 0 || pto_gm_alloc(fd, 2 * PTO_PAGE, 0, &a) ||
		    write(sv[1], &a, sizeof(a)) != sizeof(a) ||
		    pto_send_fd(sv[1], fd))
			_exit(1);
		close(fd);
		/* Stay alive until the parent is done. */
		_exit(read(sv[1], &c, 1) == 1 ? 0 : 2);
	}
	ASSERT_EQ(sizeof(a), read(sv[0], &a, sizeof(a)));
	{
		int fd = pto_recv_fd(sv[0]);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, pto_gm_lookup(fd, a.dev_addr + PTO_PAGE, 16, &l));
		EXPECT_EQ(a.handle, l.handle);
		EXPECT_EQ(2 * PTO_PAGE, l.buf_len);
		EXPECT_EQ(-ENOENT, pto_gm_lookup(self->a, a.dev_addr, 16,
						 NULL));
		close(fd);
	}
	ASSERT_EQ(1, write(sv[0], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The child's file is gone with both its descriptors. */
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
	close(sv[0]);
	close(sv[1]);
}

TEST_F(gm, close_releases_buffers)
{
	struct pto_gm_alloc a;
	int i;

	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, pto_gm_alloc(self->b, (i + 1) * PTO_PAGE, 0, &a));
	EXPECT_EQ(self->info.gm_size - 36 * PTO_PAGE, gm_free(self->a));
	close(self->b);
	self->b = -1;
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
}

TEST_F(gm, sysfs_gm_buffers)
{
	struct pto_gm_alloc a[3];
	__u64 v;
	int i;

	if (pto_sysfs_kv("counters", "gm_buffers", &v))
		SKIP(return, "no gm_buffers in %s/counters", pto_sysfs_dir());
	EXPECT_EQ(0ULL, v);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a[i]));
	ASSERT_EQ(0, pto_sysfs_kv("counters", "gm_buffers", &v));
	EXPECT_EQ(3ULL, v);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pto_gm_free(self->a, a[i].handle));
	ASSERT_EQ(0, pto_sysfs_kv("counters", "gm_buffers", &v));
	EXPECT_EQ(0ULL, v);
}

/* Many small buffers, freed in an interleaved order, coalesce again. */
TEST_F(gm, fragment_and_coalesce)
{
	enum { N = 64 };
	struct pto_gm_alloc a[N], all;
	int i;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, pto_gm_alloc(self->a, PTO_PAGE, 0, &a[i]));
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, pto_gm_free(self->a, a[i].handle));
	for (i = 1; i < N; i += 2)
		ASSERT_EQ(0, pto_gm_free(self->a, a[i].handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->a));
	EXPECT_EQ(0, pto_gm_alloc(self->a, self->info.gm_size, 0, &all));
}

TEST_HARNESS_MAIN
