// SPDX-License-Identifier: GPL-2.0
/*
 * pto_pin: the AICPU's pins of clients' buffers (PTO_IOC_GM_PIN,
 * PTO_IOC_GM_UNPIN). A pin is a reference on a client's buffer held by the
 * AICPU file: while it exists the buffer's memory never goes back to GM,
 * whatever the client does, so no other allocation can be given it.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

static int pin(int aicpu, int client_fd, __u64 dev_addr, __u64 len,
	       struct pto_gm_pin *out)
{
	struct pto_gm_pin p = { .size = sizeof(p), .fd = client_fd,
				.dev_addr = dev_addr, .len = len };
	int ret = pto_ioc(aicpu, PTO_IOC_GM_PIN, &p);

	if (out)
		*out = p;
	return ret;
}

static int unpin(int aicpu, __u32 id)
{
	struct pto_gm_unpin u = { .size = sizeof(u), .pin = id };

	return pto_ioc(aicpu, PTO_IOC_GM_UNPIN, &u);
}

static __u64 counter(const char *key)
{
	__u64 v = ~0ULL;

	if (pto_sysfs_kv("counters", key, &v))
		return ~0ULL;
	return v;
}

static __u64 gm_free(int fd)
{
	struct pto_info i;

	return pto_get_info(fd, &i) ? ~0ULL : i.gm_free;
}

FIXTURE(pin) {
	int aicpu, client;
	struct pto_info info;
	__u8 *gm;		/* the AICPU's view of all of GM */
	__u64 pins0, used0;
};

FIXTURE_SETUP(pin)
{
	self->client = -1;
	self->gm = NULL;
	PTO_OPEN_OR_SKIP(self->aicpu);
	ASSERT_EQ(0, pto_get_info(self->aicpu, &self->info));
	ASSERT_EQ(self->info.gm_size, self->info.gm_free)
		TH_LOG("GM not all free at start: a previous test leaked");
	ASSERT_EQ(0, pto_set_role(self->aicpu, PTO_ROLE_AICPU));
	self->client = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, self->client);
	self->gm = pto_map_gm(self->aicpu, self->info.gm_size);
	ASSERT_NE(NULL, self->gm);
	self->pins0 = counter("pins");
	self->used0 = counter("gm_bytes_used");
	ASSERT_EQ(0ULL, self->pins0);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->gm)
		munmap(self->gm, self->info.gm_size);
	if (self->client >= 0)
		close(self->client);
	close(self->aicpu);
	/* whatever a test pinned went with the AICPU file */
	EXPECT_EQ(0ULL, counter("pins"));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
}

static __u8 *gm_at(FIXTURE_DATA(pin) *self, __u64 dev_addr)
{
	return self->gm + (dev_addr - self->info.gm_dev_base);
}

/* A client buffer of @len bytes, mapped, filled with @seed's pattern. */
static void *client_buf(struct __test_metadata *_metadata, int client,
			__u64 len, __u32 seed, struct pto_gm_alloc *a)
{
	int err;
	void *p;

	ASSERT_EQ(0, pto_gm_alloc(client, len, 0, a)) { return NULL; }
	p = pto_mmap(client, len, a->mmap_offset, PROT_READ | PROT_WRITE,
		     MAP_SHARED, &err);
	ASSERT_NE(NULL, p) { return NULL; }
	pto_fill(p, len, seed);
	return p;
}

TEST_F(pin, inside_gives_the_buffer)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p;

	ASSERT_EQ(0, pto_gm_alloc(self->client, 3 * PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr + PTO_PAGE + 5,
			 7, &p));
	EXPECT_NE(0U, p.pin);
	EXPECT_EQ(a.dev_addr, p.buf_dev_addr);
	EXPECT_EQ(3 * PTO_PAGE, p.buf_len);
	EXPECT_EQ(1ULL, counter("pins"));
	EXPECT_EQ(0, unpin(self->aicpu, p.pin));
	EXPECT_EQ(0ULL, counter("pins"));
	EXPECT_EQ(-ENOENT, unpin(self->aicpu, p.pin));
	EXPECT_EQ(-ENOENT, unpin(self->aicpu, 0));
	EXPECT_EQ(-ENOENT, unpin(self->aicpu, p.pin + 1000));
}

/* The whole buffer, exactly, is a range inside it. */
TEST_F(pin, whole_buffer)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p;

	ASSERT_EQ(0, pto_gm_alloc(self->client, 2 * PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 2 * PTO_PAGE,
			 &p));
	EXPECT_EQ(0, unpin(self->aicpu, p.pin));
}

/*
 * An argument the module can read but not write back: -EFAULT, and no
 * pin was taken (the caller would never learn its id to drop it).
 */
TEST_F(pin, readonly_arg_pins_nothing)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin *p;
	void *page;

	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &a));
	page = mmap(NULL, PTO_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	p = page;
	p->size = sizeof(*p);
	p->fd = self->client;
	p->dev_addr = a.dev_addr;
	p->len = PTO_PAGE;
	ASSERT_EQ(0, mprotect(page, PTO_PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, pto_ioc(self->aicpu, PTO_IOC_GM_PIN, p));
	EXPECT_EQ(0ULL, counter("pins"));
	munmap(page, PTO_PAGE);
	/* nothing holds the buffer: freed, its memory is back at once */
	EXPECT_EQ(0, pto_gm_free(self->client, a.handle));
	EXPECT_EQ(self->info.gm_size, gm_free(self->aicpu));
}

/* Every pin is a reference of its own: the buffer goes with the last. */
TEST_F(pin, two_pins_two_references)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p1, p2;

	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 1, &p1));
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 1, &p2));
	EXPECT_NE(p1.pin, p2.pin);
	EXPECT_EQ(2ULL, counter("pins"));
	ASSERT_EQ(0, pto_gm_free(self->client, a.handle));
	EXPECT_EQ(PTO_PAGE, counter("gm_bytes_used"));
	EXPECT_EQ(0, unpin(self->aicpu, p1.pin));
	EXPECT_EQ(PTO_PAGE, counter("gm_bytes_used"));
	EXPECT_EQ(0, unpin(self->aicpu, p2.pin));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
}

/* Only the AICPU pins; no other role may issue either ioctl. */
TEST_F(pin, other_roles_refused)
{
	int roles[] = { PTO_ROLE_NONE, PTO_ROLE_CLIENT, PTO_ROLE_EXECUTOR };
	struct pto_gm_alloc a;
	unsigned int i;

	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &a));
	for (i = 0; i < 3; i++) {
		int fd = roles[i] ? pto_open_role(roles[i]) : pto_open();

		ASSERT_LE(0, fd);
		EXPECT_EQ(-EACCES, pin(fd, self->client, a.dev_addr, 1, NULL))
			TH_LOG("GM_PIN by role %d", roles[i]);
		EXPECT_EQ(-EACCES, unpin(fd, 1));
		close(fd);
	}
	/* the client cannot pin its own buffer either */
	EXPECT_EQ(-EACCES, pin(self->client, self->client, a.dev_addr, 1,
			       NULL));
	EXPECT_EQ(0ULL, counter("pins"));
}

/*
 * A local user in the device's group has the client role only: it can
 * neither pin nor take the AICPU role that could.
 */
TEST_F(pin, unprivileged_user_cannot_pin)
{
	struct pto_gm_alloc a;
	int c, fd;

	ASSERT_EQ(0, pto_drop_privileges());
	c = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, pto_gm_alloc(c, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EACCES, pin(c, c, a.dev_addr, 1, NULL));
	fd = pto_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPERM, pto_set_role(fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EACCES, pin(fd, c, a.dev_addr, 1, NULL));
	close(fd);
	close(c);
}

TEST_F(pin, bad_fd)
{
	struct pto_gm_alloc a;
	int null_fd, closed;

	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EBADF, pin(self->aicpu, -1, a.dev_addr, 1, NULL));
	EXPECT_EQ(-EBADF, pin(self->aicpu, 0x7fffffff, a.dev_addr, 1, NULL));
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, null_fd);
	EXPECT_EQ(-EBADF, pin(self->aicpu, null_fd, a.dev_addr, 1, NULL));
	closed = dup(null_fd);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, pin(self->aicpu, closed, a.dev_addr, 1, NULL));
	close(null_fd);
	EXPECT_EQ(0ULL, counter("pins"));
}

/* A file of the device, but not a client's: refused, whatever it holds. */
TEST_F(pin, not_a_client)
{
	struct pto_gm_alloc a;
	int none, exec;

	none = pto_open();
	ASSERT_LE(0, none);
	exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, exec);
	ASSERT_EQ(0, pto_gm_alloc(self->aicpu, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EINVAL, pin(self->aicpu, none, a.dev_addr, 1, NULL));
	EXPECT_EQ(-EINVAL, pin(self->aicpu, exec, a.dev_addr, 1, NULL));
	/* the AICPU's own buffers are not a client's */
	EXPECT_EQ(-EINVAL, pin(self->aicpu, self->aicpu, a.dev_addr, 1, NULL));
	EXPECT_EQ(0, pto_gm_free(self->aicpu, a.handle));
	close(none);
	close(exec);
	EXPECT_EQ(0ULL, counter("pins"));
}

/* A client file of another device (needs nr_devices >= 2). */
TEST_F(pin, other_devices_file)
{
	char other[64];
	struct pto_gm_alloc a;
	const char *p = pto_dev_path() + strlen(pto_dev_path());
	int fd;

	while (p > pto_dev_path() && p[-1] >= '0' && p[-1] <= '9')
		p--;
	snprintf(other, sizeof(other), "/dev/pto%lu", strtoul(p, NULL, 10) ^ 1);
	fd = open(other, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "%s: %s", other, strerror(errno));
	ASSERT_EQ(0, pto_set_role(fd, PTO_ROLE_CLIENT));
	ASSERT_EQ(0, pto_gm_alloc(fd, PTO_PAGE, 0, &a));
	EXPECT_EQ(-EXDEV, pin(self->aicpu, fd, a.dev_addr, 1, NULL));
	close(fd);
	EXPECT_EQ(0ULL, counter("pins"));
}

/* The range must lie inside one buffer of that client's file. */
TEST_F(pin, range_outside)
{
	struct pto_gm_alloc a, b, o;
	int other = pto_open_role(PTO_ROLE_CLIENT);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pto_gm_alloc(self->client, 2 * PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &b));
	ASSERT_EQ(0, pto_gm_alloc(other, PTO_PAGE, 0, &o));
	/* another client's buffer, through this client's file */
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client, o.dev_addr, 1, NULL));
	/* past the end, before the start, across two buffers */
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client,
			       a.dev_addr + PTO_PAGE, 2 * PTO_PAGE, NULL));
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client, a.dev_addr - 1, 2,
			       NULL));
	if (b.dev_addr == a.dev_addr + 2 * PTO_PAGE)
		EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client,
				       a.dev_addr, 3 * PTO_PAGE, NULL));
	/* no device address at all, or free GM */
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client, 4096, 1, NULL));
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client,
			       self->info.gm_dev_base + self->info.gm_size -
			       PTO_PAGE, 1, NULL));
	/* length zero, a range that wraps */
	EXPECT_EQ(-EINVAL, pin(self->aicpu, self->client, a.dev_addr, 0, NULL));
	EXPECT_EQ(-EINVAL, pin(self->aicpu, self->client, a.dev_addr, ~0ULL,
			       NULL));
	/* a freed buffer */
	ASSERT_EQ(0, pto_gm_free(self->client, b.handle));
	EXPECT_EQ(-ENOENT, pin(self->aicpu, self->client, b.dev_addr, 1, NULL));
	close(other);
	EXPECT_EQ(0ULL, counter("pins"));
}

/*
 * The defect pins are for: a client frees a buffer it handed the AICPU and
 * another tenant allocates. While the pin exists, the memory and what it
 * holds stay the pinning side's: the new allocation is elsewhere and the
 * new tenant's stores never reach it. Once unpinned, the memory returns
 * (and is zeroed for its next owner).
 */
TEST_F(pin, free_while_pinned_keeps_memory)
{
	__u64 len = 8 * PTO_PAGE, rest;
	struct pto_gm_alloc a, b, c;
	struct pto_gm_pin p;
	int tenant, err;
	__u8 *pa, *pb;

	pa = client_buf(_metadata, self->client, len, 0x1234, &a);
	ASSERT_NE(NULL, pa);
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 64, &p));
	ASSERT_EQ(0, munmap(pa, len));
	ASSERT_EQ(0, pto_gm_free(self->client, a.handle));
	EXPECT_EQ(len, counter("gm_bytes_used"));
	EXPECT_EQ(self->info.gm_size - len, gm_free(self->aicpu));

	/* another tenant takes every byte of GM there is */
	tenant = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, tenant);
	rest = gm_free(tenant);
	ASSERT_EQ(0, pto_gm_alloc(tenant, rest, 0, &b));
	EXPECT_TRUE(b.dev_addr >= a.dev_addr + len ||
		    b.dev_addr + rest <= a.dev_addr)
		TH_LOG("the new buffer %#llx+%llu overlaps the pinned %#llx+%llu",
		       (unsigned long long)b.dev_addr,
		       (unsigned long long)rest,
		       (unsigned long long)a.dev_addr,
		       (unsigned long long)len);
	EXPECT_EQ(-ENOMEM, pto_gm_alloc(tenant, PTO_PAGE, 0, NULL));
	pb = pto_mmap(tenant, rest, b.mmap_offset, PROT_READ | PROT_WRITE,
		      MAP_SHARED, &err);
	ASSERT_NE(NULL, pb);
	memset(pb, 0xff, rest);
	munmap(pb, rest);
	/* what the pinning side sees is what the client left */
	EXPECT_EQ(0U, pto_check(gm_at(self, a.dev_addr), len, 0x1234));

	/* unpinned: the memory returns, and a new owner finds it zeroed */
	ASSERT_EQ(0, unpin(self->aicpu, p.pin));
	EXPECT_EQ(rest, counter("gm_bytes_used"));
	ASSERT_EQ(0, pto_gm_alloc(tenant, len, 0, &c));
	EXPECT_EQ(a.dev_addr, c.dev_addr);
	EXPECT_EQ(0, *(__u64 *)gm_at(self, c.dev_addr));
	EXPECT_EQ(0, *(__u64 *)gm_at(self, c.dev_addr + len - 8));
	close(tenant);
}

/* A client that closes its file (or dies) does not take pinned memory. */
TEST_F(pin, client_close_while_pinned)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p;
	__u8 *pa;

	pa = client_buf(_metadata, self->client, 2 * PTO_PAGE, 0x77, &a);
	ASSERT_NE(NULL, pa);
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 1, &p));
	munmap(pa, 2 * PTO_PAGE);
	close(self->client);
	self->client = -1;
	EXPECT_EQ(2 * PTO_PAGE, counter("gm_bytes_used"));
	EXPECT_EQ(0U, pto_check(gm_at(self, a.dev_addr), 2 * PTO_PAGE, 0x77));
	EXPECT_EQ(0, unpin(self->aicpu, p.pin));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
}

/*
 * A client killed with its mapping and handle, after it handed its file
 * over a unix socket (as to ptod): the same.
 */
TEST_F(pin, client_killed_while_pinned)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p;
	int sv[2], cfd, st;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int c = pto_open_role(PTO_ROLE_CLIENT);

		if (c < 0 || !client_buf(_metadata, c, PTO_PAGE, 0x99, &a) ||
		    write(sv[1], &a, sizeof(a)) != sizeof(a) ||
		    pto_send_fd(sv[1], c))
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(sizeof(a), read(sv[0], &a, sizeof(a)));
	cfd = pto_recv_fd(sv[0]);
	ASSERT_LE(0, cfd);
	EXPECT_EQ(0, pin(self->aicpu, cfd, a.dev_addr, 1, &p));
	close(cfd);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	close(sv[0]);
	close(sv[1]);
	EXPECT_EQ(PTO_PAGE, counter("gm_bytes_used"));
	EXPECT_EQ(0U, pto_check(gm_at(self, a.dev_addr), PTO_PAGE, 0x99));
	EXPECT_EQ(0, unpin(self->aicpu, p.pin));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
}

/* Closing the AICPU file drops all its pins, and the memory they held. */
TEST_F(pin, aicpu_close_drops_pins)
{
	struct pto_gm_alloc a[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pto_gm_alloc(self->client, (i + 1) * PTO_PAGE, 0,
					  &a[i]));
		ASSERT_EQ(0, pin(self->aicpu, self->client, a[i].dev_addr, 1,
				 NULL));
		ASSERT_EQ(0, pin(self->aicpu, self->client, a[i].dev_addr, 1,
				 NULL));
		ASSERT_EQ(0, pto_gm_free(self->client, a[i].handle));
	}
	EXPECT_EQ(8ULL, counter("pins"));
	EXPECT_EQ(10 * PTO_PAGE, counter("gm_bytes_used"));
	munmap(self->gm, self->info.gm_size);
	self->gm = NULL;
	close(self->aicpu);
	self->aicpu = pto_open();
	ASSERT_LE(0, self->aicpu);
	EXPECT_EQ(0ULL, counter("pins"));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
	EXPECT_EQ(self->info.gm_size, gm_free(self->aicpu));
}

/* A pin id is the file's: another AICPU file (later) cannot drop it. */
TEST_F(pin, ids_are_per_file)
{
	struct pto_gm_alloc a;
	struct pto_gm_pin p;
	int next;

	ASSERT_EQ(0, pto_gm_alloc(self->client, PTO_PAGE, 0, &a));
	ASSERT_EQ(0, pin(self->aicpu, self->client, a.dev_addr, 1, &p));
	/* a second AICPU cannot exist at once; a fresh file has no pins */
	next = pto_open();
	ASSERT_LE(0, next);
	EXPECT_EQ(-EBUSY, pto_set_role(next, PTO_ROLE_AICPU));
	close(next);
	EXPECT_EQ(0, unpin(self->aicpu, p.pin));
}

/* Pins of many buffers and many clients; counters back to zero. */
TEST_F(pin, many)
{
	struct pto_gm_alloc a;
	__u32 ids[64];
	int c[4], i;

	for (i = 0; i < 4; i++) {
		c[i] = pto_open_role(PTO_ROLE_CLIENT);
		ASSERT_LE(0, c[i]);
	}
	for (i = 0; i < 64; i++) {
		struct pto_gm_pin p;

		ASSERT_EQ(0, pto_gm_alloc(c[i % 4], PTO_PAGE, 0, &a));
		ASSERT_EQ(0, pin(self->aicpu, c[i % 4], a.dev_addr, PTO_PAGE,
				 &p));
		ids[i] = p.pin;
	}
	EXPECT_EQ(64ULL, counter("pins"));
	for (i = 0; i < 4; i++)
		close(c[i]);
	EXPECT_EQ(64 * PTO_PAGE, counter("gm_bytes_used"));
	for (i = 0; i < 64; i += 2)
		EXPECT_EQ(0, unpin(self->aicpu, ids[i]));
	EXPECT_EQ(32ULL, counter("pins"));
	EXPECT_EQ(32 * PTO_PAGE, counter("gm_bytes_used"));
	for (i = 1; i < 64; i += 2)
		EXPECT_EQ(0, unpin(self->aicpu, ids[i]));
	EXPECT_EQ(0ULL, counter("gm_bytes_used"));
}

TEST_HARNESS_MAIN
