// SPDX-License-Identifier: GPL-2.0
/*
 * pto_quota: PTO_IOC_GM_QUOTA, the GM each user may hold.
 *
 * The AICPU sets the quotas; the device charges a CLIENT file's buffers
 * to the user that opened the file, from GM_ALLOC until the buffer's last
 * reference goes. The tests hold the AICPU role as root, then become an
 * unprivileged user of the device (nobody in group pto) that keeps the
 * AICPU file: they allocate as that user and read the charge through the
 * file they kept. The argument's size rules and the role check are in
 * pto_ioctl (sized, pads, wrong_role). The AICPU can charge what it
 * allocates for a user to that user (PTO_GM_ALLOC_CHARGE).
 */
#include "kselftest_harness.h"
#include "pto_test.h"

#define NOBODY		65534
#define MIB		(1024 * 1024ULL)

static int quota_io(int fd, __u32 flags, __u32 uid, __u64 bytes,
		    struct pto_gm_quota *out)
{
	struct pto_gm_quota q = { .size = sizeof(q), .flags = flags,
				  .uid = uid, .bytes = bytes };
	int ret = pto_ioc(fd, PTO_IOC_GM_QUOTA, &q);

	if (!ret && out)
		*out = q;
	return ret;
}

static int set_default(int fd, __u64 bytes)
{
	return quota_io(fd, PTO_GM_QUOTA_SET, 0, bytes, NULL);
}

static int set_uid(int fd, __u32 uid, __u64 bytes)
{
	return quota_io(fd, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID, uid, bytes,
			NULL);
}

/* Bytes charged to @uid (~0 if the read fails). */
static __u64 used_by(int fd, __u32 uid)
{
	struct pto_gm_quota q;

	return quota_io(fd, PTO_GM_QUOTA_UID, uid, 0, &q) ? ~0ULL : q.used;
}

/* The quota in force for @uid (~0 if the read fails). */
static __u64 quota_of(int fd, __u32 uid)
{
	struct pto_gm_quota q;

	return quota_io(fd, PTO_GM_QUOTA_UID, uid, 0, &q) ? ~0ULL : q.bytes;
}

FIXTURE(quota) {
	int aicpu;
};

FIXTURE_SETUP(quota)
{
	int ret;

	PTO_OPEN_OR_SKIP(self->aicpu);
	ret = pto_set_role(self->aicpu, PTO_ROLE_AICPU);
	if (ret == -EBUSY)
		SKIP(return, "the AICPU role is taken (ptod running?)");
	ASSERT_EQ(0, ret);
}

static int clear_uid(int fd, __u32 uid)
{
	return quota_io(fd, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID |
			PTO_GM_QUOTA_CLEAR, uid, 0, NULL);
}

/*
 * The quotas outlive the AICPU that set them: the default goes back to
 * none and the own quotas the tests give go (the test may run as nobody
 * by now, with the AICPU file it kept), so that the tests after this one
 * start without any.
 */
FIXTURE_TEARDOWN(quota)
{
	if (self->aicpu < 0)
		return;
	if (set_default(self->aicpu, 0) || clear_uid(self->aicpu, 0) ||
	    clear_uid(self->aicpu, NOBODY))
		TH_LOG("cannot clear the quotas");
	close(self->aicpu);
}

TEST_F(quota, none_at_start)
{
	struct pto_gm_quota q;

	ASSERT_EQ(0, quota_io(self->aicpu, 0, 0, 0, &q));
	EXPECT_EQ(0ULL, q.bytes);
	EXPECT_EQ(0ULL, q.used);
	EXPECT_EQ(0U, q.pad);
	EXPECT_EQ(0ULL, quota_of(self->aicpu, NOBODY));
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
}

TEST_F(quota, bad_arguments)
{
	struct pto_gm_quota q = { .size = sizeof(q) };

	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, 1U << 3, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, 1U << 31, 0, 0, NULL));
	/* a uid without PTO_GM_QUOTA_UID, bytes to read */
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, 0, NOBODY, 0, NULL));
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, 0, 0, 4096, NULL));
	/* CLEAR only with SET and UID, and without bytes */
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, PTO_GM_QUOTA_CLEAR, 0, 0,
				    NULL));
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, PTO_GM_QUOTA_SET |
				    PTO_GM_QUOTA_CLEAR, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, PTO_GM_QUOTA_SET |
				    PTO_GM_QUOTA_UID | PTO_GM_QUOTA_CLEAR,
				    NOBODY, 4096, NULL));
	/* (uid_t)-1 is no user */
	EXPECT_EQ(-EINVAL, quota_io(self->aicpu, PTO_GM_QUOTA_UID, ~0U, 0,
				    NULL));
	q.pad = 1;
	EXPECT_EQ(-EINVAL, pto_ioc(self->aicpu, PTO_IOC_GM_QUOTA, &q));
	/* nothing was set */
	EXPECT_EQ(0ULL, quota_of(self->aicpu, 0));
	EXPECT_EQ(0ULL, quota_of(self->aicpu, NOBODY));
}

/* GM_ALLOC beyond the default quota: -EDQUOT, up to it: fine. */
TEST_F(quota, edquot_beyond_default)
{
	struct pto_gm_alloc a;
	int c;

	ASSERT_EQ(0, set_default(self->aicpu, MIB));
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, MIB + 1, 0, NULL));
	ASSERT_EQ(0, pto_gm_alloc(c, MIB / 2, 0, &a));
	EXPECT_EQ(MIB / 2, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, MIB / 2 + PTO_PAGE, 0, NULL));
	/* a refused allocation charges nothing */
	EXPECT_EQ(MIB / 2, used_by(self->aicpu, NOBODY));
	ASSERT_EQ(0, pto_gm_alloc(c, MIB / 2, 0, NULL));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, 1, 0, NULL));
	/* charged in pages, as allocated */
	EXPECT_EQ(0, pto_gm_free(c, a.handle));
	EXPECT_EQ(MIB / 2, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0, pto_gm_alloc(c, 1, 0, NULL));
	EXPECT_EQ(MIB / 2 + PTO_PAGE, used_by(self->aicpu, NOBODY));
	close(c);
}

/* The charge goes with the buffer: GM_FREE, close(), munmap(). */
TEST_F(quota, charge_returns)
{
	struct pto_gm_alloc a, b;
	void *p;
	int c, err;

	ASSERT_EQ(0, set_default(self->aicpu, 4 * MIB));
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, pto_gm_alloc(c, MIB, 0, &a));
	ASSERT_EQ(0, pto_gm_alloc(c, 2 * MIB, 0, &b));
	EXPECT_EQ(3 * MIB, used_by(self->aicpu, NOBODY));
	/* GM_FREE of an unmapped buffer */
	EXPECT_EQ(0, pto_gm_free(c, b.handle));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	/* a mapping keeps the buffer, and its charge, past GM_FREE ... */
	p = pto_mmap(c, MIB, a.mmap_offset, PROT_READ | PROT_WRITE, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	EXPECT_EQ(0, pto_gm_free(c, a.handle));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	/* ... until munmap() of the last reference */
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
	/* close() of the file returns what it holds */
	ASSERT_EQ(0, pto_gm_alloc(c, MIB, 0, NULL));
	ASSERT_EQ(0, pto_gm_alloc(c, MIB, 0, &a));
	p = pto_mmap(c, MIB, a.mmap_offset, PROT_READ | PROT_WRITE, MAP_SHARED,
		     &err);
	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(-err));
	EXPECT_EQ(2 * MIB, used_by(self->aicpu, NOBODY));
	close(c);
	/* (a mapping holds the file: nothing is released yet) */
	EXPECT_EQ(2 * MIB, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0, munmap(p, MIB));
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
}

/*
 * A buffer is charged its alignment when that is more than its length:
 * first-fit placement at a large alignment keeps the GM below the
 * buffer from any allocation of that size, so small buffers at large
 * alignments would otherwise cut GM into pieces for a charge of a page
 * each. The charge goes with the buffer as its length does.
 */
TEST_F(quota, alignment_charged)
{
	struct pto_gm_alloc a;
	int c, i;

	ASSERT_EQ(0, set_default(self->aicpu, 8 * MIB));
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, pto_gm_alloc(c, PTO_PAGE, 2 * MIB, &a));
	EXPECT_EQ(0ULL, a.dev_addr % (2 * MIB));
	EXPECT_EQ(2 * MIB, used_by(self->aicpu, NOBODY));
	for (i = 1; i < 4; i++)
		ASSERT_EQ(0, pto_gm_alloc(c, PTO_PAGE, 2 * MIB, NULL));
	EXPECT_EQ(8 * MIB, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, PTO_PAGE, 2 * MIB, NULL));
	EXPECT_EQ(0, pto_gm_free(c, a.handle));
	EXPECT_EQ(6 * MIB, used_by(self->aicpu, NOBODY));
	/* a length beyond its alignment: the length, as before */
	ASSERT_EQ(0, pto_gm_alloc(c, MIB + PTO_PAGE, 64 * 1024, NULL));
	EXPECT_EQ(7 * MIB + PTO_PAGE, used_by(self->aicpu, NOBODY));
	close(c);
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
}

/* A user's own quota beats the default; CLEAR gives the default back. */
TEST_F(quota, own_quota)
{
	struct pto_gm_quota q;
	int c;

	ASSERT_EQ(0, set_default(self->aicpu, MIB));
	ASSERT_EQ(0, set_uid(self->aicpu, NOBODY, 2 * MIB));
	EXPECT_EQ(2 * MIB, quota_of(self->aicpu, NOBODY));
	EXPECT_EQ(MIB, quota_of(self->aicpu, NOBODY - 1));
	ASSERT_EQ(0, quota_io(self->aicpu, 0, 0, 0, &q));
	EXPECT_EQ(MIB, q.bytes);
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, pto_gm_alloc(c, 2 * MIB, 0, NULL));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, PTO_PAGE, 0, NULL));
	/* an own quota of 0: unlimited, whatever the default */
	EXPECT_EQ(0, set_uid(self->aicpu, NOBODY, 0));
	EXPECT_EQ(0, pto_gm_alloc(c, 2 * MIB, 0, NULL));
	/* back to the default: over it, nothing more */
	EXPECT_EQ(0, quota_io(self->aicpu, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID |
			      PTO_GM_QUOTA_CLEAR, NOBODY, 0, &q));
	EXPECT_EQ(MIB, q.bytes);
	EXPECT_EQ(4 * MIB, q.used);
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, PTO_PAGE, 0, NULL));
	close(c);
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
}

/* Users are charged apart; without UID the read gives all of them. */
TEST_F(quota, per_user)
{
	struct pto_gm_quota q;
	int r, c;

	ASSERT_EQ(0, set_default(self->aicpu, MIB));
	r = pto_open_role(PTO_ROLE_CLIENT);	/* root's */
	ASSERT_LE(0, r);
	ASSERT_EQ(0, pto_gm_alloc(r, MIB, 0, NULL));
	/* root is charged and limited like anyone else */
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(r, PTO_PAGE, 0, NULL));
	EXPECT_EQ(MIB, used_by(self->aicpu, 0));
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, pto_gm_alloc(c, MIB, 0, NULL));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	ASSERT_EQ(0, quota_io(self->aicpu, 0, 0, 0, &q));
	EXPECT_EQ(2 * MIB, q.used);
	/* a file passed to another user stays charged to its opener */
	close(c);
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0, pto_gm_free(r, 1));
	EXPECT_EQ(0ULL, used_by(self->aicpu, 0));
	EXPECT_EQ(0, pto_gm_alloc(r, MIB, 0, NULL));
	EXPECT_EQ(MIB, used_by(self->aicpu, 0));
	close(r);
}

/* The AICPU's own buffers are the device's: never charged. */
TEST_F(quota, aicpu_not_charged)
{
	struct pto_gm_quota q;

	ASSERT_EQ(0, set_default(self->aicpu, PTO_PAGE));
	ASSERT_EQ(0, set_uid(self->aicpu, 0, PTO_PAGE));
	EXPECT_EQ(0, pto_gm_alloc(self->aicpu, 4 * MIB, 0, NULL));
	ASSERT_EQ(0, quota_io(self->aicpu, 0, 0, 0, &q));
	EXPECT_EQ(0ULL, q.used);
	EXPECT_EQ(0ULL, used_by(self->aicpu, 0));
}

/* GM_ALLOC with PTO_GM_ALLOC_CHARGE (AICPU only): @uid is charged. */
static int charge_alloc(int fd, __u32 flags, __u32 uid, __u64 len,
			struct pto_gm_alloc *out)
{
	struct pto_gm_alloc a = { .size = sizeof(a), .flags = flags,
				  .len = len, .uid = uid };
	int ret = pto_ioc(fd, PTO_IOC_GM_ALLOC, &a);

	if (!ret && out)
		*out = a;
	return ret;
}

/*
 * What the AICPU allocates for a user (ptod: a client's runtime) counts
 * against that user's quota, beside the user's own buffers, until freed.
 */
TEST_F(quota, aicpu_charges_a_user)
{
	struct pto_gm_alloc a, b;
	int c;

	ASSERT_EQ(0, set_uid(self->aicpu, NOBODY, MIB));
	ASSERT_EQ(0, charge_alloc(self->aicpu, PTO_GM_ALLOC_CHARGE, NOBODY,
				  MIB / 2, &a));
	EXPECT_EQ(NOBODY, a.uid);
	EXPECT_EQ(MIB / 2, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0ULL, used_by(self->aicpu, 0));
	/* the user's own buffers get what is left */
	ASSERT_EQ(0, pto_become_user(NOBODY, true));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, MIB / 2 + PTO_PAGE, 0, NULL));
	ASSERT_EQ(0, pto_gm_alloc(c, MIB / 2, 0, &b));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	/* and the AICPU gets no more for it either */
	EXPECT_EQ(-EDQUOT, charge_alloc(self->aicpu, PTO_GM_ALLOC_CHARGE,
					NOBODY, PTO_PAGE, NULL));
	EXPECT_EQ(MIB, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0, pto_gm_free(self->aicpu, a.handle));
	EXPECT_EQ(MIB / 2, used_by(self->aicpu, NOBODY));
	close(c);
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
}

/* Only the AICPU charges another user; the uid is In only with the flag. */
TEST_F(quota, charge_flag_rules)
{
	int c = pto_open_role(PTO_ROLE_CLIENT);

	ASSERT_LE(0, c);
	EXPECT_EQ(-EPERM, charge_alloc(c, PTO_GM_ALLOC_CHARGE, NOBODY,
				       PTO_PAGE, NULL));
	EXPECT_EQ(-EPERM, charge_alloc(c, PTO_GM_ALLOC_CHARGE, 0, PTO_PAGE,
				       NULL));
	EXPECT_EQ(-EINVAL, charge_alloc(self->aicpu, 0, NOBODY, PTO_PAGE,
					NULL));
	EXPECT_EQ(-EINVAL, charge_alloc(self->aicpu, 1U << 1, 0, PTO_PAGE,
					NULL));
	/* (uid_t)-1 is no user */
	EXPECT_EQ(-EINVAL, charge_alloc(self->aicpu, PTO_GM_ALLOC_CHARGE, ~0U,
					PTO_PAGE, NULL));
	EXPECT_EQ(0ULL, used_by(self->aicpu, NOBODY));
	EXPECT_EQ(0ULL, used_by(self->aicpu, 0));
	close(c);
}

/*
 * The quotas outlive the AICPU role, so that nobody takes all of GM while
 * no AICPU holds it, and stay in force under the next AICPU until it sets
 * one: its first quota drops every own quota (the old AICPU's), then
 * does what it asks. What users hold stays charged.
 */
TEST_F(quota, kept_when_aicpu_goes)
{
	struct pto_gm_alloc a;
	int c, next;

	ASSERT_EQ(0, set_default(self->aicpu, PTO_PAGE));
	ASSERT_EQ(0, set_uid(self->aicpu, 0, 2 * PTO_PAGE));
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, pto_gm_alloc(c, PTO_PAGE, 0, &a));
	close(self->aicpu);
	self->aicpu = -1;
	/* no AICPU: its quotas are still in force */
	EXPECT_EQ(0, pto_gm_alloc(c, PTO_PAGE, 0, NULL));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, PTO_PAGE, 0, NULL));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, MIB, 0, NULL));
	next = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, next);
	self->aicpu = next;
	/* a new AICPU that set nothing yet: still the old AICPU's */
	EXPECT_EQ(2 * PTO_PAGE, quota_of(next, 0));
	EXPECT_EQ(PTO_PAGE, quota_of(next, NOBODY));
	EXPECT_EQ(2 * PTO_PAGE, used_by(next, 0));
	EXPECT_EQ(-EDQUOT, pto_gm_alloc(c, PTO_PAGE, 0, NULL));
	/* its first quota: root's own one (the old AICPU's) goes */
	ASSERT_EQ(0, set_default(next, 0));
	EXPECT_EQ(0ULL, quota_of(next, 0));
	EXPECT_EQ(0, pto_gm_alloc(c, MIB, 0, NULL));
	EXPECT_EQ(MIB + 2 * PTO_PAGE, used_by(next, 0));
	close(c);
	EXPECT_EQ(0ULL, used_by(next, 0));
}

/* A new AICPU's own quotas, set after its first one, stay its own. */
TEST_F(quota, new_aicpu_quotas_its_own)
{
	int next;

	ASSERT_EQ(0, set_uid(self->aicpu, NOBODY, PTO_PAGE));
	ASSERT_EQ(0, set_uid(self->aicpu, 0, 2 * PTO_PAGE));
	close(self->aicpu);
	self->aicpu = -1;
	next = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, next);
	self->aicpu = next;
	/* the first: NOBODY's own quota, the old AICPU's others go */
	ASSERT_EQ(0, set_uid(next, NOBODY, 3 * PTO_PAGE));
	EXPECT_EQ(0ULL, quota_of(next, 0));
	ASSERT_EQ(0, set_default(next, MIB));
	EXPECT_EQ(3 * PTO_PAGE, quota_of(next, NOBODY));
	EXPECT_EQ(MIB, quota_of(next, 0));
}

/* At most PTO_GM_QUOTA_MAX_UIDS users have a quota of their own. */
TEST_F(quota, own_quotas_bounded)
{
	__u32 i, base = 100000;

	for (i = 0; i < PTO_GM_QUOTA_MAX_UIDS; i++)
		ASSERT_EQ(0, set_uid(self->aicpu, base + i, MIB));
	EXPECT_EQ(-ENOSPC, set_uid(self->aicpu, base + i, MIB));
	/* changing one that has one is fine */
	EXPECT_EQ(0, set_uid(self->aicpu, base, 2 * MIB));
	EXPECT_EQ(0, quota_io(self->aicpu, PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID |
			      PTO_GM_QUOTA_CLEAR, base, 0, NULL));
	EXPECT_EQ(0, set_uid(self->aicpu, base + i, MIB));
	EXPECT_EQ(MIB, quota_of(self->aicpu, base + i));
	for (i = 0; i <= PTO_GM_QUOTA_MAX_UIDS; i++)
		EXPECT_EQ(0, clear_uid(self->aicpu, base + i));
}

TEST_HARNESS_MAIN
